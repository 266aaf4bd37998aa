// How big the API is, counted one way everywhere (front page, /llms.txt, README figures): an
// operation is one HTTP method on one path of the OpenAPI document (HEAD, answered for every GET,
// is not counted); a path is one URL template, which may have several operations.

/** The version of the API description (OpenAPI `info.version`), not of the server: it changes when the
 *  documented contract does. The server's own version is `txtfs --version` (package.json). */
export const API_DESCRIPTION_VERSION = "1.0.0";

const METHODS = ["get", "post", "put", "patch", "delete"];

export interface ApiCounts {
  /** Method + path pairs. */
  operations: number;
  /** URL templates. */
  paths: number;
  /** Operations under /api (the rest: pages, sign-in, probes, reference, MCP). */
  apiOperations: number;
}

export function countApi(doc: { paths: Record<string, object> }): ApiCounts {
  let operations = 0;
  let apiOperations = 0;
  for (const [path, item] of Object.entries(doc.paths)) {
    const n = Object.keys(item).filter((k) => METHODS.includes(k)).length;
    operations += n;
    if (path === "/api" || path.startsWith("/api/")) apiOperations += n;
  }
  return { operations, paths: Object.keys(doc.paths).length, apiOperations };
}

/** The counts in words, as every page says them. */
export function describeCounts(c: ApiCounts): string {
  return `${c.operations} operations (an HTTP method on a path; ${c.apiOperations} of them under /api) on ${c.paths} paths`;
}
