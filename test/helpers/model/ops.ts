// The everyday operations of the model-based mount tests: each is a bash snippet run with the
// tree's root as cwd, the same snippet on the mount and on the model (a local directory), so both
// sides see exactly the same programs. Paths come from a small pool, so operations keep hitting
// notes that exist, were just saved, renamed or deleted.
import { existsSync } from "node:fs";
import fc from "fast-check";
import { q } from "../mount.ts";

export const FOLDERS = ["d1", "d2", "d1/e"] as const;
/** The note paths of the pool: few, so operations keep landing on the notes just saved. */
export const PATHS: string[] = ["a.md", "b.md", "c.txt", "d1/a.md", "d1/b.md", "d2/a.md", "d1/e/a.md"];
/**
 * Names that are not a note's (vim's backup, a `.bak`), for `mv` only: a note renamed to one stays
 * on the service under its name, bound to the file, until the name is taken again (docs/mount.md).
 */
export const ASIDE: string[] = ["old.md~", "d1/x.bak"]; // never what vim or sed -i.bak make of PATHS
/** Files that are not notes (attachments on the service): bytes of any kind, moved across folders. */
export const ATTACHED: string[] = ["p.png", "d1/q.bin", "d1/e/r.pdf"];
/** In a generated operation: "the path of the operation before" (see resolveSticky). */
const SAME = "^";

export type Op =
  | { k: "create"; p: string; text: string } // `set -C; > p`: only a new note
  | { k: "rewrite"; p: string; text: string } // `> p`
  | { k: "append"; p: string; text: string } // `>> p`
  | { k: "pwrite"; p: string; off: number; text: string } // dd conv=notrunc at an offset
  | { k: "par"; p: string; off: number; text: string; gap: number; text2: string } // two such dd at once, side by side
  | { k: "truncate"; p: string; size: number }
  | { k: "vim"; p: string; flavour: "es" | "noneRc" | "backup" | "backupcopy" }
  | { k: "sed"; p: string; bak: boolean }
  | { k: "perl"; p: string }
  | { k: "replace"; p: string; text: string } // python: temp file + os.replace
  | { k: "rsync"; p: string; text: string } // rsync a staged file over the note
  | { k: "mv"; p: string; to: string } // rename, or move to another folder
  | { k: "rm"; p: string }
  | { k: "mkdir"; d: string }
  | { k: "rmdir"; d: string }
  | { k: "rmrf"; d: string }
  | { k: "held"; p: string; inner: "mv" | "sed" | "replace"; from: string; text: string } // while `exec 3<p`
  | { k: "tag"; p: string; tags: string }
  | { k: "sidecar"; p: string; tags: string } // `> p.meta.json` (the mount's sidecar; not listed)
  | { k: "untar"; p: string; text: string } // tar -x of an archive holding p, over the tree
  // Harness self-test only: changes the mount side and not the model.
  | { k: "corrupt"; p: string }
  // Run by the test, not by a shell: `txtfs sync`, or SIGKILL the daemon and mount again.
  | { k: "control"; what: "sync" | "kill" }
  | { k: "bin"; p: string; off: number; hex: string } // bytes of any value: `>` (off -1) or dd at off
  | { k: "binmv"; p: string; to: string }; // an attachment renamed, or moved to another folder

export const OP_KINDS = [
  "create",
  "rewrite",
  "append",
  "pwrite",
  "par",
  "truncate",
  "vim",
  "sed",
  "perl",
  "replace",
  "rsync",
  "mv",
  "rm",
  "mkdir",
  "rmdir",
  "rmrf",
  "held",
  "tag",
  "sidecar",
  "untar",
  "bin",
  "binmv",
] as const;

/** Short texts with plenty of `a`s (vim/sed/perl substitute them) and newlines. */
export const textArb = fc
  .array(fc.constantFrom("apple", "banana", "cat", "a", "b", " ", "\n", "dog\n", "añejo"), {
    minLength: 1,
    maxLength: 8,
  })
  .map((w) => w.join(""));
