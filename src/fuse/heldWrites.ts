// Writes held in C (patches/fuse-native.patch): a shell's `printf ... > new` writes a note in
// several pieces, and each piece was a round trip into JavaScript. Writes through a handle whose
// writes cannot fail here (Vfs.writesCannotFail: a note made or emptied through that open, or an
// O_APPEND handle of a note of known size well below the largest) are answered in C when they
// continue the bytes held there, and handed to JavaScript as one write before any other operation
// reaches JavaScript or is answered from C's caches (a read, a stat, a rename, a write through
// another handle all see them), or along with the handle's flush or fsync (ops.ts). What is held
// when the daemon stops is taken here before its open notes are saved.
import type FuseNative from "fuse-native";
import { NOTE_CONTENT_BYTES } from "../lib/limits.ts";
import type { Vfs } from "../vfs/vfs.ts";

/** The most bytes held at once: a 1 MB note written in 128 KiB pieces crosses once. */
export const HELD_WRITES_MAX_BYTES = 1024 * 1024;

type Native = typeof FuseNative;

/**
 * Turns holding on; false without the patched binding, or with TXTFS_HOLD_WRITES=0 (every write
 * then crosses into JavaScript on its own, as before: for measuring, or to rule this path out).
 */
export function holdWrites(native: Native): boolean {
  if (process.env.TXTFS_HOLD_WRITES === "0") return false;
  return native.holdWrites?.(HELD_WRITES_MAX_BYTES, NOTE_CONTENT_BYTES) ?? false;
}

/**
 * Holds no more writes and gives the vfs what is held (a daemon stopping while a program still
 * has a note open for writing). A FUSE thread handing them over meanwhile sends them as a write
 * of its own, which this waits for.
 */
export async function takeHeldWrites(native: Native, vfs: Vfs): Promise<void> {
  if (!native.holdWrites?.(0, 0)) return;
  for (;;) {
    const held = native.takeHeld?.();
    if (held === undefined) return;
    if (held === null) {
      await new Promise((resolve) => setImmediate(resolve));
      continue;
    }
    const [fd, offset, bytes] = held;
    await vfs.write(fd, bytes, offset);
  }
}
