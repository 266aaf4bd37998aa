// Per-device availability in the mount (OneDrive's Files On-Demand): `pinned` notes are kept
// complete on disk (and refreshed when they change remotely) so they read and edit with the service
// unreachable; `available` notes are kept on disk once read; `online-only` notes live only in the
// content cache (emptied at each start). States are set through the `user.txtfs.state` attribute (`txtfs pin`/`unpin`),
// recorded on the service for this device, and a folder's state applies to everything below it.
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { TxtfsClient } from "../../client/api.ts";
import type { Logger } from "../../lib/logger.ts";
import type { DirNode, FileNode, LocalNode } from "../tree.ts";

export type Availability = "online-only" | "available" | "pinned";

/** What a state is set on: a note, a folder, or an attachment (a local file bound to the service). */
export type Pinnable = FileNode | DirNode | LocalNode;

/** Its id on the service (an attachment's is its binding's; none before it is created). */
const idOf = (n: Pinnable): string | null => (n.kind === "local" ? (n.attachment?.id ?? null) : n.id);
export const AVAILABILITIES: readonly Availability[] = ["online-only", "available", "pinned"];

interface PinIndex {
  /** Explicit states by remote id (notes, folders and attachments). */
  states: Record<string, Availability>;
  /** ETag of each body kept on disk, by file id. */
  bodies: Record<string, string>;
}

export class Pins {
  private readonly client: TxtfsClient;
  private readonly log: Logger;
  private readonly dir: string;
  private readonly deviceId: string | undefined;
  private index: PinIndex = { states: {}, bodies: {} };
  private saving: Promise<void> = Promise.resolve();
  private refreshing: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  /** Bumped by every local change of a state (a remote copy loaded across it is then stale). */
  private changes = 0;

  constructor(opts: { client: TxtfsClient; cacheDir: string; deviceId?: string; logger: Logger }) {
    this.client = opts.client;
    this.log = opts.logger;
    this.dir = join(opts.cacheDir, "pinned");
    this.deviceId = opts.deviceId;
  }

