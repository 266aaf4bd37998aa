// The mount's options: the -o names txtfs honours (as libfuse spells them), libfuse3's session
// options made of them, and what every answer says of owner and permissions.
import { constants as fs } from "node:fs";
import type { Stat } from "../vfs/vfs.ts";
import { MountError } from "./mountError.ts";

export interface MountOptions {
  allowOther?: boolean;
  /** Mount over a directory that is not empty (libfuse's `nonempty`). */
  allowNonEmpty?: boolean;
  uid?: number;
  gid?: number;
  /** `-o` options passed through, e.g. `{ fsname: "txtfs", umask: "022" }`. */
  extra?: Record<string, string | boolean>;
  trace?: boolean;
}

/** `-o a=b,c`: the options txtfs honours, by their libfuse names (camel-cased as MountOptions.extra's). */
export const PASSTHROUGH: Record<string, string> = {
  allow_other: "allowOther",
  allow_root: "allowRoot",
  default_permissions: "defaultPermissions",
  umask: "umask",
  fsname: "fsname",
  subtype: "subtype",
  max_read: "maxRead",
  debug: "debug",
  uid: "uid",
  gid: "gid",
};

/** libfuse options txtfs sets itself, and why. */
const OWN: Record<string, string> = {
  attr_timeout: "txtfs tells the kernel of every change and sets its timeouts itself",
  entry_timeout: "txtfs tells the kernel of every change and sets its timeouts itself",
};

export function parseMountOptions(values: string[]): Record<string, string | boolean> {
  const out: Record<string, string | boolean> = {};
  for (const item of values.flatMap((v) => v.split(",")).filter(Boolean)) {
    const [key, value] = item.split("=", 2) as [string, string | undefined];
    if (key === "ro") continue; // handled as --read-only by the caller
    const name = PASSTHROUGH[key];
    if (OWN[key]) throw new MountError(`-o ${key} is not supported: ${OWN[key]}`);
    if (!name)
      throw new MountError(
        `unsupported -o option ${JSON.stringify(key)} (supported: ro, ${Object.keys(PASSTHROUGH).join(", ")})`,
      );
    out[name] = value ?? true;
  }
  return out;
}

/**
 * libfuse3's session options from the mount's (PASSTHROUGH's names). uid, gid and umask are
 * options of libfuse's high-level API, which the low-level one lacks: applied to every answer (`shownAs`).
 */
export function sessionOptions(opts: MountOptions): string[] {
  const extra = opts.extra ?? {};
  const text = (v: string | boolean | undefined, dflt: string) => (typeof v === "string" ? v : dflt);
  const o = [
    `fsname=${text(extra.fsname, "txtfs")}`,
    `subtype=${text(extra.subtype, "txtfs")}`,
    "auto_unmount",
  ];
  if (opts.allowOther) o.push("allow_other");
  for (const [name, value] of Object.entries(extra)) {
    if (["fsname", "subtype", "uid", "gid", "umask"].includes(name)) continue;
    if (name === "allowOther") o.push("allow_other");
    else if (name === "allowRoot") o.push("allow_root");
    else if (name === "defaultPermissions") o.push("default_permissions");
    else if (name === "maxRead") o.push(`max_read=${value}`);
    else if (name === "debug") o.push("debug");
    else {
      const given = Object.keys(PASSTHROUGH).find((k) => PASSTHROUGH[k] === name) ?? name;
      throw new MountError(`-o ${given} is not supported`);
    }
  }
  return ["-o", o.join(",")];
}

/** What every answer says of owner and permissions: --uid/--gid and -o uid=,gid=,umask=. */
export function shownAs(opts: MountOptions): ((st: Stat) => Stat) | undefined {
  const num = (v: unknown, base = 10) =>
    v === undefined || v === true ? undefined : Number.parseInt(String(v), base);
  const uid = opts.uid ?? num(opts.extra?.uid);
  const gid = opts.gid ?? num(opts.extra?.gid);
  const umask = num(opts.extra?.umask, 8);
  if (uid === undefined && gid === undefined && umask === undefined) return undefined;
  for (const [what, v] of [
    ["uid", uid],
    ["gid", gid],
    ["umask", umask],
  ] as const)
    if (v !== undefined && !(Number.isInteger(v) && v >= 0)) throw new MountError(`-o ${what}: not a number`);
  return (st) => ({
    ...st,
    uid: uid ?? st.uid,
    gid: gid ?? st.gid,
    // A link's permissions are never checked: it stays 0777, as on a disk.
    mode:
      umask === undefined || (st.mode & fs.S_IFMT) === fs.S_IFLNK
        ? st.mode
        : (st.mode & ~0o777) | (st.mode & 0o777 & ~umask),
  });
}
