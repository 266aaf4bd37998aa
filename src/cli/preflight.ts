// What the mount checks before it mounts, and how it explains a service that will not have it:
// errors that say which URL, which credential and where it came from, and what to do next.
import { rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { abortIfDaemonGone, describeGoneAbort } from "../lib/fuseConnection.ts";
import { listMounts } from "../lib/mountRegistry.ts";
import { mountsAt } from "../lib/mountWatch.ts";

// Errors are told apart by name: the client and FUSE modules are loaded only when a mount runs.
const named = (err: unknown, name: string): err is Error & { status?: number; cause?: unknown } =>
  err instanceof Error && err.name === name;

const isTxtfsMount = (m: { fstype: string; source: string }) =>
  m.source === "txtfs" || m.fstype === "fuse.txtfs";

/**
 * Refuses a mountpoint that is already a live mount: "already mounted by txtfs (pid N)". A record
 * of this user's mounts counts while its process runs (listMounts drops dead, dying and reused
 * pids) and its mountpoint is a txtfs mount; a running daemon whose mount is gone is still
 * delivering its saves from the journal a new mount would use, so it is waited for, not joined.
 */
export function checkNotMounted(mountpoint: string): void {
  const here = mountsAt(mountpoint);
  const own = listMounts().find((m) => m.mountpoint === mountpoint);
  if (own && (here === null || here.some(isTxtfsMount))) {
    throw new Error(
      `${mountpoint} is already mounted by txtfs (pid ${own.pid}, ${own.url}); run txtfs unmount ${mountpoint} first`,
    );
  }
  if (own) {
    throw new Error(
      `${mountpoint} was unmounted, and its daemon (pid ${own.pid}) is still delivering its saves; mount again once it has exited (txtfs status)`,
    );
  }
  // A killed daemon's mount whose connection its record names: aborted before anything looks at it
  // (a zombie holding it would make the stat below wait for good); then it is a dead mount.
  const ended = abortIfDaemonGone(mountpoint);
  const said = ended && describeGoneAbort(mountpoint, ended);
  if (said) process.stderr.write(`txtfs: ${said}\n`);
  try {
    statSync(mountpoint); // a dead mount (ENOTCONN) is cleaned by the mount itself; only live ones count
  } catch {
    return;
  }
  const top = here?.at(-1);
  if (!top) return;
  throw new Error(
    isTxtfsMount(top)
      ? `${mountpoint} is already mounted by txtfs (another user's or an unregistered process); unmount it first (fusermount -u ${mountpoint})`
      : `${mountpoint} is already a mount point (${top.fstype} from ${top.source}); choose an empty directory`,
  );
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

/**
 * Refuses a cache dir this process cannot write (its disk read-only, no permission): the journal
 * keeps every save there until the service has it, so a mount on it could keep none. Said in one
 * line before anything is mounted; nothing in the dir is changed.
 */
export function checkCacheDirWritable(cacheDir: string): void {
  const probe = join(cacheDir, `.write-check-${process.pid}`);
  try {
    writeFileSync(probe, "");
    rmSync(probe, { force: true });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOSPC") return; // a full disk: the journal still delivers what it holds
    const why = code === "EROFS" ? "is read-only" : `cannot be written (${code})`;
    throw new Error(
      `the cache dir ${cacheDir} ${why}: saves could not be kept there until they reach the service; make it writable, or mount with --cache-dir on a writable disk (nothing in it was changed)`,
    );
  }
}