  async init(): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    try {
      this.index = JSON.parse(await readFile(join(this.dir, "index.json"), "utf8"));
    } catch {
      // first start, or an unreadable index: start empty (bodies are re-fetched)
    }
  }

  /**
   * Keeps pinned bodies current: every few seconds, fetch what changed (bounded work, no busy loop).
   * `alsoKeep`: what else is kept for pinned folders (attachments' bytes), at the same pace.
   */
  startRefreshing(files: () => Iterable<FileNode>, alsoKeep?: () => Promise<void>, everyMs = 3000): void {
    if (this.stopped) return;
    const tick = () => {
      if (this.stopped) return;
      this.refresh(files())
        .then(() => alsoKeep?.())
        .finally(() => {
          if (this.stopped) return;
          this.timer = setTimeout(tick, everyMs);
          this.timer.unref();
        });
    };
    this.timer = setTimeout(tick, 0);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.refreshing;
    await this.saving;
  }

  /** The effective state: the note's own, else the nearest folder's above it, else online-only. */
  stateOf(node: Pinnable): Availability {
    for (let n: Pinnable | null = node; n; n = n.parent) {
      const id = idOf(n);
      const s = id ? this.index.states[id] : undefined;
      if (s) return s;
    }
    return "online-only";
  }

  explicitState(node: Pinnable): Availability | undefined {
    const id = idOf(node);
    return id ? this.index.states[id] : undefined;
  }

  /**
   * Records the state on the service (for this device) and here, then hydrates or frees bodies.
   * On a folder it is recursive: explicit states below it are overridden too.
   */
  async set(node: Pinnable, state: Availability, below: Iterable<Pinnable>): Promise<void> {
    if (!idOf(node)) throw new Error("not yet uploaded");
    const items = [node, ...[...below].filter((n) => n !== node && this.explicitState(n))];
    if (this.deviceId) {
      for (let i = 0; i < items.length; i += 500) {
        await this.client.setDeviceState(
          this.deviceId,
          items.slice(i, i + 500).map((n) => {
            const id = idOf(n) as string;
            if (n.kind === "local") return { attachmentId: id, state };
            return n.kind === "file" ? { fileId: id, state } : { folderId: id, state };
          }),
        );
      }
    }
    this.changes++;
    for (const n of items) this.index.states[idOf(n) as string] = state;
    const files = node.kind === "local" ? [] : [...notesBelow(node)];
    if (state === "online-only")
      for (const f of files) if (f.id && this.index.bodies[f.id]) await this.drop(f.id);
    await this.save();
    if (state === "pinned") await this.refresh(files);
  }

  /** A kept body: the given version, or (offline, `anyVersion`) whatever version is on disk. */
  async read(id: string, etag: string | undefined, anyVersion = false): Promise<Buffer | undefined> {
    const kept = this.index.bodies[id];
    if (!kept || (!anyVersion && kept !== etag)) return undefined;
    return readFile(join(this.dir, id)).catch(() => undefined);
  }

  /** Called with every body the mount fetched: kept on disk if the note is pinned or available. */
  async remember(node: FileNode, etag: string, body: Buffer): Promise<void> {
    if (!node.id || this.stateOf(node) === "online-only" || this.index.bodies[node.id] === etag) return;
    await this.keep(node.id, etag, body);
  }

  forget(id: string): Promise<void> {
    return this.index.bodies[id] ? this.drop(id) : Promise.resolve();
  }

  get keptBodies(): number {
    return Object.keys(this.index.bodies).length;
  }

  /**
   * Fetches every pinned note whose kept body is missing or stale: a folder with several of them in
   * one request (`GET /api/me/folders/:id` carries the bodies), single notes with one GET each.
   */
  refresh(files: Iterable<FileNode>): Promise<void> {
    const run = async () => {
      // Nothing pinned (most mounts): no note to look at. Walking 100,000 of them every 3 s to
      // find that out cost the daemon 0.1-0.2 s of CPU each time.
      if (!Object.values(this.index.states).includes("pinned")) return;
      const stale = new Map<DirNode, FileNode[]>();
      for (const f of files) {
        if (!f.id || !f.meta || this.stateOf(f) !== "pinned" || this.index.bodies[f.id] === f.meta.etag)
          continue;
        const list = stale.get(f.parent) ?? [];
        list.push(f);
        stale.set(f.parent, list);
      }
      for (const [dir, notes] of stale) {
        try {
          if (notes.length >= 2) {
            const wanted = new Set(notes.map((n) => n.id));
            const folder = await this.client.readFolderWithBodies(dir.id ?? "root");
            for (const f of folder.files) {
              if (wanted.has(f.id)) await this.keep(f.id, f.etag, Buffer.from(f.content, "utf8"));
            }
            continue;
          }
          const detail = await this.client.readFile(notes[0]!.id as string);
          if (detail) await this.keep(detail.id, detail.etag, Buffer.from(detail.content, "utf8"));
        } catch (err) {
          this.log.debug({ err, folder: dir.id }, "pinned notes not refreshed (offline?)");
          return; // try again next round
        }
      }
    };
    const previous = this.refreshing ?? Promise.resolve();
    const next = previous.then(run);
    this.refreshing = next.finally(() => {
      if (this.refreshing === next) this.refreshing = undefined;
    });
    return next;
  }

  /** Adopts the states recorded on the service for this device (another client may have set them). */
  async loadRemote(): Promise<void> {
    if (!this.deviceId) return;
    try {
      const before = this.changes;
      const items = await this.client.deviceStates(this.deviceId);
      if (this.changes !== before || this.stopped) return; // a pin/unpin here is newer
      this.index.states = Object.fromEntries(
        items.map((i) => [(i.fileId ?? i.folderId ?? i.attachmentId) as string, i.state]),
      );
      await this.save();
    } catch (err) {
      this.log.debug({ err }, "device states not loaded; using the local copy");
    }
  }

  private async keep(id: string, etag: string, body: Buffer): Promise<void> {
    const tmp = join(this.dir, `${id}.tmp`);
    await writeFile(tmp, body, { mode: 0o600 });
    await rename(tmp, join(this.dir, id));
    this.index.bodies[id] = etag;
    await this.save();
  }

  private async drop(id: string): Promise<void> {
    delete this.index.bodies[id];
    await rm(join(this.dir, id), { force: true });
    await this.save();
  }

  private save(): Promise<void> {
    const json = JSON.stringify(this.index);
    this.saving = this.saving.then(async () => {
      const tmp = join(this.dir, "index.json.tmp");
      await writeFile(tmp, json, { mode: 0o600 });
      await rename(tmp, join(this.dir, "index.json"));
    });
    return this.saving;
  }
}

/** Every note at or below `node`. */
export function* notesBelow(node: FileNode | DirNode): Generator<FileNode> {
  for (const n of itemsBelow(node)) if (n.kind === "file") yield n;
}

/** `node` and every note, folder and attachment below it. */
export function* itemsBelow(node: Pinnable): Generator<Pinnable> {
  yield node;
  if (node.kind !== "dir") return;
  for (const child of node.children.values())
    if (child.kind !== "local" || child.attachment) yield* itemsBelow(child);
}
