// txtfs ideate / context / transcribe / render: the context brain from a shell, against the
// configured service (--url/--key, TXTFS_URL/TXTFS_API_KEY, ~/.config/txtfs/config.json, or the
// signed-in identity). Progress on stderr while a model works; one clear line for 402/409/429/502.
import { readFileSync, writeFileSync } from "node:fs";
import { basename, extname } from "node:path";
import type { Command } from "commander";
import { mountHolding } from "./mountPaths.ts";
import { BrainCliError, call, type Service, service } from "./serviceCall.ts";

interface Listing {
  files: { id: string; name: string; folderId: string | null }[];
  folders: { id: string; name: string; parentFolderId: string | null }[];
}

/** Paths (folder/sub/note.md) of the account's notes and folders, for arguments given as paths. */
async function paths(svc: Service) {
  const listing = await call<Listing>(svc, "GET", "/api/me/files");
  const byId = new Map(listing.folders.map((f) => [f.id, f]));
  const folderPath = (id: string | null): string => {
    const parts: string[] = [];
    for (
      let f = id ? byId.get(id) : undefined;
      f;
      f = f.parentFolderId ? byId.get(f.parentFolderId) : undefined
    )
      parts.unshift(f.name);
    return parts.join("/");
  };
  const folders = new Map(listing.folders.map((f) => [folderPath(f.id), f.id]));
  const files = new Map(
    listing.files.map((f) => [[folderPath(f.folderId), f.name].filter(Boolean).join("/"), f.id]),
  );
  return { folders, files, folderPath };
}

const clean = (p: string) => p.replace(/^\/+|\/+$/g, "");

/**
 * The account path of a note or folder named by its account path ("ideas/a.md") or by its path
 * in a txtfs mount of this user (absolute, or relative to a working directory inside the mount).
 * A mount of another service than the one this command talks to is refused: same path, other notes.
 */
function accountPath(svc: Service, arg: string): string {
  const held = mountHolding(arg);
  if (!held) return clean(arg);
  if (held.mount.url.replace(/\/$/, "") !== svc.url)
    throw new BrainCliError(
      `${arg} is in the mount of ${held.mount.url}, but this command talks to ${svc.url}: set TXTFS_URL (and its key) to that service, or give the note's account path`,
    );
  return held.inner;
}

async function folderIdOf(svc: Service, path: string): Promise<string> {
  if (/^d_/.test(path)) return path;
  const where = accountPath(svc, path);
  const id = (await paths(svc)).folders.get(where);
  if (!id) throw new BrainCliError(`no folder ${path}`);
  return id;
}

const MEDIA: Record<string, string> = {
  ".mp3": "audio/mpeg",
  ".m4a": "audio/mp4",
  ".mp4": "audio/mp4",
  ".wav": "audio/wav",
  ".webm": "audio/webm",
  ".ogg": "audio/ogg",
  ".flac": "audio/flac",
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".webp": "image/webp",
  ".gif": "image/gif",
};

const out = (s: string): void => {
  process.stdout.write(`${s}\n`);
};
const serviceOptions = (cmd: Command) =>
  cmd.option("--url <url>", "service URL (or TXTFS_URL)").option("--key <key>", "API key (or TXTFS_API_KEY)");

type Connection = { file: { name: string }; reason: string };

