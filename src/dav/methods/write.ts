// PUT, DELETE and MKCOL. A PUT answers once its bytes are kept by the back end (the vfs's journal
// or the store): what a client is told was saved, stays saved.
import { checkIf, checkMatch, locksOnChange, mustHold } from "../conditions.ts";
import { DavError } from "../errors.ts";
import { join, parentOf } from "../paths.ts";
import type { Answer, DavRequest, DavSite } from "../request.ts";
import { header } from "../request.ts";

export async function put(req: DavRequest): Promise<Answer> {
  const { backend } = req.site;
  if (header(req, "content-range")) throw new DavError(400, "a PUT with Content-Range is not supported");
  const entry = await backend.stat(req.path);
  if (entry?.collection) throw new DavError(405, "a collection has no bytes to PUT");
  await parentMustBeCollection(req, req.path);
  await checkIf(req);
  mustHold(req, locksOnChange(req, req.path, false));
  checkMatch(req, entry, false);
  await backend.write(req.path, req.body);
  // A new resource has no dead properties, even if its path's last one went another way (the API).
  if (!entry) await req.site.props.forget(req.path);
  const mtime = clientMtime(req);
  if (mtime && backend.setModified) await backend.setModified(req.path, mtime);
  const after = await backend.stat(req.path);
  // The new ETag and time: davfs2 takes them as its cached copy's, with no request to learn them.
  const headers: Answer["headers"] = after
    ? { ETag: after.etag, "Last-Modified": after.mtime.toUTCString() }
    : {};
  if (mtime && backend.setModified) headers["X-OC-MTime"] = "accepted";
  return { status: entry ? 204 : 201, headers };
}

/** X-OC-Mtime (ownCloud's, which rclone and others send): the file's time, seconds since the epoch. */
function clientMtime(req: DavRequest): Date | undefined {
  const h = header(req, "x-oc-mtime");
  if (h === undefined || !/^\d+(\.\d+)?$/.test(h.trim())) return undefined;
  return new Date(Number(h) * 1000);
}

export async function mkcol(req: DavRequest): Promise<Answer> {
  const { backend } = req.site;
  if (req.body.length) throw new DavError(415, "MKCOL with a body is not supported");
  if (await backend.stat(req.path)) throw new DavError(405, "something is already there");
  await parentMustBeCollection(req, req.path);
  await checkIf(req);
  mustHold(req, locksOnChange(req, req.path, false));
  await backend.mkdir(req.path);
  await req.site.props.forget(req.path);
  return { status: 201 };
}

export async function del(req: DavRequest): Promise<Answer> {
  const { site } = req;
  if (req.path === "/") throw new DavError(403, "the root cannot be deleted");
  const entry = await site.backend.stat(req.path);
  if (!entry) throw new DavError(404);
  const depth = header(req, "depth");
  if (entry.collection && depth !== undefined && depth.toLowerCase() !== "infinity")
    throw new DavError(400, "DELETE of a collection is depth infinity");
  await checkIf(req);
  mustHold(req, locksOnChange(req, req.path, true));
  await removeTree(site, req.path, entry.collection);
  return { status: 204 };
}

/**
 * Removes a file or a collection and everything in it, with its locks and dead properties. Where
 * the back end can tell beforehand what it would refuse, everything is asked first: a DELETE that
 * is refused removes nothing, rather than what came before the refusal.
 */
export async function removeTree(site: DavSite, path: string, collection: boolean): Promise<void> {
  if (site.backend.checkRemovable) await checkTree(site, path, collection);
  await removeAll(site, path, collection);
}

async function checkTree(site: DavSite, path: string, collection: boolean): Promise<void> {
  await site.backend.checkRemovable!(path);
  if (!collection) return;
  for (const name of await site.backend.list(path)) {
    const entry = await site.backend.stat(join(path, name));
    if (entry) await checkTree(site, join(path, name), entry.collection);
  }
}

async function removeAll(site: DavSite, path: string, collection: boolean): Promise<void> {
  if (collection) {
    for (const name of await site.backend.list(path)) {
      const child = join(path, name);
      const entry = await site.backend.stat(child);
      if (entry) await removeAll(site, child, entry.collection);
    }
  }
  await site.backend.remove(path, collection);
  await site.props.forget(path);
  site.locks.dropWithin(path);
}

/** 409 when the resource's parent is not a collection (RFC 4918: intermediate collections are not made). */
export async function parentMustBeCollection(req: DavRequest, path: string): Promise<void> {
  if (path === "/") return;
  const parent = await req.site.backend.stat(parentOf(path));
  if (!parent?.collection) throw new DavError(409, "the parent collection does not exist");
}
