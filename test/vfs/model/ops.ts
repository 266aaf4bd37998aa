// The operations of the vfs reference-model test: what programs do through the Vfs facade's POSIX
// calls (the kernel's view of `> p`, `>> p`, dd, truncate, an editor's temp file + rename, vim's
// rename-away save, mv, rm, mkdir, rmdir, setfattr), what another device does through the HTTP
// API, and the test's own steps: wait for delivery, kill -9 and a new Vfs on the same cache dir.
// Paths come from the FUSE model test's small pool, so operations keep hitting the same notes.
import fc from "fast-check";
import { ATTACHED, FOLDERS, PATHS, textArb } from "../../helpers/model/ops.ts";

export type VfsOp =
  | { k: "create"; p: string; text: string } // O_CREAT|O_EXCL
  | { k: "rewrite"; p: string; text: string } // O_TRUNC, or a create
  | { k: "append"; p: string; text: string } // O_APPEND
  | { k: "pwrite"; p: string; off: number; text: string } // a write at an offset, no truncate
  | { k: "truncate"; p: string; size: number }
  | { k: "replace"; p: string; text: string } // write a temp file, rename it over p
  | { k: "vimsave"; p: string; text: string } // rename p to p~, create p, write, fsync, close, unlink p~
  | { k: "mv"; p: string; to: string }
  | { k: "rm"; p: string }
  | { k: "mkdir"; d: string }
  | { k: "rmdir"; d: string }
  | { k: "mvdir"; d: string; to: string }
  | { k: "tag"; p: string; tags: string } // setxattr user.txtfs.tags
  // Bytes of any value (hex; NUL, 0xff, invalid UTF-8): the whole file (off -1: O_TRUNC, or a
  // create) or written at an offset (no truncate); on an attachment's path, or on a note's name
  // that never held text (BLOB_NOTE: an attachment of that name).
  | { k: "bin"; p: string; off: number; hex: string }
  | { k: "rmrf"; d: string } // rm -rf: every file unlinked, every folder removed, deepest first
  // Another device, through the API, once everything here is delivered (so the outcome is exact).
  | { k: "redit"; p: string; text: string }
  | { k: "rcreate"; p: string; text: string }
  | { k: "rrename"; p: string; to: string }
  | { k: "rdelete"; p: string }
  // The test's own steps: wait for delivery (and compare the service); kill -9 and start again.
  | { k: "drain" }
  // Wait until the Vfs has applied the change feed up to now (echoes of our saves too) and waits in
  // its next poll: a change made now reaches it at once.
  | { k: "feed" }
  | { k: "sync" }
  | { k: "kill" }
  // Harness self-test only: changes the vfs side and not the model; a kill whose cache dir loses
  // its journal (what the model test must catch if a kill -9 lost what was acknowledged).
  | { k: "corrupt"; p: string }
  | { k: "lossykill" };

export const LOCAL_KINDS = [
  "create",
  "rewrite",
  "append",
  "pwrite",
  "truncate",
  "replace",
  "vimsave",
  "mv",
  "rm",
  "mkdir",
  "rmdir",
  "mvdir",
  "tag",
  "bin",
  "rmrf",
] as const;

/**
 * Files that are not notes (attachments on the service), moved across folders and over each other;
 * and a note's name only ever written with bytes that are not UTF-8 (an attachment of that name).
 */
export const BIN_PATHS: string[] = [...ATTACHED, "d2/s.csv"];
export const BLOB_NOTE = "d1/blob.txt";

const path = fc.constantFrom(...PATHS);
const folder = fc.constantFrom(...FOLDERS);
const binPath = fc.constantFrom(...BIN_PATHS);
/** Bytes as hex, NUL, 0xff and invalid UTF-8 included (empty too). */
const hexArb = fc.uint8Array({ minLength: 0, maxLength: 300 }).map((b) => Buffer.from(b).toString("hex"));
const binOff = fc.oneof(fc.constant(-1), fc.integer({ min: 0, max: 400 }));
const rec = <K extends string, T>(k: K, fields: { [F in keyof T]: fc.Arbitrary<T[F]> }) =>
  fc.record({ k: fc.constant(k), ...fields } as never) as fc.Arbitrary<{ k: K } & T>;

/** What programs do here, and kill -9: no waits (hundreds of operations a second). */
const LOCAL = [
  { arbitrary: rec("create", { p: path, text: textArb }), weight: 4 },
  { arbitrary: rec("rewrite", { p: path, text: textArb }), weight: 4 },
  { arbitrary: rec("append", { p: path, text: textArb }), weight: 4 },
  { arbitrary: rec("pwrite", { p: path, off: fc.integer({ min: 0, max: 40 }), text: textArb }), weight: 2 },
  { arbitrary: rec("truncate", { p: path, size: fc.integer({ min: 0, max: 30 }) }), weight: 1 },
  { arbitrary: rec("replace", { p: path, text: textArb }), weight: 3 },
  { arbitrary: rec("vimsave", { p: path, text: textArb }), weight: 2 },
  { arbitrary: rec("mv", { p: path, to: path }), weight: 3 },
  { arbitrary: rec("rm", { p: path }), weight: 2 },
  { arbitrary: rec("mkdir", { d: folder }), weight: 3 },
  { arbitrary: rec("rmdir", { d: folder }), weight: 1 },
  { arbitrary: rec("mvdir", { d: folder, to: folder }), weight: 1 },
  { arbitrary: rec("tag", { p: path, tags: fc.constantFrom("alpha", "alpha,beta", "x") }), weight: 1 },
  { arbitrary: fc.constant({ k: "kill" as const }), weight: 1 },
];

