// Fingerprints of what the kernel was given (attributes, a folder's names), kept per node to tell
// whether a report changed anything: numbers, not strings (a key per node
// must stay small when the kernel holds a hundred thousand).
// Two 32-bit FNV-1a lanes with different seeds make 53 bits: a change is missed only if both collide.
import type { Stat } from "../../vfs/vfs.ts";

const PRIME = 0x01000193;

class Lanes {
  a = 0x811c9dc5;
  b = 0x050c5d1f;
  word(x: number): void {
    this.a = Math.imul(this.a ^ (x & 0xffffffff), PRIME);
    this.b = Math.imul(this.b ^ ((x & 0xffffffff) + 0x9e3779b9), PRIME);
  }
  number(n: number): void {
    this.word(n % 0x100000000);
    this.word(Math.floor(n / 0x100000000));
  }
  get value(): number {
    return (this.a >>> 0) * 0x200000 + ((this.b >>> 0) & 0x1fffff);
  }
}

export function attrKey(st: Stat): number {
  const l = new Lanes();
  for (const n of [st.mode, st.size, st.mtime.getTime(), st.ctime.getTime(), st.nlink, st.uid, st.gid])
    l.number(n);
  return l.value;
}

export function listKey(names: readonly string[]): number {
  const l = new Lanes();
  for (const name of names) {
    for (let i = 0; i < name.length; i++) l.word(name.charCodeAt(i));
    l.word(0x10000); // between names: not a UTF-16 unit
  }
  return l.value;
}
