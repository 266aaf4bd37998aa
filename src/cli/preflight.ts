// What the mount checks before it mounts, and how it explains a service that will not have it:
// errors that say which URL, which credential and where it came from, and what to do next.
import { readFileSync, statSync } from "node:fs";
import { listMounts } from "../lib/mountRegistry.ts";

// Errors are told apart by name: the client and FUSE modules are loaded only when a mount runs.
const named = (err: unknown, name: string): err is Error & { status?: number; cause?: unknown } =>
  err instanceof Error && err.name === name;

/** Octal escapes of /proc/self/mountinfo (`\040` for a space). */
const unescapeMountinfo = (s: string) =>
  s.replace(/\\(\d{3})/g, (_, o: string) => String.fromCharCode(Number.parseInt(o, 8)));

/** Refuses a mountpoint that is already a live mount: "already mounted by txtfs (pid N)". */
export function checkNotMounted(mountpoint: string): void {
  const own = listMounts().find((m) => m.mountpoint === mountpoint);
  if (own) {
    throw new Error(
      `${mountpoint} is already mounted by txtfs (pid ${own.pid}, ${own.url}); run txtfs unmount ${mountpoint} first`,
    );
  }
  try {
    statSync(mountpoint); // a dead mount (ENOTCONN) is cleaned by the mount itself; only live ones count
  } catch {
    return;
  }
  let mountinfo: string;
  try {
    mountinfo = readFileSync("/proc/self/mountinfo", "utf8");
  } catch {
    return;
  }
  for (const line of mountinfo.split("\n")) {
    const fields = line.split(" ");
    const dash = fields.indexOf("-");
    if (dash < 0 || unescapeMountinfo(fields[4] ?? "") !== mountpoint) continue;
    const [fstype, source] = [fields[dash + 1], unescapeMountinfo(fields[dash + 2] ?? "")];
    const byTxtfs = source === "txtfs" || fstype === "fuse.txtfs";
    throw new Error(
      byTxtfs
        ? `${mountpoint} is already mounted by txtfs (another user's or an unregistered process); unmount it first (fusermount -u ${mountpoint})`
        : `${mountpoint} is already a mount point (${fstype} from ${source}); choose an empty directory`,
    );
  }
}

/** The first request to the service failed: say which URL, which key, and what to try. */
export function explainConnectError(err: unknown, url: string, keyFrom: string): unknown {
  if (named(err, "ApiError") && (err.status === 401 || err.status === 403)) {
    const what = err.status === 401 ? "refused the API key" : "refused this key's scopes";
    return new Error(
      `${url} ${what} from ${keyFrom}: ${err.message}\n` +
        "Check the key, or mint a new one (txtfs admin key add EMAIL on the server, or its /keys page); " +
        "keys go in --key-file, TXTFS_API_KEY or the config file.",
    );
  }
  if (named(err, "NetworkError")) {
    const cause = (err.cause as { code?: string; message?: string } | undefined) ?? {};
    return new Error(
      `cannot reach the service at ${url} (${cause.code ?? cause.message ?? err.message}).\n` +
        "Is it running? txtfs status lists the mounts and the services they use; " +
        "txtfs mount --serve runs a local service in this process.",
    );
  }
  return err;
}