/** What programs do to files that are not notes (the attachments): bytes, renames, removals. */
export const ATTACHMENT_OPS = [
  { arbitrary: rec("bin", { p: binPath, off: binOff, hex: hexArb }), weight: 4 },
  // Never UTF-8 (its first byte 0xff): a .txt that never was a note stays an attachment.
  {
    arbitrary: rec("bin", { p: fc.constant(BLOB_NOTE), off: binOff, hex: hexArb.map((h) => `ff${h}`) }),
    weight: 1,
  },
  { arbitrary: rec("truncate", { p: binPath, size: fc.integer({ min: 0, max: 400 }) }), weight: 1 },
  { arbitrary: rec("mv", { p: binPath, to: binPath }), weight: 2 },
  { arbitrary: rec("rm", { p: binPath }), weight: 1 },
  { arbitrary: rec("rmrf", { d: folder }), weight: 1 },
];

/** Another device's changes, and the test's waits for delivery and for the feed. */
const ELSEWHERE = [
  { arbitrary: rec("redit", { p: path, text: textArb }), weight: 2 },
  { arbitrary: rec("rcreate", { p: path, text: textArb }), weight: 1 },
  { arbitrary: rec("rrename", { p: path, to: path }), weight: 1 },
  { arbitrary: rec("rdelete", { p: path }), weight: 1 },
  { arbitrary: fc.constant({ k: "drain" as const }), weight: 1 },
  { arbitrary: fc.constant({ k: "feed" as const }), weight: 1 },
  { arbitrary: fc.constant({ k: "sync" as const }), weight: 1 },
];

/** Local operations and remote ones, with a sync, a drain, a wait for the feed or a kill now and then. */
export const vfsOpArb: fc.Arbitrary<VfsOp> = fc.oneof(...LOCAL, ...ATTACHMENT_OPS, ...ELSEWHERE);
/** Only what programs do here (and kill -9): TXTFS_VFS_MODEL_MIX=local, for fast soaks. */
export const localOpArb: fc.Arbitrary<VfsOp> = fc.oneof(...LOCAL, ...ATTACHMENT_OPS);

const j = JSON.stringify;

/** One line of a printed sequence: the calls it makes. */
export function showVfsOp(op: VfsOp): string {
  switch (op.k) {
    case "create":
      return `create ${op.p} (O_EXCL) + write ${j(op.text)}`;
    case "rewrite":
      return `open ${op.p} O_TRUNC (or create) + write ${j(op.text)}`;
    case "append":
      return `open ${op.p} O_APPEND (or create) + write ${j(op.text)}`;
    case "pwrite":
      return `open ${op.p} (or create) + write ${j(op.text)} at ${op.off}`;
    case "truncate":
      return `truncate ${op.p} to ${op.size}`;
    case "replace":
      return `write ${j(op.text)} to a temp file, rename it over ${op.p}`;
    case "vimsave":
      return `rename ${op.p} ${op.p}~, create ${op.p} + write ${j(op.text)} + fsync, unlink ${op.p}~`;
    case "mv":
      return `rename ${op.p} ${op.to}`;
    case "rm":
      return `unlink ${op.p}`;
    case "mkdir":
      return `mkdir ${op.d}`;
    case "rmdir":
      return `rmdir ${op.d}`;
    case "mvdir":
      return `rename ${op.d}/ ${op.to}/`;
    case "tag":
      return `setxattr ${op.p} user.txtfs.tags ${j(op.tags)}`;
    case "bin":
      return op.off < 0
        ? `open ${op.p} O_TRUNC (or create) + write bytes ${op.hex || "(none)"}`
        : `open ${op.p} (or create) + write bytes ${op.hex || "(none)"} at ${op.off}`;
    case "rmrf":
      return `rm -rf ${op.d}`;
    case "redit":
      return `# remote: PUT ${op.p} content ${j(op.text)}`;
    case "rcreate":
      return `# remote: POST ${op.p} content ${j(op.text)}`;
    case "rrename":
      return `# remote: PUT ${op.p} name/folder of ${op.to}`;
    case "rdelete":
      return `# remote: DELETE ${op.p}`;
    case "feed":
      return "wait until the Vfs has applied the change feed up to now and polls again";
    case "drain":
      return "drain (wait until every save is on the service)";
    case "sync":
      return "drain (txtfs sync), then compare the service";
    case "kill":
      return "kill -9 (the Vfs dropped, its cache dir as it was), a new Vfs on it";
    case "corrupt":
      return `(self-test) append X to ${op.p} on the vfs only`;
    case "lossykill":
      return "(self-test) kill -9, the journal removed from the cache dir left, a new Vfs on it";
  }
}
