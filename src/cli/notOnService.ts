// What is not on the service yet in a cache dir no running mount uses (an unmount or a kill while
// the service was unreachable, or a save it refused): saves waiting in the journal, counted from
// disk, and refused saves whose bytes only a local copy holds. Found through the cache dirs mounts
// (and `txtfs dav` servers, named by their URL) recorded and in the default cache root. `txtfs
// status`, `sync` and `unmount` say the same.
import { resolve } from "node:path";
import { knownCacheDirs } from "../lib/cacheDirs.ts";
import { describeDamage, type JournalDamage } from "../lib/journalDamage.ts";
import { readJournal } from "../lib/journalFiles.ts";
import { type MountKind, type MountRecord, recordRoot } from "../lib/mountRegistry.ts";
import { cacheDir } from "../lib/paths.ts";
import {
  type Refusal,
  readUnreportedRefusals,
  readUnsentCopies,
  type UnsentCopy,
} from "../lib/refusedSaves.ts";

export interface UnmountedCacheDir {
  cacheDir: string;
  /** A mount's directory, or the URL a stopped `txtfs dav` served. */
  mountpoint?: string;
  /** Absent: a mount (or a dir nothing recorded). */
  kind?: MountKind;
  url?: string;
  /** Saves waiting in its journal. */
  saves: number;
  unsent: UnsentCopy[];
  /** Refusals that kept nothing, not reported yet (the next sync takes them). */
  refusals: Refusal[];
}

export const savesWord = (n: number) => `${n} ${n === 1 ? "save" : "saves"}`;
/** The verb after savesWord: "1 save waits", "3 saves wait". */
export const waitWord = (n: number) => (n === 1 ? "waits" : "wait");

/** Cache dirs holding what none of `mounts` (the running ones) will send. */
export function notOnServiceUnmounted(mounts: MountRecord[]): UnmountedCacheDir[] {
  const inUse = new Set(mounts.map((m) => resolve(m.cacheDir)));
  return knownCacheDirs(cacheDir())
    .filter((d) => !inUse.has(resolve(d.cacheDir)))
    .map((d) => ({
      ...d,
      saves: readJournal(d.cacheDir).saves.length,
      unsent: readUnsentCopies(d.cacheDir),
      refusals: readUnreportedRefusals(d.cacheDir),
    }))
    .filter((d) => d.saves > 0 || d.unsent.length > 0 || d.refusals.length > 0);
}

const isDavDir = (
  w: Pick<UnmountedCacheDir, "kind" | "mountpoint">,
): w is { kind: "dav"; mountpoint: string } => w.kind === "dav" && w.mountpoint !== undefined;

/** How it is named: its mountpoint, "WebDAV URL" (a stopped `txtfs dav`), or else its cache dir. */
export const leftLabel = (w: UnmountedCacheDir) =>
  isDavDir(w) ? `WebDAV ${w.mountpoint}` : (w.mountpoint ?? w.cacheDir);

/** What its paths are put after: the mountpoint, or a dav server's URL without its last "/". */
export const leftRoot = (w: UnmountedCacheDir) => (isDavDir(w) ? recordRoot(w) : w.mountpoint);

/** "mount DIR again to send them", or "start txtfs dav again with --cache-dir CACHE to send them". */
export function howToSend(w: UnmountedCacheDir): string {
  const them = w.saves === 1 ? "it" : "them";
  return isDavDir(w)
    ? `start txtfs dav again with --cache-dir ${w.cacheDir} to send ${them}`
    : `mount ${w.mountpoint ?? "it"} again to send ${them}`;
}

/** "3 saves for URL wait in DIR; mount MOUNTPOINT again to send them". */
export function describeWaiting(w: UnmountedCacheDir): string {
  return `${savesWord(w.saves)}${w.url ? ` for ${w.url}` : ""} ${waitWord(w.saves)} in ${w.cacheDir}; ${howToSend(w)}`;
}

/**
 * What happened to a refused save and where its bytes are. `cacheDir`: not mounted, the copy is a
 * file of that cache dir until the next mount shows it again.
 */
export function describeUnsent(mountpoint: string | undefined, c: UnsentCopy, cacheDir?: string): string {
  const at = (p: string) => `${mountpoint ?? ""}${p}`;
  return `the service refused the save of ${at(c.path)} (${c.reason}) at ${c.at}; its bytes are kept in ${at(c.keptAs)}${cacheDir ? ` (in ${cacheDir} until it is mounted again)` : ""}: move them where they belong, or delete that copy`;
}

/** A refused change that kept nothing (a rename, a delete): not applied on the service. */
export function describeRefusal(mountpoint: string | undefined, r: Refusal): string {
  return `the service refused a change to ${mountpoint ?? ""}${r.path} (${r.reason}) at ${r.at}; it was not applied, the note is as the service has it`;
}

/** Why a mount's journal cannot be written on this machine, as its daemon says (mountControl.ts). */
export interface JournalFaultInfo {
  code: string;
  message: string;
  path: string;
  since: string;
}

/** "the cache dir's disk is full (ENOSPC in /c, since T)". */
export function describeFault(f: JournalFaultInfo): string {
  return `${f.message} (${f.code} in ${f.path}, since ${f.since})`;
}

/**
 * Why `pending` saves still wait, named truly: the service unreachable, or this machine (the
 * cache dir's disk full, read-only), or both.
 */
export function describeStillWaiting(
  pending: number,
  why: { unreachableSince?: string | null; journal?: { fault?: JournalFaultInfo } },
): string {
  const fault = why.journal?.fault;
  const saves = `${savesWord(pending)} still journalled`;
  // An older daemon says nothing of either: it knew only the service.
  if (why.unreachableSince || (why.unreachableSince === undefined && !fault))
    return `${saves} (the service is unreachable); they are delivered when it returns${fault ? `; and ${describeFault(fault)}: new saves are refused until that is fixed` : ""}`;
  if (fault)
    return `${saves}: ${describeFault(fault)}; they are delivered once the journal can be written there again`;
  return `${saves}; the service answers, they are on their way`;
}

/** A status line for the journal of a mount that cannot be written now. */
export function describeFaultForStatus(f: JournalFaultInfo): string {
  return f.code === "ENOSPC"
    ? `${describeFault(f)}: new saves are refused with ENOSPC until space is freed there; those journalled are still delivered`
    : `${describeFault(f)}: new saves are refused, and delivery waits until the journal can be written again`;
}

/** A status line for a journal found damaged when it was loaded. */
export function describeDamageForStatus(d: JournalDamage): string {
  return `the journal was found damaged at ${d.at}: ${savesWord(d.recovered)} recovered; could not be read: ${describeDamage(d)}; the damaged log is kept as ${d.keptAs} (delete it once looked at)`;
}
