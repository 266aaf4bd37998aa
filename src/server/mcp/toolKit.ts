// What a group of MCP tools is registered with: the caller, the scope-checked registrar and the
// transactions over the caller's tree of paths (built by buildMcpServer, shared by every group).
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { z } from "zod";
import type { Tx } from "../../store/store.ts";
import type { Actor } from "../domain/actor.ts";
import type { Tree } from "./paths.ts";

export type ToolRegistrar = <S extends z.ZodRawShape>(
  name: string,
  scope: string,
  description: string,
  shape: S,
  readOnly: boolean,
  run: (args: z.infer<z.ZodObject<S>>) => Promise<CallToolResult>,
) => void;

export interface ToolKit {
  actor: Actor;
  /** Registers a tool whose handler runs after its scope check; ServiceErrors become tool errors. */
  tool: ToolRegistrar;
  /** A read over the caller's notes, with their paths. */
  read<T>(fn: (tx: Tx, tree: Tree) => Promise<T>): Promise<T>;
  /** A write, serialized with the caller's other writes, with the paths as they are inside it. */
  write<T>(fn: (tx: Tx, tree: Tree) => Promise<T>): Promise<T>;
  /** `a/b/c` -> the folder id, creating missing folders (mkdir -p; needs folders:write). */
  ensureFolders(tx: Tx, tree: Tree, parts: string[]): Promise<string | null>;
  text(t: string): CallToolResult;
}
