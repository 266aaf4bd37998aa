// COPY and MOVE (RFC 4918 sections 9.8, 9.9): Destination on this server, Overwrite (T by default),
// Depth (COPY: 0 or infinity; MOVE: infinity). A file MOVEd over a file is one rename: the vfs keeps
// the moved note's identity (the save pattern PUT temp + MOVE over).
import { checkIf, locksOnChange, mustHold } from "../conditions.ts";
import { DavError } from "../errors.ts";
import { destinationPath, isWithin, join } from "../paths.ts";
import type { Answer, DavRequest, DavSite } from "../request.ts";
import { header } from "../request.ts";
import { parentMustBeCollection, removeTree } from "./write.ts";

export async function copyOrMove(req: DavRequest, move: boolean): Promise<Answer> {
  const { site } = req;
  const dest = destinationPath(header(req, "destination"), header(req, "host"), req.prefix);
  const entry = await site.backend.stat(req.path);
  if (!entry) throw new DavError(404);
  const depth = (header(req, "depth") ?? "infinity").toLowerCase();
  if (move ? depth !== "infinity" : depth !== "0" && depth !== "infinity")
    throw new DavError(400, `${req.method} with Depth ${depth} is not allowed`);
  if (dest === req.path) throw new DavError(403, "the source and the destination are the same");
  if (entry.collection && isWithin(dest, req.path))
    throw new DavError(409, "a collection cannot go inside itself");
  if (move && req.path === "/") throw new DavError(403, "the root cannot be moved");
  const overwrite = (header(req, "overwrite") ?? "T").toUpperCase() !== "F";
  const existing = await site.backend.stat(dest);
  if (existing && !overwrite) throw new DavError(412, "the destination exists and Overwrite is F");
  await parentMustBeCollection(req, dest);
  await checkIf(req);
  if (move) mustHold(req, locksOnChange(req, req.path, true));
  mustHold(req, locksOnChange(req, dest, true));
  // A file over a file is replaced by the rename itself; anything else goes first.
  const replacedByRename = move && existing && !existing.collection && !entry.collection;
  if (existing && !replacedByRename) await removeTree(site, dest, existing.collection);
  if (move) {
    await site.backend.rename(req.path, dest);
    site.locks.dropWithin(req.path);
    if (existing) site.locks.dropWithin(dest);
    await site.props.carry(req.path, dest, false);
  } else {
    await copyTree(site, req.path, dest, entry.collection, depth === "infinity");
    await site.props.carry(req.path, dest, true, depth === "infinity");
  }
  return { status: existing ? 204 : 201 };
}

async function copyTree(site: DavSite, from: string, to: string, collection: boolean, deep: boolean) {
  if (!collection) return site.backend.write(to, await site.backend.read(from));
  await site.backend.mkdir(to);
  if (!deep) return;
  for (const name of await site.backend.list(from)) {
    const entry = await site.backend.stat(join(from, name));
    if (entry) await copyTree(site, join(from, name), join(to, name), entry.collection, true);
  }
}