// Often the same note as the operation before: a save followed at once by another edit of the same
// note is where write-behind races live.
const pathArb = fc.oneof(
  { arbitrary: fc.constant(SAME), weight: 2 },
  { arbitrary: fc.constantFrom(...PATHS), weight: 3 },
);
const anyPathArb = fc.constantFrom(...PATHS);
const asideArb = fc.constantFrom(...ASIDE);
const folderArb = fc.constantFrom(...FOLDERS);
const attachedArb = fc.constantFrom(...ATTACHED);
/** Bytes as hex, NUL, 0xff and invalid UTF-8 included. */
const hexArb = fc.uint8Array({ minLength: 0, maxLength: 300 }).map((b) => Buffer.from(b).toString("hex"));

export const opArb: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: fc.record({ k: fc.constant("create" as const), p: pathArb, text: textArb }), weight: 4 },
  { arbitrary: fc.record({ k: fc.constant("rewrite" as const), p: pathArb, text: textArb }), weight: 3 },
  { arbitrary: fc.record({ k: fc.constant("append" as const), p: pathArb, text: textArb }), weight: 4 },
  {
    arbitrary: fc.record({
      k: fc.constant("pwrite" as const),
      p: pathArb,
      off: fc.integer({ min: 0, max: 40 }),
      text: textArb,
    }),
    weight: 2,
  },
  {
    // Two programs writing one note at the same moment through their own descriptors, at offsets
    // that do not overlap: on any file system both writes are there once both closed.
    arbitrary: fc.record({
      k: fc.constant("par" as const),
      p: pathArb,
      off: fc.integer({ min: 0, max: 30 }),
      text: textArb,
      gap: fc.integer({ min: 0, max: 8 }),
      text2: textArb,
    }),
    weight: 2,
  },
  {
    arbitrary: fc.record({
      k: fc.constant("truncate" as const),
      p: pathArb,
      size: fc.integer({ min: 0, max: 30 }),
    }),
    weight: 1,
  },
  {
    arbitrary: fc.record({
      k: fc.constant("vim" as const),
      p: pathArb,
      flavour: fc.constantFrom("es" as const, "noneRc" as const, "backup" as const, "backupcopy" as const),
    }),
    weight: 4,
  },
  { arbitrary: fc.record({ k: fc.constant("sed" as const), p: pathArb, bak: fc.boolean() }), weight: 3 },
  { arbitrary: fc.record({ k: fc.constant("perl" as const), p: pathArb }), weight: 2 },
  { arbitrary: fc.record({ k: fc.constant("replace" as const), p: pathArb, text: textArb }), weight: 2 },
  { arbitrary: fc.record({ k: fc.constant("rsync" as const), p: pathArb, text: textArb }), weight: 1 },
  { arbitrary: fc.record({ k: fc.constant("mv" as const), p: pathArb, to: anyPathArb }), weight: 3 },
  // With TXTFS_MODEL_ASIDE=1 (soak only, for now: see docs/mount.md, "Proof"): a note renamed
  // aside, and such a file moved on or back.
  ...(process.env.TXTFS_MODEL_ASIDE === "1"
    ? [
        { arbitrary: fc.record({ k: fc.constant("mv" as const), p: pathArb, to: asideArb }), weight: 1 },
        {
          arbitrary: fc.record({
            k: fc.constant("mv" as const),
            p: asideArb,
            to: fc.oneof(anyPathArb, asideArb),
          }),
          weight: 1,
        },
      ]
    : []),
  { arbitrary: fc.record({ k: fc.constant("rm" as const), p: pathArb }), weight: 2 },
  { arbitrary: fc.record({ k: fc.constant("mkdir" as const), d: folderArb }), weight: 3 },
  { arbitrary: fc.record({ k: fc.constant("rmdir" as const), d: folderArb }), weight: 1 },
  { arbitrary: fc.record({ k: fc.constant("rmrf" as const), d: folderArb }), weight: 1 },
  {
    arbitrary: fc.record({
      k: fc.constant("held" as const),
      p: pathArb,
      inner: fc.constantFrom("mv" as const, "sed" as const, "replace" as const),
      from: anyPathArb,
      text: textArb,
    }),
    weight: 2,
  },
  {
    arbitrary: fc.record({
      k: fc.constant("tag" as const),
      p: pathArb,
      tags: fc.constantFrom("alpha", "alpha,beta", "x"),
    }),
    weight: 1,
  },
  {
    arbitrary: fc.record({
      k: fc.constant("sidecar" as const),
      p: pathArb,
      tags: fc.constantFrom("side", "s1,s2"),
    }),
    weight: 1,
  },
  { arbitrary: fc.record({ k: fc.constant("untar" as const), p: pathArb, text: textArb }), weight: 1 },
  {
    arbitrary: fc.record({
      k: fc.constant("bin" as const),
      p: attachedArb,
      off: fc.oneof(fc.constant(-1), fc.integer({ min: 0, max: 400 })),
      hex: hexArb,
    }),
    weight: 3,
  },
  { arbitrary: fc.record({ k: fc.constant("binmv" as const), p: attachedArb, to: attachedArb }), weight: 1 },
  { arbitrary: fc.record({ k: fc.constant("rm" as const), p: attachedArb }), weight: 1 },
  { arbitrary: fc.record({ k: fc.constant("append" as const), p: attachedArb, text: textArb }), weight: 1 },
);

