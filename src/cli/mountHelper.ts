// mount(8) and umount(8) helpers: `mount -t fuse.txtfs SOURCE DIR -o OPTS` (and fstab lines) run
// /sbin/mount.fuse.txtfs, which runs `txtfs mount-helper SOURCE DIR [-sfnv] [-o OPTS] [-t TYPE]`;
// `umount DIR` runs /sbin/umount.fuse.txtfs, `txtfs umount-helper DIR [-flnrv] [-t TYPE]`.
// Both are turned into the ordinary `txtfs mount ... --daemon` / `txtfs unmount` command lines, so
// every option is checked by the same parsers (a bad one: one line, exit 2, nothing mounted).
import { isAbsolute, resolve } from "node:path";
import { UsageError } from "./options.ts";

/** `-o name` flags of the mount helper -> `txtfs mount` flags. */
const FLAGS: Record<string, string> = {
  ro: "--read-only",
  allow_other: "--allow-other",
  nonempty: "--allow-non-empty",
  write_through: "--write-through",
  trace: "--trace",
};

/** `-o name=value` options -> `txtfs mount` options taking a value (local_dir may repeat). */
const VALUES: Record<string, string> = {
  key_file: "--key-file",
  cache_dir: "--cache-dir",
  cache_size: "--cache-size",
  uid: "--uid",
  gid: "--gid",
  poll_wait: "--poll-wait",
  local_dir: "--local-dir",
  exclude: "--exclude",
  log_file: "--log-file",
  log_level: "--log-level",
};

/** FUSE options passed on as `-o` (checked by the mount's own list). */
const FUSE = [
  "default_permissions",
  "allow_root",
  "umask",
  "max_read",
  "attr_timeout",
  "entry_timeout",
  "debug",
];

/**
 * Options meant for mount(8), systemd or the kernel's generic mount flags, not for txtfs: accepted
 * and ignored, as mount helpers must (`noauto`, `user` and `_netdev` only matter to mount(8) and
 * systemd's fstab generator; FUSE mounts are nosuid,nodev anyway).
 */
const IGNORED = new Set([
  "rw",
  "defaults",
  "auto",
  "noauto",
  "user",
  "users",
  "nouser",
  "owner",
  "group",
  "nofail",
  "_netdev",
  "suid",
  "nosuid",
  "dev",
  "nodev",
  "exec",
  "noexec",
  "sync",
  "async",
  "atime",
  "noatime",
  "relatime",
  "norelatime",
  "strictatime",
  "diratime",
  "nodiratime",
  "lazytime",
  "nolazytime",
  "silent",
  "loud",
]);
const IGNORED_PREFIXES = ["x-", "comment="];

const known = () =>
  [...Object.keys(FLAGS), ...Object.keys(VALUES).map((k) => `${k}=`), ...FUSE, "(and mount(8)'s own)"].join(
    ", ",
  );

/** `SOURCE`: a service URL, or `serve:DATA` for the embedded store in the mount's own process. */
function sourceArgs(source: string): string[] {
  if (source.startsWith("serve:")) {
    const data = source.slice("serve:".length);
    if (!isAbsolute(data)) throw new UsageError(`SOURCE ${source}: serve:DATA needs an absolute path`);
    return ["--serve", "--data", data];
  }
  if (/^https?:\/\//.test(source)) return ["--url", source];
  throw new UsageError(
    `SOURCE ${JSON.stringify(source)}: expected a service URL (https://...) or serve:/path/to/data`,
  );
}

function optionArgs(list: string): string[] {
  const out: string[] = [];
  for (const item of list.split(",").filter(Boolean)) {
    const eq = item.indexOf("=");
    const [name, value] = eq < 0 ? [item, undefined] : [item.slice(0, eq), item.slice(eq + 1)];
    if (IGNORED.has(name) || IGNORED_PREFIXES.some((p) => item.startsWith(p))) continue;
    if (name === "key" || name === "url")
      throw new UsageError(
        name === "key"
          ? "-o key=...: fstab is readable by every user; put the key in a file (chmod 600) and use key_file=PATH"
          : "-o url=...: the service is the SOURCE field (the first one of the fstab line)",
      );
    if (FLAGS[name] && value === undefined) out.push(FLAGS[name]);
    else if (VALUES[name] && value) out.push(VALUES[name], value);
    else if (FUSE.includes(name)) out.push("-o", item);
    else if (FLAGS[name] || VALUES[name])
      throw new UsageError(`-o ${item}: ${FLAGS[name] ? "takes no value" : "needs a value (name=value)"}`);
    else throw new UsageError(`unknown mount option ${JSON.stringify(name)} (known: ${known()})`);
  }
  return out;
}

/**
 * `mount.fuse.txtfs SOURCE DIR [-sfnv] [-N NS] [-o OPTS] [-t TYPE]` -> `txtfs mount` arguments;
 * null for `mount -f` (fake: the options are known ones, nothing is mounted).
 */
export function mountHelperArgs(argv: string[]): string[] | null {
  const positional: string[] = [];
  const options: string[] = [];
  let fake = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "-o") options.push(optionArgs(argv[++i] ?? "").join("\u0000"));
    else if (a.startsWith("-o")) options.push(optionArgs(a.slice(2)).join("\u0000"));
    else if (a === "-t")
      i++; // fuse.txtfs: nothing to choose
    else if (a === "-N") throw new UsageError("-N (another mount namespace) is not supported");
    else if (/^-[sfnvw]+$/.test(a)) {
      // -s sloppy, -n no mtab, -v verbose, -w read-write: nothing to do.
      if (a.includes("f")) fake = true;
    } else if (a.startsWith("-")) throw new UsageError(`unknown mount helper flag ${a}`);
    else positional.push(a);
  }
  if (positional.length !== 2)
    throw new UsageError("usage: mount.fuse.txtfs SOURCE DIR [-o OPTIONS] (SOURCE: URL or serve:/path)");
  const [source, dir] = positional as [string, string];
  const flags = options.flatMap((o) => (o ? o.split("\u0000") : []));
  if (fake) return null;
  // Once mounted, mount(8) returns: the daemon detaches and prints nothing (its log: --log-file).
  return ["mount", resolve(dir), ...sourceArgs(source), ...flags, "--daemon", "--quiet"];
}

/** `umount.fuse.txtfs DIR [-flnrv] [-N NS] [-t TYPE]` -> `txtfs unmount DIR` (flushes first). */
export function umountHelperArgs(argv: string[]): string[] {
  const positional: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "-t" || a === "-N") i++;
    else if (/^-[flnrvi]+$/.test(a))
      continue; // force, lazy, no mtab, remount-ro, verbose: the daemon flushes anyway
    else if (a.startsWith("-")) throw new UsageError(`unknown umount helper flag ${a}`);
    else positional.push(a);
  }
  if (positional.length !== 1) throw new UsageError("usage: umount.fuse.txtfs DIR");
  return ["unmount", resolve(positional[0]!)];
}
