// A reader that goes away (`txtfs status | head -2`) is no failure of the command: its output is
// simply not wanted any more. Node ignores SIGPIPE, so a write then fails with EPIPE, an 'error'
// event nobody handled, and a stack trace; here a command ends quietly instead (exit 0), and a
// long-running one (a mount daemon, a server) keeps running: its stdout only announced it.
import type { Writable } from "node:stream";

export function endQuietlyOnClosedPipe(
  longRunning: boolean,
  streams: Writable[] = [process.stdout, process.stderr],
): void {
  for (const stream of streams) {
    stream.on("error", (err: NodeJS.ErrnoException) => {
      if (err.code !== "EPIPE") throw err;
      if (!longRunning) process.exit(0);
    });
  }
}
