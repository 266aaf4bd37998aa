// The local-only files and folders of the tree (kept on this machine) and their manifest in the
// cache dir: made, recorded (a moment later, or at once when a program closed one it wrote) and
// found again at start.
import { stat } from "node:fs/promises";
import type { Logger } from "../../lib/logger.ts";
import { parentAndName } from "../names.ts";
import { provisionalFolder } from "../provisionalFolder.ts";
import type { DirNode, LocalNode, Tree } from "../tree.ts";
import type { LocalFiles, ManifestEntry } from "./localFiles.ts";

export class LocalNodes {
  private readonly tree: Tree;
  private readonly local: LocalFiles;
  private readonly log: Logger;

  constructor(tree: Tree, local: LocalFiles, log: Logger) {
    this.tree = tree;
    this.local = local;
    this.log = log;
  }

  /** A local-only file made in `dir` (its bytes `body`), recorded a moment later. */
  make(dir: DirNode, name: string, mode: number, body?: Buffer): LocalNode {
    const node: LocalNode = {
      kind: "local",
      name,
      parent: dir,
      blob: this.local.create(body),
      mode,
      size: body?.length ?? 0,
      mtimeMs: this.tree.clock.now(),
    };
    this.tree.addChild(dir, node);
    this.save();
    return node;
  }

  /** What the manifest records: every local-only folder and file of the tree. */
  entries(): ManifestEntry[] {
    const dirs: ManifestEntry[] = [...this.tree.localDirs].map((dir) => ({
      path: this.tree.pathOf(dir),
      blob: "",
      mode: dir.mode ?? 0o755,
      mtimeMs: dir.localMtimeMs ?? (Date.parse(dir.meta?.updatedAt ?? "") || 0),
      atimeMs: dir.localAtimeMs,
      uid: dir.uid,
      gid: dir.gid,
      dir: dir.localOnly,
    }));
    // An attachment only listed (its bytes never read here) comes from the listing again.
    const kept = [...this.tree.locals].filter((node) => !node.attachment?.remoteOnly);
    return dirs.concat(
      kept.map((node) => ({
        path: this.tree.pathOf(node),
        blob: node.blob,
        mode: node.mode,
        mtimeMs: node.mtimeMs,
        atimeMs: node.atimeMs,
        ghostOf: node.ghostOf,
        pendingMeta: node.pendingMeta,
        keptNote: node.keptNote,
        link: node.link,
        special: node.special,
        rdev: node.rdev,
        uid: node.uid,
        gid: node.gid,
        attachment: node.attachment,
      })),
    );
  }

  /** Records the local files now (a program closed one it wrote). */
  flush(): void {
    try {
      this.local.flush();
    } catch (err) {
      this.log.error({ err }, "could not save the local-files manifest");
    }
  }

  /** Records local files in the manifest, a moment later (see LocalFiles.save). */
  save(): void {
    this.local.save(() => this.entries());
  }

  /** A manifest entry found at start, back in the tree (the file's node returned: none for a folder). */
  restore(entry: ManifestEntry): LocalNode | undefined {
    const { parent, name } = parentAndName(entry.path);
    const dir = this.tree.lookup(parent);
    const home = dir?.kind === "dir" ? dir : this.tree.root;
    if (entry.dir) {
      if (home.children.has(name)) return undefined; // made on the service since (by another device)
      const local: DirNode = {
        kind: "dir",
        name,
        parent: home,
        id: null,
        meta: provisionalFolder(name, home, this.tree.clock.now()),
        children: new Map(),
        localOnly: entry.dir,
        mode: entry.mode === 0o755 ? undefined : entry.mode,
        localMtimeMs: entry.mtimeMs || undefined,
        localAtimeMs: entry.atimeMs,
        uid: entry.uid,
        gid: entry.gid,
      };
      this.tree.addChild(home, local);
      return undefined;
    }
    const node: LocalNode = {
      kind: "local",
      name,
      parent: home,
      blob: entry.blob,
      mode: entry.mode,
      size: 0,
      mtimeMs: entry.mtimeMs,
      atimeMs: entry.atimeMs,
      ghostOf: entry.ghostOf,
      pendingMeta: entry.pendingMeta,
      keptNote: entry.keptNote,
      uid: entry.uid,
      gid: entry.gid,
      attachment: entry.attachment,
    };
    if (entry.ghostOf) this.tree.withheld.ghostMade(entry.ghostOf.id);
    this.tree.addChild(home, node);
    if (entry.link !== undefined || entry.special !== undefined) {
      node.link = entry.link;
      node.special = entry.special;
      node.rdev = entry.rdev;
      node.size = entry.link === undefined ? 0 : Buffer.byteLength(entry.link, "utf8");
      return node;
    }
    void stat(entry.blob)
      .then((s) => {
        node.size = s.size;
        this.tree.onChange();
      })
      .catch(() => this.tree.detach(node));
    return node;
  }
}