/** The system python (pyenv's shim costs ~100 ms a start on a busy machine). */
export const PYTHON = existsSync("/usr/bin/python3") ? "/usr/bin/python3" : "python3";

export const PY_REPLACE =
  "import os,sys; p=sys.argv[1]; d=os.path.dirname(p) or '.'; t=os.path.join(d,'.tmp-'+os.path.basename(p)); " +
  "f=open(t,'wb'); f.write(sys.argv[2].encode()); f.close(); os.replace(t,p)";

/**
 * The bash snippet of one operation (cwd = the tree's root). `$STAGE` is a scratch directory outside
 * both trees (rsync's source). `side` tells the self-test operation which side it runs on.
 */
export function opScript(op: Op, side: "target" | "model" = "target"): string {
  switch (op.k) {
    case "create":
      return `(set -C; printf %s ${q(op.text)} > ${q(op.p)})`;
    case "rewrite":
      return `printf %s ${q(op.text)} > ${q(op.p)}`;
    case "append":
      return `printf %s ${q(op.text)} >> ${q(op.p)}`;
    case "pwrite":
      return `printf %s ${q(op.text)} | dd of=${q(op.p)} bs=4096 seek=${op.off} oflag=seek_bytes conv=notrunc status=none`;
    case "par": {
      const dd = (text: string, off: number) =>
        `printf %s ${q(text)} | dd of=${q(op.p)} bs=4096 seek=${off} oflag=seek_bytes conv=notrunc status=none`;
      const off2 = op.off + Buffer.byteLength(op.text) + op.gap;
      return `${dd(op.text, op.off)} & a=$!; ${dd(op.text2, off2)} & b=$!; wait $a; r=$?; wait $b && exit $r`;
    }
    case "truncate":
      return `truncate -c -s ${op.size} ${q(op.p)}`;
    case "vim": {
      const sub = `-c '%s/a/b/ge' -c wq`;
      const flags = {
        es: "-es",
        noneRc: "-u NONE -es",
        backup: "-es -c 'set backup'",
        backupcopy: "-es -c 'set backupcopy=yes'",
      }[op.flavour];
      // vim creates a missing file too; only edit existing ones so both sides agree on why. Its
      // stderr is not readable: vim -es reads the answer to a hidden question ("the file changed
      // since reading, write anyway?") from stderr once stdin is exhausted, and would wait forever
      // on a readable one; this way it answers "no", which shows as a save that did not happen.
      return `[ -f ${q(op.p)} ] && vim ${flags} ${sub} ${q(op.p)} </dev/null >/dev/null 2>/dev/null`;
    }
    case "sed":
      return op.bak ? `sed -i.bak 's/b/a/g' ${q(op.p)}` : `sed -i 's/a/b/g' ${q(op.p)}`;
    case "perl":
      return `[ -f ${q(op.p)} ] && perl -pi -e 's/an/AN/g' ${q(op.p)}`;
    case "replace":
      return `${PYTHON} -c ${q(PY_REPLACE)} ${q(op.p)} ${q(op.text)}`;
    case "rsync":
      // --checksum: rsync's quick check (same size and same mtime second: skip) depends on when
      // each side was written, which differs between the mount and the model by design.
      return `printf %s ${q(op.text)} > "$STAGE/src.md" && rsync --checksum "$STAGE/src.md" ${q(op.p)}`;
    case "mv":
      return `mv -T ${q(op.p)} ${q(op.to)}`;
    case "rm":
      return `rm ${q(op.p)}`;
    case "mkdir":
      return `mkdir ${q(op.d)}`;
    case "rmdir":
      return `rmdir ${q(op.d)}`;
    case "rmrf":
      return `rm -rf ${q(op.d)}`;
    case "held": {
      const inner =
        op.inner === "mv"
          ? `mv -T ${q(op.from)} ${q(op.p)}`
          : op.inner === "sed"
            ? `sed -i 's/a/b/g' ${q(op.p)}`
            : `${PYTHON} -c ${q(PY_REPLACE)} ${q(op.p)} ${q(op.text)}`;
      // The shell itself holds the note open (as `less` or `tail -f` would) across the save.
      return `{ exec 3<${q(op.p)}; } 2>/dev/null || exit 9; ${inner}; rc=$?; exec 3<&-; exit $rc`;
    }
    case "tag":
      return `setfattr -n user.txtfs.tags -v ${q(op.tags)} ${q(op.p)}`;
    case "sidecar": {
      const json = q(JSON.stringify({ tags: op.tags.split(",") }));
      // A local directory has no sidecars: the model (and a local target, $NO_SIDECARS) writes the
      // same JSON to scratch space.
      const dest =
        side === "target"
          ? `${q(`${op.p}.meta.json`)}; [ -n "$NO_SIDECARS" ] && d="$STAGE/sidecar.json"`
          : `"$STAGE/sidecar.json"`;
      return `d=${dest}; [ -f ${q(op.p)} ] && printf %s ${json} > "$d"`;
    }
    case "untar":
      // An archive holding p, unpacked over the tree: tar unlinks the file and creates it again.
      return (
        `rm -rf "$STAGE/tx" && mkdir -p "$STAGE/tx/$(dirname ${q(op.p)})" && printf %s ${q(op.text)} > "$STAGE/tx/"${q(op.p)} && ` +
        `tar -cf "$STAGE/t.tar" -C "$STAGE/tx" ${q(op.p)} && tar -xf "$STAGE/t.tar"`
      );
    case "corrupt":
      return side === "target" ? `[ -f ${q(op.p)} ] && printf X >> ${q(op.p)}` : `[ -f ${q(op.p)} ]`;
    case "bin": {
      const bytes = `printf %b ${q(op.hex.replace(/../g, "\\x$&"))}`;
      return op.off < 0
        ? `${bytes} > ${q(op.p)}`
        : `${bytes} | dd of=${q(op.p)} bs=4096 seek=${op.off} oflag=seek_bytes conv=notrunc status=none`;
    }
    case "binmv":
      return `mv -T ${q(op.p)} ${q(op.to)}`;
    case "control":
      return ":";
  }
}

