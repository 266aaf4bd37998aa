// The vfs's modules import each other without a cycle at run time: each part is built from the
// parts below it, so no module needs another one that is not finished loading. Imports that are
// only types (`import type`, or every name marked `type`) are erased and cannot form one.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../../src/vfs");

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

/** The modules inside src/vfs that `file` needs at run time. */
function runtimeImports(file: string, text: string): string[] {
  const found: string[] = [];
  const statement = /^(?:import|export)\s+(type\s+)?([^;]*?)\s+from\s+"(\.[^"]+)"/gms;
  for (const [, typeOnly, clause = "", target = ""] of text.matchAll(statement)) {
    if (typeOnly) continue;
    const named = /^\{([^}]*)\}$/s.exec(clause.trim());
    const names = (named?.[1] ?? "")
      .split(",")
      .map((n) => n.trim())
      .filter(Boolean);
    if (named && names.length && names.every((n) => n.startsWith("type "))) continue;
    const path = resolve(dirname(file), target);
    if (path.startsWith(ROOT)) found.push(path);
  }
  for (const [, target = ""] of text.matchAll(/^import\s+"(\.[^"]+)"/gm))
    found.push(resolve(dirname(file), target));
  return found;
}

/** A cycle in the graph, as the files along it, or undefined. */
function findCycle(graph: Map<string, string[]>): string[] | undefined {
  const state = new Map<string, "open" | "done">();
  const stack: string[] = [];
  const visit = (node: string): string[] | undefined => {
    if (state.get(node) === "done") return undefined;
    if (state.get(node) === "open") return [...stack.slice(stack.indexOf(node)), node];
    state.set(node, "open");
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      const cycle = visit(next);
      if (cycle) return cycle;
    }
    stack.pop();
    state.set(node, "done");
    return undefined;
  };
  for (const node of graph.keys()) {
    const cycle = visit(node);
    if (cycle) return cycle;
  }
  return undefined;
}

describe("vfs import graph", () => {
  it("has no cycle at run time", () => {
    const graph = new Map<string, string[]>();
    for (const file of sources(ROOT)) graph.set(file, runtimeImports(file, readFileSync(file, "utf8")));
    const cycle = findCycle(graph)?.map((f) => relative(ROOT, f));
    expect(cycle, cycle?.join(" -> ")).toBeUndefined();
  });

  it("sees a cycle where there is one, and not through types", () => {
    const a = join(ROOT, "a.ts");
    const b = join(ROOT, "b.ts");
    expect(runtimeImports(a, 'import { B } from "./b.ts";\n')).toEqual([b]);
    expect(runtimeImports(a, 'import type { B } from "./b.ts";\n')).toEqual([]);
    expect(runtimeImports(a, 'import { type B, type C } from "./b.ts";\n')).toEqual([]);
    expect(runtimeImports(a, 'import {\n  type B,\n  C,\n} from "./b.ts";\n')).toEqual([b]);
    expect(runtimeImports(a, 'export { B } from "./b.ts";\n')).toEqual([b]);
    const graph = new Map([
      [a, [b]],
      [b, [a]],
    ]);
    expect(findCycle(graph)).toEqual([a, b, a]);
  });
});
