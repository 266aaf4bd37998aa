// sd_notify for `Type=notify` units (deploy/systemd/txtfs-mount@.service.in): READY=1 once mounted,
// STOPPING=1 while flushing. The protocol is one datagram on the AF_UNIX socket named by
// $NOTIFY_SOCKET, and Node has no AF_UNIX datagram sockets (dgram is UDP only, net is streams only;
// a socket file cannot be open()ed), so without a native addon the datagram must come from a child
// process. systemd attributes a datagram to the pid that sent it, hence NotifyAccess=all in the unit
// (a child of the main process is accepted; with the default NotifyAccess=main it would be dropped).
// The child is systemd's own `systemd-notify`, present wherever systemd runs: it follows the message
// with a BARRIER=1 and waits until systemd has processed both (since systemd 246), so systemd has
// seen the sender alive and in our cgroup — the race that made `systemd-notify` unreliable from
// scripts. Nothing happens outside systemd (no NOTIFY_SOCKET).
import { execFile } from "node:child_process";
import type { Logger } from "./logger.ts";

/** How long a notification may take (systemd answers the barrier at once unless it hangs). */
const NOTIFY_TIMEOUT_MS = 5_000;

/** Sends `assignments` (e.g. ["READY=1", "STATUS=mounted"]) to $NOTIFY_SOCKET; never throws. */
export function sdNotify(assignments: string[], log?: Logger): Promise<boolean> {
  if (!process.env.NOTIFY_SOCKET) return Promise.resolve(false);
  // Values must not start a new assignment or option: one line each, no leading dash.
  const args = assignments.map((a) => a.replace(/\n/g, " "));
  return new Promise((resolve) => {
    execFile("systemd-notify", ["--", ...args], { timeout: NOTIFY_TIMEOUT_MS }, (err, _out, stderr) => {
      if (err) {
        log?.warn(
          { err: (stderr || err.message).trim(), sent: args },
          "could not notify systemd (is systemd-notify installed?)",
        );
        resolve(false);
      } else resolve(true);
    });
  });
}
