// Types for fuse-native 2.2.6 (it ships none). Only what txtfs uses.
declare module "fuse-native" {
  type Cb = (err: number, ...rest: unknown[]) => void;
  export interface FuseOptions {
    force?: boolean;
    mkdir?: boolean;
    autoUnmount?: boolean;
    allowOther?: boolean;
    autoCache?: boolean;
    attrTimeout?: number | string;
    /** Seconds between auto_cache checks at open (a string: fuse-native drops a numeric 0). */
    acAttrTimeout?: number | string;
    entryTimeout?: number;
    uid?: number;
    gid?: number;
    fsname?: string;
    subtype?: string;
    debug?: boolean;
    /** Per operation (`default` and names; false: none); fuse-native answers ETIMEDOUT when it passes. */
    timeout?: number | false | Record<string, number | false>;
    [option: string]: unknown;
  }
  export default class Fuse {
    constructor(mnt: string, ops: Record<string, (...args: never[]) => void>, opts?: FuseOptions);
    mount(cb: (err: Error | null) => void): void;
    unmount(cb: (err: Error | null) => void): void;
    static unmount(mnt: string, cb: (err: Error | null) => void): void;
    /** txtfs patch: the attribute cache (ttl > 0) and opendir/releasedir in C; false without the patch. */
    static fastPaths?: (attrTtlMs: number) => boolean;
    /** txtfs patch: drops every cached attribute and listing. */
    static invalidateAttrs?: () => void;
    /** txtfs patch: drops what is cached for `path` (and, with `parent`, for its folder). */
    static invalidatePath?: (path: string, parent: boolean) => void;
    /** txtfs patch: keeps `stat` (cacheable) as what `path` answers until its next change. */
    static putAttrs?: (path: string, stat: object) => void;
    /** txtfs patch: keeps `names` as the listing of the folder `path` until its next change. */
    static putDir?: (path: string, names: string[], kinds?: string[]) => void;
    /**
     * txtfs patch: lookups of names a folder does not have are answered ENOENT in C once its names
     * are known; names ending with `unlistedSuffix` and paths at or below `unlistedSubtree` never
     * are. False without the patch.
     */
    static negativeLookups?: (unlistedSuffix: string, unlistedSubtree: string) => boolean;
    /** txtfs patch: ends the process at once (`_exit(code)`); false without the patch. */
    static exitNow?: (code: number) => boolean;
    /** txtfs patch: the names of the folder `path`, for those lookups only. */
    static putNames?: (path: string, names: string[]) => void;
    /**
     * txtfs patch: writes through handles marked holdable are held in C (up to `max` bytes, none
     * ending past `limit`) and handed over as one write before anything else reaches JavaScript;
     * max 0: no more are held. False without the patch.
     */
    static holdWrites?: (max: number, limit: number) => boolean;
    /** txtfs patch: the held bytes a flush or fsync brought along were applied. */
    static heldLanded?: () => void;
    /** txtfs patch: the writes of handle `fd` may be held in C from now on (or not). */
    static holdable?: (fd: number, on: boolean) => void;
    /**
     * txtfs patch: the held bytes, taken from C (`[fd, offset, bytes]`); undefined when none are
     * held, null while a FUSE thread is handing them over as a write (ask again after it).
     */
    static takeHeld?: () => [number, number, Buffer] | null | undefined;
    /** txtfs patch: called once the FUSE loop ended (unmounted by us or from outside). */
    onLoopExit?: () => void;
  }
  export type { Cb };
}
