// What the WebDAV protocol layer needs of what it serves: a tree of files and collections by path,
// with errno-named failures (VfsError-like: `{ errno }`) or DavErrors. Two implement it: the vfs of
// `txtfs dav` (vfsBackend.ts) and the service's domain under `txtfs serve` (serviceBackend.ts).

export interface DavEntry {
  collection: boolean;
  size: number;
  mtime: Date;
  ctime: Date;
  /** A strong ETag, quoted; it changes whenever the bytes do. */
  etag: string;
}

export interface DavBackend {
  /** The entry at `path`, or undefined when nothing is there. */
  stat(path: string): Promise<DavEntry | undefined>;
  /** The names in a collection. */
  list(path: string): Promise<string[]>;
  /** The names and entries of a collection at once, where that is cheaper than list + stat. */
  entries?(path: string): Promise<[string, DavEntry][]>;
  read(path: string): Promise<Buffer>;
  /** Creates or replaces the file's bytes; resolves once they are kept (journalled or stored). */
  write(path: string, data: Buffer): Promise<void>;
  mkdir(path: string): Promise<void>;
  /** Removes a file or an empty collection. */
  remove(path: string, collection: boolean): Promise<void>;
  /** Throws what `remove` would (403, ...) without removing: a DELETE of a tree asks for every item first. */
  checkRemovable?(path: string): Promise<void>;
  /** Renames a file or collection; a file at `to` is replaced (identity of `from` kept). */
  rename(from: string, to: string): Promise<void>;
  /** Sets a file's modification time (a client's X-OC-Mtime); absent: times are the back end's own. */
  setModified?(path: string, mtime: Date): Promise<void>;
  /** Space left and used, for quota-available-bytes / quota-used-bytes; undefined: not known. */
  quota(): Promise<{ available: number; used: number } | undefined>;
  /** Properties the back end keeps itself (txtfs's context, tags, ...): name -> XML text of the value. */
  ownProperties(path: string, collection: boolean): Promise<Map<string, string>>;
  /** The names ownProperties answers, and which of them may be set. */
  ownPropertyNames(collection: boolean): { all: string[]; writable: string[] };
  /** Sets (text) or removes (undefined) one of the back end's own properties. */
  setOwnProperty(path: string, name: string, text: string | undefined): Promise<void>;
}

/** Whether an error from a back end carries an errno name. */
export function errnoOf(err: unknown): string | undefined {
  const errno = (err as { errno?: unknown } | null)?.errno;
  return typeof errno === "string" ? errno : undefined;
}
