// The txtfs command line. Results go to stdout, diagnostics to stderr. A bad flag, variable or
// config file is one line naming it (exit 2); a failure of the work itself exits 1.
// Command files define their options at load time but import what their actions need only when
// those run: `txtfs --help` and `txtfs status` never load the server, the store or FUSE.
import { Command, CommanderError } from "commander";
import { registerAdmin } from "./admin.ts";
import { registerBrain } from "./brain.ts";
import { endQuietlyOnClosedPipe } from "./closedPipe.ts";
import { registerCompletion } from "./completion.ts";
import { registerDav } from "./dav.ts";
import { takeKeyArgument } from "./keyArgument.ts";
import { registerLogin } from "./login.ts";
import { registerMcp } from "./mcp.ts";
import { registerMount } from "./mount.ts";
import { registerOpen } from "./open.ts";
import { checkLogLevel, UsageError } from "./options.ts";
import { registerPin } from "./pin.ts";
import { registerServe } from "./serve.ts";
import { VERSION } from "./version.ts";

// Everything txtfs writes (database, journal, caches, logs, keys) is for this user alone:
// directories 0700, files 0600, whatever the shell's umask.
process.umask(0o077);

// A key typed on the command line leaves the process title (and /proc/PID/cmdline) at once.
const { argv, typed } = takeKeyArgument(process.argv);
process.argv = argv;
// mount, serve and mcp run on after their reader is gone; every other command ends quietly.
endQuietlyOnClosedPipe(["mount", "serve", "mcp", "mount-helper"].includes(argv[2] ?? ""));

const program = new Command()
  .name("txtfs")
  .description("Remote text notes as files: the service (serve) and its FUSE mount.")
  .version(VERSION)
  .configureOutput({ outputError: (str, write) => write(`txtfs: ${str.replace(/^error: /, "")}`) })
  .exitOverride();

registerServe(program);
registerAdmin(program);
registerMount(program);
registerDav(program);
registerPin(program);
registerLogin(program);
registerBrain(program);
registerOpen(program);
registerCompletion(program, VERSION);
registerMcp(program);

try {
  checkLogLevel();
  // /sbin/mount.fuse.txtfs and umount.fuse.txtfs (scripts/install-mount-helper) call these.
  const helper = argv[2];
  if (helper === "mount-helper" || helper === "umount-helper") {
    const { mountHelperArgs, umountHelperArgs } = await import("./mountHelper.ts");
    const args = (helper === "mount-helper" ? mountHelperArgs : umountHelperArgs)(argv.slice(3));
    if (!args) process.exit(0); // mount -f (fake): the options are known, nothing is mounted
    argv.splice(2, argv.length, ...args);
  }
  if (typed) {
    process.stderr.write(
      "txtfs: note: --key is readable by other users (ps) until txtfs hides it; prefer --key-file, TXTFS_API_KEY or the config file\n",
    );
  }
  await program.parseAsync(argv);
} catch (err) {
  // Help and --version exit 0; a usage error (bad value, unknown option, missing argument) 2.
  if (err instanceof CommanderError) process.exit(err.exitCode === 0 ? 0 : 2);
  const message = err instanceof Error ? err.message : String(err);
  // A ServiceError (domain rule broken by an admin command) also says how to fix it.
  const resolution = (err as { resolution?: unknown } | null)?.resolution;
  process.stderr.write(`txtfs: ${message}\n${typeof resolution === "string" ? `${resolution}\n` : ""}`);
  // A config file that cannot be used (src/lib/cliConfig.ts) is a usage error too.
  process.exit(err instanceof UsageError || (err as Error | null)?.name === "ConfigError" ? 2 : 1);
}
