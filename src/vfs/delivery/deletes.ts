// Deletes made here, delivered: a note's with If-Match its last version (or our own save on top
// of it), a folder's; "gone" is delivered too. What the service kept instead (it changed remotely,
// or refused) shows again.
import { ApiError, withoutContent } from "../../client/api.ts";
import type { Conflicts } from "../conflicts.ts";
import type { VfsCore } from "../core.ts";
import type { Claims } from "../local/claims.ts";
import type { DeliveryRounds } from "./deliveryRounds.ts";
import type { JournalEntry } from "./journal.ts";
import type { NoteSend } from "./noteSend.ts";

export interface DeletesParts {
  claims: Pick<Claims, "dropTombstone">;
  conflicts: Pick<Conflicts, "ownSuccessor">;
  noteSend: Pick<NoteSend, "reloadNote">;
  rounds: Pick<DeliveryRounds, "logDelivered">;
}

export type DeletesCore = Pick<VfsCore, "client" | "journal" | "log" | "times" | "tree">;

export class Deletes {
  private readonly c: DeletesCore;
  private readonly claims: DeletesParts["claims"];
  private readonly conflicts: DeletesParts["conflicts"];
  private readonly noteSend: DeletesParts["noteSend"];
  private readonly rounds: DeletesParts["rounds"];

  constructor(c: DeletesCore, parts: DeletesParts) {
    this.c = c;
    this.claims = parts.claims;
    this.conflicts = parts.conflicts;
    this.noteSend = parts.noteSend;
    this.rounds = parts.rounds;
  }

  /** The ETag a delete of a note is based on: what we last saw, or our own save on top of it. */
  base(entry: JournalEntry): string | undefined {
    if (!entry.baseEtag) return undefined;
    return this.conflicts.ownSuccessor(entry.fileId!, { etag: entry.baseEtag, hash: "" })?.etag;
  }

  /** One delete to the service (a bulk of one). Throws what the service answered, except "gone". */
  async send(entry: JournalEntry): Promise<void> {
    const id = entry.fileId!;
    try {
      if (entry.delete === "file") await this.c.client.deleteFile(id, this.base(entry));
      else await this.c.client.deleteFolder(id);
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 404)) throw err;
    }
    await this.delivered(entry);
  }

  async delivered(entry: JournalEntry): Promise<void> {
    this.claims.dropTombstone(entry.fileId!);
    await this.c.journal.done(entry);
    this.c.times.delete(entry.fileId!);
    this.c.tree.withheld.deleteEnded(entry.fileId!, entry.delete === "file" ? "note" : "folder");
    this.c.tree.withheld.ghostGone(entry.fileId!);
    this.rounds.logDelivered(entry.path, "delete delivered");
  }

  /** The service kept the item (it changed remotely before the delete went, or the delete was refused): it shows again. */
  async undone(entry: JournalEntry, why: string): Promise<void> {
    this.c.log.warn({ path: entry.path, why }, "delete not applied; the item shows again");
    this.claims.dropTombstone(entry.fileId!);
    await this.c.journal.done(entry);
    const id = entry.fileId!;
    this.c.tree.withheld.deleteEnded(id, false);
    this.c.tree.withheld.ghostGone(id); // a renamed-away note shows again under its own name
    if (entry.delete === "file") await this.noteSend.reloadNote(id);
    else {
      const folder = await this.c.client.readFolderWithBodies(id).catch(() => undefined);
      if (folder) {
        const { files, ...meta } = folder;
        this.c.tree.upsertFolder(meta);
        for (const f of files) this.c.tree.upsertFile(withoutContent(f));
      }
    }
  }
}
