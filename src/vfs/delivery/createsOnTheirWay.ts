// Notes and folders this mount is creating on the service right now. The change feed may report
// what such a create made before the create's own answer arrives (a long-poll answers as soon as
// the write commits; the answer to a bulk of 200 can take longer, seconds on a slow link). Applied
// then, the record would show as a second note of the same name beside ours (`n1 (x7f2k).md`)
// until the answer binds the two: `ls` during a `cp -r` saw 200 such names. So the follower holds
// a record that may be one of these creates' until their answer is applied (follower.ts).
import type { ChangeRecord } from "../../client/api.ts";
import type { VfsCore } from "../core.ts";
import type { Tree } from "../tree.ts";
import type { Bulk } from "./bulk.ts";

/** A create's folder: an id, null for the root, or NEW for a folder made by the same request. */
const NEW: unique symbol = Symbol("a folder made by the same request");
type Parent = string | null | typeof NEW;

interface Create {
  kind: "file" | "folder";
  name: string;
  parent: Parent;
}

const keyOf = (kind: Create["kind"], name: string) => `${kind}\0${name}`;

export class CreatesOnTheirWay {
  /** By kind and name: those of the bulk request on its way, and single creates on their way. */
  private bulk = new Map<string, Create[]>();
  private readonly singles = new Map<string, Create[]>();

  /** The bulk request on its way (undefined: none; its answer was applied, or it was refused). */
  setBulk(bulk: Bulk | undefined): void {
    this.bulk = new Map();
    for (const item of bulk?.items ?? []) {
      const body = item.body;
      if (item.op === "file.create" && body?.name !== undefined)
        add(this.bulk, "file", body.name, parentOf(body.folderId));
      if (item.op === "folder.create" && body?.name !== undefined)
        add(this.bulk, "folder", body.name, parentOf(body.parentFolderId));
    }
  }

  /** A create sent on its own: on its way until the returned function is called (its answer applied). */
  single(kind: Create["kind"], name: string, parent: string | null): () => void {
    const create = add(this.singles, kind, name, parent);
    return () => {
      const list = this.singles.get(keyOf(kind, name));
      const at = list?.indexOf(create) ?? -1;
      if (at >= 0) list!.splice(at, 1);
      if (list?.length === 0) this.singles.delete(keyOf(kind, name));
    };
  }

  /**
   * Whether a feed record of a note or folder this mount does not know may be what one of these
   * creates made: same kind and name, in the same folder, or in a folder this mount does not know
   * either (one made by the same request).
   */
  mayHaveMadeRecord(change: ChangeRecord, tree: Tree): boolean {
    if (change.deleted) return false;
    if (change.file && !tree.files.has(change.id))
      return this.mayHaveMade("file", change.file.name, change.file.folderId, tree);
    if (change.folder && !tree.dirs.has(change.id))
      return this.mayHaveMade("folder", change.folder.name, change.folder.parentFolderId, tree);
    return false;
  }

  private mayHaveMade(kind: Create["kind"], name: string, parent: string | null, tree: Tree): boolean {
    const fits = (c: Create) =>
      c.parent === parent || (c.parent === NEW && parent !== null && !tree.dirs.has(parent));
    const key = keyOf(kind, name);
    return (this.bulk.get(key)?.some(fits) ?? false) || (this.singles.get(key)?.some(fits) ?? false);
  }
}

/**
 * A create sent on its own, with what binds its answer to the note or folder shown here: the
 * feed's records of what it made wait until then.
 */
export async function createOnItsWay<T>(
  c: Pick<VfsCore, "createsOnTheirWay" | "follower">,
  kind: "file" | "folder",
  name: string,
  parent: string | null,
  create: () => Promise<T>,
): Promise<T> {
  const answered = c.createsOnTheirWay.single(kind, name, parent);
  try {
    return await create();
  } finally {
    answered();
    c.follower.releaseHeld();
  }
}

function parentOf(ref: string | null | { ref: string } | undefined): Parent {
  return ref !== null && typeof ref === "object" ? NEW : (ref ?? null);
}

function add(map: Map<string, Create[]>, kind: Create["kind"], name: string, parent: Parent): Create {
  const create: Create = { kind, name, parent };
  const key = keyOf(kind, name);
  const list = map.get(key);
  if (list) list.push(create);
  else map.set(key, [create]);
  return create;
}
