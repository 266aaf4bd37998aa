// Keeps the link graph current: a Markdown note's links are read on every save, and links are
// re-resolved when the notes they could name appear, are renamed, move or are deleted. Another
// note's text is never rewritten: a link to a renamed note simply becomes unresolved. Each step
// reads the index by key, so a save costs its own links plus the links to its names.

import type { LinkRow } from "../../../store/repos/links.ts";
import type { FileMetaRow, FileRow } from "../../../store/repos/rows.ts";
import type { Tx } from "../../../store/store.ts";
import { readFrontMatter } from "./frontMatter.ts";
import { parseLinks } from "./linkSyntax.ts";
import { aliasKey, linkKeys, nameKey } from "./resolve.ts";
import { type AttachmentLookup, LinkResolver, NO_ATTACHMENTS } from "./targets.ts";

/** Links and aliases are read from Markdown notes only, as Obsidian does. */
const readsLinks = (file: { type: string }) => file.type === "md";

const aliasesOf = (file: FileRow) => (readsLinks(file) ? readFrontMatter(file.content).aliases : []);
const linksOf = (file: FileRow) => (readsLinks(file) ? parseLinks(file.content) : []);

function namesOf(file: FileRow): { key: string; alias: boolean }[] {
  return [
    { key: nameKey(file.name), alias: false },
    ...aliasesOf(file).map((a) => ({ key: aliasKey(a), alias: true })),
  ];
}

const sameList = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && a.every((x, i) => x === b[i]);

const sameNames = (a: { key: string; alias: boolean }[], b: { key: string; alias: boolean }[]) => {
  const s = (x: { key: string; alias: boolean }[]) =>
    [...new Set(x.map((n) => `${n.alias}:${n.key}`))].sort().join("\n");
  return s(a) === s(b);
};

/** Re-resolves these links (from any note of the account) and stores the targets that changed. */
async function reresolve(tx: Tx, resolver: LinkResolver, links: readonly LinkRow[]): Promise<void> {
  const sources = new Map<string, FileMetaRow | undefined>();
  for (const link of links) {
    if (!sources.has(link.source_id)) sources.set(link.source_id, await tx.files.metaById(link.source_id));
    const source = sources.get(link.source_id);
    if (!source) continue;
    const target = await resolver.resolve(link.path, source.folder_id);
    if (target.targetId !== link.target_id || target.attachmentId !== link.attachment_id)
      await tx.links.setTarget(link.source_id, link.ord, target);
  }
}

/** After a note is created (no `before`, no rows in the index yet) or updated (`before`: its previous row). */
export async function indexNote(
  tx: Tx,
  file: FileRow,
  before?: FileRow,
  attachments: AttachmentLookup = NO_ATTACHMENTS,
): Promise<void> {
  const moved = !before || before.name !== file.name || before.folder_id !== file.folder_id;
  const reread = moved || before.content !== file.content || before.type !== file.type;
  if (!reread) return; // tags, context or availability: nothing a link reads
  // A new note has no rows yet: nothing to replace, and nothing can link to its new id.
  const fresh = !before;
  const resolver = new LinkResolver(tx, file.owner_id, attachments);
  const names = namesOf(file);
  // The index holds what the previous text said (every save writes it), so an edit that keeps the
  // name and the aliases keeps the name rows, and one with no link before or after keeps no link
  // rows: neither is read nor written (a PostgreSQL round trip each).
  const renamed =
    !before ||
    moved ||
    (!sameList(aliasesOf(before), aliasesOf(file)) &&
      !sameNames(
        names,
        (await tx.links.namesOf(file.id)).map((n) => ({ key: n.name_key, alias: n.alias === 1 })),
      ));
  if (renamed) await tx.links.replaceNames(file.id, file.owner_id, names, fresh);

  const parsed = linksOf(file);
  if (!before || parsed.length || linksOf(before).length) {
    const rows: LinkRow[] = [];
    for (const [ord, link] of parsed.entries()) {
      const keys = linkKeys(link.path);
      const target = await resolver.resolve(link.path, file.folder_id);
      rows.push({
        source_id: file.id,
        ord,
        owner_id: file.owner_id,
        embed: link.embed ? 1 : 0,
        path: link.path,
        name_key: keys.name,
        alias_key: keys.alias,
        target_id: target.targetId,
        attachment_id: target.attachmentId,
        text: link.text,
      });
    }
    await tx.links.replaceFrom(file.id, rows, fresh);
  }

  if (renamed) {
    // Links that named this note before, and links that its names could now win.
    const affected = [
      ...(fresh ? [] : await tx.links.to(file.id)),
      ...(await tx.links.byKeys(
        file.owner_id,
        names.filter((n) => !n.alias).map((n) => n.key),
        names.filter((n) => n.alias).map((n) => n.key),
      )),
    ].filter((l) => l.source_id !== file.id);
    await reresolve(tx, resolver, affected);
  }
}

/**
 * After files that are not notes appeared, were renamed or moved, or went (an attachment store's
 * hook): links by these name keys (lower case, NFC, extension kept) find their target again.
 */
export async function relinkNames(
  tx: Tx,
  ownerId: string,
  nameKeys: readonly string[],
  attachments: AttachmentLookup,
): Promise<void> {
  await reresolve(
    tx,
    new LinkResolver(tx, ownerId, attachments),
    await tx.links.byKeys(ownerId, nameKeys, []),
  );
}

/** Before a note is deleted: its own rows go, and links to it find another note or none. */
export async function forgetNote(tx: Tx, file: FileMetaRow): Promise<void> {
  const pointing = (await tx.links.to(file.id)).filter((l) => l.source_id !== file.id);
  await tx.links.deleteNote(file.id);
  await reresolve(tx, new LinkResolver(tx, file.owner_id), pointing);
}

/** After a folder is renamed, moved or deleted: the notes below it have new paths. */
export async function reindexFolder(tx: Tx, ownerId: string, folderIds: readonly string[]): Promise<void> {
  const all: string[] = [];
  for (let queue = [...folderIds]; queue.length; ) {
    const id = queue.shift()!;
    all.push(id);
    for (const child of await tx.folders.children(id)) queue.push(child.id);
  }
  await reindexPlaces(
    tx,
    ownerId,
    (await tx.files.inFolders(all, false)).map((f) => f.id),
  );
}

/** Notes whose path changed: their own links, the links to them and the links their names could win. */
export async function reindexPlaces(tx: Tx, ownerId: string, fileIds: readonly string[]): Promise<void> {
  if (!fileIds.length) return;
  const resolver = new LinkResolver(tx, ownerId);
  const seen = new Set<string>();
  const links: LinkRow[] = [];
  const add = (rows: LinkRow[]) => {
    for (const r of rows) {
      const k = `${r.source_id}\u0000${r.ord}`;
      if (!seen.has(k)) {
        seen.add(k);
        links.push(r);
      }
    }
  };
  for (const id of fileIds) {
    add(await tx.links.from(id));
    add(await tx.links.to(id));
    const names = await tx.links.namesOf(id);
    add(
      await tx.links.byKeys(
        ownerId,
        names.filter((n) => !n.alias).map((n) => n.name_key),
        names.filter((n) => n.alias).map((n) => n.name_key),
      ),
    );
  }
  await reresolve(tx, resolver, links);
}
