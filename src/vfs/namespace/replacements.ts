// A rename over an existing note is how editors and tools save (sed -i, python's os.replace,
// rsync, vim): the note named keeps its id, metadata and history and takes the new content.
import type { Bodies } from "../bodies.ts";
import type { VfsCore } from "../core.ts";
import type { Delivery } from "../delivery/deliver.ts";
import type { Attributes } from "../meta/attributes.ts";
import type { OpenFiles } from "../open/openFiles.ts";
import type { Saves } from "../open/saves.ts";
import type { FileNode, LocalNode } from "../tree.ts";
import type { Removals } from "./removals.ts";

/** The parts a replacement calls. */
export interface ReplacementsParts {
  attributes: Pick<Attributes, "attrsFrom">;
  bodies: Pick<Bodies, "body">;
  delivery: Pick<Delivery, "reloadNote">;
  openFiles: Pick<OpenFiles, "letGo" | "openReplaced">;
  removals: Pick<Removals, "deleteLater" | "deleteRemote" | "deleteRemoteUnlessChanged" | "deletesLater">;
  saves: Pick<Saves, "upload">;
}

/** What a replacement uses of the mount's shared state. */
export type ReplacementsCore = Pick<VfsCore, "local" | "localNodes" | "log" | "notes" | "tree">;

export class Replacements {
  private readonly attributes: ReplacementsParts["attributes"];
  private readonly bodies: ReplacementsParts["bodies"];
  private readonly delivery: ReplacementsParts["delivery"];
  private readonly openFiles: ReplacementsParts["openFiles"];
  private readonly removals: ReplacementsParts["removals"];
  private readonly saves: ReplacementsParts["saves"];
  private readonly c: ReplacementsCore;

  constructor(c: ReplacementsCore, parts: ReplacementsParts) {
    this.c = c;
    this.attributes = parts.attributes;
    this.bodies = parts.bodies;
    this.delivery = parts.delivery;
    this.openFiles = parts.openFiles;
    this.removals = parts.removals;
    this.saves = parts.saves;
  }

  /**
   * Rename over an existing note is how editors and tools save (sed -i, python's os.replace, rsync,
   * vim): the existing note gets the new content, keeping its id, metadata and history.
   */
  async replaceNote(src: FileNode | LocalNode, target: FileNode): Promise<void> {
    const content = src.kind === "local" ? this.c.local.read(src.blob) : await this.bodies.body(src);
    // A temp file's context and tags go to the note (rsync -X sets them on it); a note moved over
    // another keeps none of its own, also when it is kept local for now (bytes that are not UTF-8),
    // whether the service had it (ghostOf) or not yet (keptNote).
    if (
      src.kind === "local" &&
      src.pendingMeta &&
      !src.keptNote &&
      (!src.ghostOf || src.ghostOf.id === target.id)
    )
      this.c.notes.of(target).metaSet(src.pendingMeta);
    // Its whole content is replaced: the old body is not needed (nor fetched).
    const open = this.openFiles.openReplaced(target, content);
    try {
      await this.saves.upload(open);
    } finally {
      this.openFiles.letGo(open);
    }
    this.attributes.attrsFrom(src, target);
    if (src.kind === "local") {
      this.c.tree.detach(src);
      this.c.local.remove(src.blob);
      this.c.localNodes.save();
      if (src.ghostOf && src.ghostOf.id !== target.id)
        await this.removals.deleteRemote(src.ghostOf.id, undefined);
    } else if (src.id) {
      // Its note goes as an unlink's does, after its target was written: an edit made elsewhere
      // since it was read wins over that delete (the note shows again with it), and the rename
      // stands whole. Failing it now would leave the target holding what was moved while the
      // program sees its rename fail: a save of the target lost.
      const path = this.c.tree.pathOf(src);
      let changedElsewhere = false;
      if (this.removals.deletesLater(src))
        await this.removals.deleteLater("file", src.id, src.meta?.etag ?? null, path);
      else changedElsewhere = !(await this.removals.deleteRemoteUnlessChanged(src.id, src.meta?.etag));
      this.c.tree.removeFile(src.id);
      if (changedElsewhere) {
        this.c.log.warn(
          { path },
          "the note moved over another changed elsewhere in between: it stays, with that change",
        );
        await this.delivery.reloadNote(src.id);
      }
    } else {
      this.c.tree.detach(src);
    }
  }
}