/** Replaces "same path as the operation before" with that path (the first one: a.md). */
export function resolveSticky(ops: Op[]): Op[] {
  let last = PATHS[0]!;
  return ops.map((op) => {
    if (!("p" in op)) return op;
    const p = op.p === SAME ? last : op.p;
    // After a rename the next "same note" is the note where it went; an attachment is never it.
    const next = op.k === "mv" ? op.to : p;
    if (!ATTACHED.includes(next)) last = next;
    return { ...op, p } as Op;
  });
}

/** One line of a printed sequence (runnable in bash from the tree's root). */
export function showOp(op: Op): string {
  if (op.k === "control")
    return op.what === "sync"
      ? "txtfs sync"
      : "kill -9 $(daemon); txtfs mount ... again (same cache and data)";
  return opScript(op, "target");
}

/** The test's own operations on a mount: `txtfs sync`, and a SIGKILL of the daemon + a new mount. */
export const controlArb: fc.Arbitrary<Op> = fc.record({
  k: fc.constant("control" as const),
  what: fc.constantFrom("sync" as const, "kill" as const),
});

/** The paths whose note identity an operation hands on (rename: from -> to), for the identity model. */
export function renameOf(op: Op): { from: string; to: string } | undefined {
  if (op.k === "mv") return { from: op.p, to: op.to };
  if (op.k === "held" && op.inner === "mv") return { from: op.from, to: op.p };
  return undefined;
}