export function registerBrain(program: Command): void {
  serviceOptions(
    program
      .command("ideate [seed]")
      .description(
        "Grow a new note from SEED (or from what your notes are missing), or grow an existing one with --grow.",
      )
      .option(
        "--grow <path>",
        "grow this note (its path in the account or in a mount, or its id) instead of creating one",
      )
      .option("--json", "print the service's answer as JSON"),
  ).action(async (seed: string | undefined, opts) => {
    const svc = await service(opts);
    const body = seed ? { seed } : {};
    let answer: {
      note: { id: string; name: string; folderId: string | null };
      connections: Connection[];
      sentNotes: unknown[];
      provider: { host: string; model: string };
    };
    if (opts.grow) {
      const where = /^f_/.test(opts.grow) ? undefined : accountPath(svc, opts.grow);
      const id = where === undefined ? opts.grow : (await paths(svc)).files.get(where);
      if (!id) throw new BrainCliError(`no note ${opts.grow}`);
      answer = await call(svc, "POST", `/api/v1/files/${id}/ideate`, { json: body }, "growing the note");
    } else {
      answer = await call(svc, "POST", "/api/v1/ideation", { json: body }, "the brain is writing");
    }
    if (opts.json) return out(JSON.stringify(answer, null, 2));
    const where = (await paths(svc)).folderPath(answer.note.folderId);
    out(
      `${opts.grow ? "grew" : "created"} ${[where, answer.note.name].filter(Boolean).join("/")} (${answer.note.id})`,
    );
    for (const c of answer.connections) out(`  connected to ${c.file.name}: ${c.reason}`);
    out(`  ${answer.sentNotes.length} notes sent to ${answer.provider.host} (${answer.provider.model})`);
  });

  serviceOptions(
    program
      .command("context")
      .description(
        "Your workspace's organisation; --analyze asks the brain for proposals you then --accept or --reject.",
      )
      .option("--analyze [prompt]", "ask for proposals (optionally about PROMPT); needs your own AI key")
      .option("--accept <ids...>", "accept these proposals (applied like your own edits)")
      .option("--reject <ids...>", "reject these proposals")
      .option("--json", "print the service's answer as JSON"),
  ).action(async (opts) => {
    const svc = await service(opts);
    if (opts.accept || opts.reject) {
      const r = await call<{
        results: { id: string; status: string; error: { code: string; message: string } | null }[];
      }>(svc, "POST", "/api/me/context/proposals/review", {
        json: { accept: opts.accept ?? [], reject: opts.reject ?? [] },
      });
      if (opts.json) return out(JSON.stringify(r, null, 2));
      for (const x of r.results)
        out(`${x.id}\t${x.status}${x.error ? `\t${x.error.code}: ${x.error.message}` : ""}`);
      if (r.results.some((x) => x.status === "failed")) process.exitCode = 1;
      return;
    }
    if (opts.analyze !== undefined) {
      const prompt = typeof opts.analyze === "string" ? opts.analyze : undefined;
      const r = await call<{
        summary: string;
        proposals: {
          id: string;
          kind: string;
          target: { id: string | null };
          proposed: object;
          reason: string;
        }[];
      }>(
        svc,
        "POST",
        "/api/me/context",
        { json: prompt ? { prompt } : {} },
        "the brain is reading your notes",
      );
      if (opts.json) return out(JSON.stringify(r, null, 2));
      out(r.summary);
      for (const p of r.proposals)
        out(`${p.id}\t${p.kind}\t${p.target.id ?? "-"}\t${JSON.stringify(p.proposed)}\t${p.reason}`);
      out(`accept with: txtfs context --accept ID...`);
      return;
    }
    const c = await call<{
      workspace: { notes: number; folders: number; tags: number; connections: number };
      coverage: { notes: Record<string, { count: number; share: number }> };
      pendingProposals: number;
      brain: { canExplore: boolean; reason: string | null };
    }>(svc, "GET", "/api/me/context");
    if (opts.json) return out(JSON.stringify(c, null, 2));
    const w = c.workspace;
    out(`${w.notes} notes, ${w.folders} folders, ${w.tags} tags, ${w.connections} connections`);
    for (const [k, v] of Object.entries(c.coverage.notes))
      out(`  ${k}: ${v.count} (${Math.round(v.share * 100)}%)`);
    out(
      `${c.pendingProposals} proposals pending; brain: ${c.brain.canExplore ? "ready" : `off (${c.brain.reason})`}`,
    );
  });

  serviceOptions(
    program
      .command("transcribe <file>")
      .description("Turn a voice memo or a photo of a page into a note.")
      .option("--folder <path>", "folder for the note (its path in the account or in a mount, or its id)")
      .option("--name <name>", "the note's name (default: from the transcript)")
      .option("--tags <list>", "comma-separated tags")
      .option("--json", "print the service's answer as JSON"),
  ).action(async (file: string, opts) => {
    const type = MEDIA[extname(file).toLowerCase()];
    if (!type)
      throw new BrainCliError(
        `cannot tell the type of ${basename(file)}: use one of ${Object.keys(MEDIA).join(" ")}`,
      );
    const svc = await service(opts);
    const q = new URLSearchParams();
    if (opts.folder) q.set("folderId", await folderIdOf(svc, opts.folder));
    if (opts.name) q.set("name", opts.name);
    if (opts.tags) q.set("tags", opts.tags);
    const r = await call<{
      file: { id: string; name: string };
      transcription: { sourceType: string; model: string };
    }>(
      svc,
      "POST",
      `/api/v1/transcriptions?${q}`,
      { raw: readFileSync(file), type },
      `transcribing ${basename(file)}`,
    );
    if (opts.json) return out(JSON.stringify(r, null, 2));
    out(
      `created ${r.file.name} (${r.file.id}) from ${r.transcription.sourceType} with ${r.transcription.model}`,
    );
  });

  serviceOptions(
    program
      .command("render <kind> <paths...>")
      .description(
        "Render notes or folders (paths in the account or in a mount, or ids) into summary, outline, slides, mermaid or html; printed to stdout.",
      )
      .option("--save", "also save it as a note beside the sources")
      .option("--title <title>", "the artifact's title")
      .option("--out <file>", "write it to FILE instead of stdout"),
  ).action(async (kind: string, args: string[], opts) => {
    const svc = await service(opts);
    // Every argument is checked (a mount of another service refused) before the first request.
    const wanted = args.map((a) => ({ a, where: /^[fd]_/.test(a) ? undefined : accountPath(svc, a) }));
    const known = wanted.some((w) => w.where !== undefined) ? await paths(svc) : undefined;
    const fileIds: string[] = [];
    let folderId: string | undefined;
    for (const { a, where } of wanted) {
      const id = where === undefined ? a : (known?.files.get(where) ?? known?.folders.get(where));
      if (!id) throw new BrainCliError(`no note or folder ${a}`);
      if (id.startsWith("d_")) {
        if (folderId) throw new BrainCliError("render takes one folder (and any notes)");
        folderId = id;
      } else fileIds.push(id);
    }
    const r = await call<{ artifact: { content: string }; file: { name: string } | null }>(
      svc,
      "POST",
      "/api/v1/artifacts",
      {
        json: {
          kind,
          ...(fileIds.length ? { fileIds } : {}),
          ...(folderId ? { folderId } : {}),
          ...(opts.title ? { title: opts.title } : {}),
          save: Boolean(opts.save),
        },
      },
      kind === "mermaid" ? undefined : `rendering ${kind}`,
    );
    if (opts.out) writeFileSync(opts.out, r.artifact.content);
    else process.stdout.write(r.artifact.content);
    if (r.file) process.stderr.write(`saved as ${r.file.name}\n`);
  });
}
