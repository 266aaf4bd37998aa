// The txtfs command line. Results go to stdout, diagnostics to stderr.
// Command files define their options at load time but import what their actions need only when
// those run: `txtfs --help` and `txtfs status` never load the server, the store or FUSE.
import { Command, CommanderError } from "commander";
import { registerAdmin } from "./admin.ts";
import { registerBrain } from "./brain.ts";
import { registerCompletion } from "./completion.ts";
import { registerLogin } from "./login.ts";
import { registerMcp } from "./mcp.ts";
import { registerMount } from "./mount.ts";
import { registerPin } from "./pin.ts";
import { registerServe } from "./serve.ts";
import { VERSION } from "./version.ts";

const program = new Command()
  .name("txtfs")
  .description("Remote text notes as files: the service (serve) and its FUSE mount.")
  .version(VERSION)
  .showHelpAfterError()
  .exitOverride();

registerServe(program);
registerAdmin(program);
registerMount(program);
registerPin(program);
registerLogin(program);
registerBrain(program);
registerCompletion(program, VERSION);
registerMcp(program);

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) process.exit(err.exitCode);
  const message = err instanceof Error ? err.message : String(err);
  // A ServiceError (domain rule broken by an admin command) also says how to fix it.
  const resolution = (err as { resolution?: unknown } | null)?.resolution;
  process.stderr.write(`txtfs: ${message}\n${typeof resolution === "string" ? `${resolution}\n` : ""}`);
  process.exit(1);
}
