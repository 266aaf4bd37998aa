// Which methods a path answers, from the routes as registered: a request with a method the path
// does not take is 405 with `Allow` (RFC 9110), not a 404 "no endpoint" nor a file named `import`.
// The router keeps one tree per method, so `PUT /api/v1/files/import` found `PUT /api/v1/files/:id`
// with id `import`; a path that is a static route of some method is that route, whatever the method.
import { ServiceError } from "../domain/errors.ts";

interface Pattern {
  method: string;
  url: string;
  regex: RegExp;
  isStatic: boolean;
}

const toRegex = (url: string) =>
  new RegExp(
    `^${url
      .split("/")
      .map((seg) =>
        seg.startsWith(":") ? "[^/]+" : seg === "*" ? ".*" : seg.replace(/[.*+?^$()|[\]\\{}]/g, "\\$&"),
      )
      .join("/")}$`,
  );

export class AllowedMethods {
  private readonly patterns: Pattern[] = [];
  /** Static paths, for the check every request makes (a lookup, not a scan). */
  private readonly staticPaths = new Set<string>();

  add(method: string, url: string): void {
    const isStatic = !/[:*]/.test(url);
    this.patterns.push({ method, url, regex: toRegex(url), isStatic });
    if (isStatic) this.staticPaths.add(url);
  }

  /** The methods `path` answers (OPTIONS always: every path answers CORS preflights). */
  of(path: string): string[] {
    const statics = this.patterns.filter((p) => p.isStatic && p.url === path);
    const matching = statics.length > 0 ? statics : this.patterns.filter((p) => p.regex.test(path));
    if (matching.length === 0) return [];
    const methods = new Set(matching.map((p) => p.method));
    if (methods.has("GET")) methods.add("HEAD");
    methods.add("OPTIONS");
    const order = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];
    return [...methods].sort((a, b) => order.indexOf(a) - order.indexOf(b));
  }

  /**
   * The 405 for a request the router could not place (`matchedUrl` undefined) or placed on a
   * parametric route although its path is another method's static route; undefined when it fits.
   */
  refusal(method: string, path: string, matchedUrl: string | undefined): ServiceError | undefined {
    if (method === "OPTIONS") return undefined;
    if (matchedUrl !== undefined && (matchedUrl === path || !this.isStaticPath(path))) return undefined;
    const allowed = this.of(path);
    if (allowed.length === 0 || allowed.includes(method)) return undefined;
    return new ServiceError(
      405,
      "method_not_allowed",
      `${path} does not answer ${method}; it answers ${allowed.join(", ")}.`,
      `Use one of the methods in the Allow header (GET /api/v1 lists every endpoint).`,
      undefined,
      { Allow: allowed.join(", ") },
    );
  }

  private isStaticPath(path: string): boolean {
    return this.staticPaths.has(path);
  }
}
