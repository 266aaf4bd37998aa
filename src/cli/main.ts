// The txtfs command line. Results go to stdout, diagnostics to stderr.
import { Command, CommanderError } from "commander";
import { SignInError } from "../client/signIn.ts";
import { MountError } from "../fuse/mount.ts";
import { ServiceError } from "../server/domain/errors.ts";
import { registerAdmin } from "./admin.ts";
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
registerMcp(program);

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) process.exit(err.exitCode);
  if (err instanceof MountError || err instanceof SignInError) {
    process.stderr.write(`txtfs: ${err.message}\n`);
  } else if (err instanceof ServiceError) {
    process.stderr.write(`txtfs: ${err.message}\n${err.resolution}\n`);
  } else {
    process.stderr.write(`txtfs: ${err instanceof Error ? err.message : String(err)}\n`);
  }
  process.exit(1);
}
