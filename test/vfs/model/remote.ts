// Another device's changes, through the HTTP API, once everything made here is delivered (then
// there is one right outcome: theirs), and what the test waits for: the Vfs showing each change,
// or having applied the change feed up to now.
import { constants as fsc, renameSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Vfs } from "../../../src/vfs/vfs.ts";
import type { Manifest } from "../../helpers/model/runner.ts";
import type { Api } from "../../helpers/server.ts";
import type { Outcome } from "./apply.ts";
import type { VfsOp } from "./ops.ts";
import type { VfsWorld } from "./world.ts";

/** How long the Vfs may take to show a remote change (the feed is a long poll: it comes at once). */
const REMOTE_SHOWN_MS = 10_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Remote {
  files: Map<string, { id: string; content?: string }>;
  folders: Map<string, string>;
}

/** The run's notes and folders on the service, by path below the run's folder. */
async function remoteOf(api: Api, folder: string): Promise<Remote> {
  const { files, folders } = (await api.get("/api/me/files")).body as { files: any[]; folders: any[] };
  const byId = new Map(folders.map((f) => [f.id, f]));
  const pathOf = (id: string | null): string | undefined => {
    if (id === null) return "";
    const f = byId.get(id);
    if (!f) return undefined;
    const parent = pathOf(f.parentFolderId);
    return parent === undefined ? undefined : parent ? `${parent}/${f.name}` : f.name;
  };
  const out: Remote = { files: new Map(), folders: new Map() };
  const prefix = `${folder}/`;
  for (const f of folders) {
    const p = pathOf(f.id);
    if (p === folder) out.folders.set("", f.id);
    else if (p?.startsWith(prefix)) out.folders.set(p.slice(prefix.length), f.id);
  }
  for (const f of files) {
    const dir = pathOf(f.folderId);
    if (dir === folder) out.files.set(f.name, { id: f.id });
    else if (dir?.startsWith(prefix)) out.files.set(`${dir.slice(prefix.length)}/${f.name}`, { id: f.id });
  }
  return out;
}

/** Waits until the Vfs has applied the service's change feed up to now and polls for what follows. */
export async function feedApplied(world: VfsWorld, api: Api): Promise<string | undefined> {
  let cursor = 0;
  for (let more = true; more; ) {
    const page = (await api.get(`/api/v1/changes?cursor=${cursor}&limit=1000`)).body;
    cursor = page.cursor;
    more = page.hasMore;
  }
  const deadline = Date.now() + REMOTE_SHOWN_MS;
  while (world.polledFrom < cursor) {
    if (Date.now() > deadline)
      return `the Vfs's feed polls from ${world.polledFrom}, the service's feed is at ${cursor}`;
    await sleep(5);
  }
  return undefined;
}

export type RemoteOp = Extract<VfsOp, { k: "redit" | "rcreate" | "rrename" | "rdelete" }>;

/**
 * A remote operation, once everything here is delivered; the model follows once the Vfs shows it.
 * "skip" when it has no exact outcome here (nothing at the path on the service, a name taken, a
 * note kept local because its bytes are not text): nothing is done on either side.
 */
export async function remote(
  op: RemoteOp,
  vfs: () => Vfs,
  api: Api,
  folder: string,
  root: string,
  modelDir: string,
  modelTree: Manifest,
): Promise<Outcome | { problems: string[] }> {
  const left = await vfs().drain();
  if (left) return { problems: [`before a remote change: ${left} saves still waiting after a drain`] };
  const r = await remoteOf(api, folder);
  const at = (p: string) => `${root}/${p}`;
  const shows = async (p: string, text?: string) => {
    try {
      const st = await vfs().getattr(at(p));
      if (text === undefined) return true;
      if (st.size !== Buffer.byteLength(text)) return false;
      const fd = await vfs().open(at(p), fsc.O_RDONLY);
      try {
        return (await vfs().read(fd, st.size + 1, 0)).toString() === text;
      } finally {
        await vfs().release(fd);
      }
    } catch {
      return false;
    }
  };
  const until = async (what: string, check: () => Promise<boolean>) => {
    const deadline = Date.now() + REMOTE_SHOWN_MS;
    while (!(await check())) {
      if (Date.now() > deadline) return { problems: [`the Vfs never showed ${what}`] };
      await sleep(5);
    }
    return 0 as const;
  };
  // The service must hold exactly the model's bytes there (a note whose bytes are not text stays local).
  const exact = async (p: string) => {
    const rec = r.files.get(p);
    const want = modelTree.files[p];
    if (!rec || want === undefined) return undefined;
    const body = await api.get(`/api/v1/files/${rec.id}`);
    return body.status === 200 && Buffer.from(String(body.body.content)).toString("base64") === want
      ? rec
      : undefined;
  };
  const dirOf = (p: string) => (p.includes("/") ? p.slice(0, p.lastIndexOf("/")) : "");
  const nameOf = (p: string) => p.slice(p.lastIndexOf("/") + 1);
  switch (op.k) {
    case "redit": {
      const rec = await exact(op.p);
      if (!rec) return "skip";
      const res = await api.put(`/api/v1/files/${rec.id}`, { content: op.text });
      if (res.status !== 200) return { problems: [`remote edit: ${res.status} ${res.text}`] };
      const shown = await until(`the remote edit of ${op.p}`, () => shows(op.p, op.text));
      if (shown) return shown;
      writeFileSync(join(modelDir, op.p), op.text);
      return 0;
    }
    case "rcreate": {
      const folderId = r.folders.get(dirOf(op.p));
      const taken = op.p in modelTree.files || modelTree.dirs.includes(op.p) || r.files.has(op.p);
      if (!folderId || taken) return "skip";
      const res = await api.post("/api/v1/files", { name: nameOf(op.p), content: op.text, folderId });
      if (res.status !== 201 && res.status !== 200)
        return { problems: [`remote create: ${res.status} ${res.text}`] };
      const shown = await until(`the remote create of ${op.p}`, () => shows(op.p, op.text));
      if (shown) return shown;
      writeFileSync(join(modelDir, op.p), op.text);
      return 0;
    }
    case "rrename": {
      const rec = await exact(op.p);
      const folderId = r.folders.get(dirOf(op.to));
      const taken = op.to in modelTree.files || modelTree.dirs.includes(op.to) || r.files.has(op.to);
      if (!rec || !folderId || op.to === op.p || taken) return "skip";
      const res = await api.put(`/api/v1/files/${rec.id}`, { name: nameOf(op.to), folderId });
      if (res.status !== 200) return { problems: [`remote rename: ${res.status} ${res.text}`] };
      const shown = await until(
        `the remote rename of ${op.p} to ${op.to}`,
        async () => (await shows(op.to)) && !(await shows(op.p)),
      );
      if (shown) return shown;
      renameSync(join(modelDir, op.p), join(modelDir, op.to));
      return 0;
    }
    case "rdelete": {
      const rec = await exact(op.p);
      if (!rec) return "skip";
      const res = await api.delete(`/api/v1/files/${rec.id}`);
      if (res.status !== 200 && res.status !== 204)
        return { problems: [`remote delete: ${res.status} ${res.text}`] };
      const shown = await until(`the remote delete of ${op.p}`, async () => !(await shows(op.p)));
      if (shown) return shown;
      unlinkSync(join(modelDir, op.p));
      return 0;
    }
  }
}
