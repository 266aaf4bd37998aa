// The contract test: every response the API suite receives through the test client is checked
// against this server's own OpenAPI document — the status must be listed for the operation, the
// body must match the listed schema (JSON) or media type (text), and required headers must be
// present. A violation fails the test file (startTestServer's close throws).
import { appendFileSync } from "node:fs";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

type Json = Record<string, any>;

export interface Violation {
  request: string;
  status: number;
  problem: string;
}

interface Route {
  template: string;
  regex: RegExp;
  params: number;
  item: Json;
}

/** Error codes of answers made before routing (src/server/http/inputGuard.ts). */
const PRE_ROUTING_CODES = ["invalid_url", "uri_too_long", "headers_too_large", "request_timeout"];
const METHODS = new Set(["GET", "POST", "PUT", "PATCH", "DELETE"]);

export class ContractChecker {
  readonly violations: Violation[] = [];
  checked = 0;
  unmatched = 0;
  private readonly routes: Route[];
  private readonly ajv: Ajv2020;
  private readonly compiled = new Map<string, ReturnType<Ajv2020["compile"]>>();
  readonly doc: Json;

  constructor(doc: Json) {
    this.doc = doc;
    this.ajv = new Ajv2020({ strict: false, validateSchema: false, allErrors: false });
    addFormats.default(this.ajv);
    this.ajv.addSchema(doc, "openapi");
    this.routes = Object.entries<Json>(doc.paths).map(([template, item]) => {
      const names = template.match(/\{[^}]+\}/g) ?? [];
      const pattern = template.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\\?\{[^}]+\\?\}/g, "[^/]+");
      return { template, regex: new RegExp(`^${pattern}$`), params: names.length, item };
    });
    // Static segments win over parameters (/files/upload before /files/{id}).
    this.routes.sort((a, b) => a.params - b.params);
  }

  /** The operation a request is for, or undefined (an unknown route: the API answers route_not_found). */
  operationFor(method: string, path: string): { template: string; op: Json } | undefined {
    const m = method.toLowerCase();
    // A path that is another method's static route is that route (the server answers 405 there).
    const isStatic = this.routes.find((r) => r.params === 0 && r.template === path);
    if (isStatic) return isStatic.item[m] ? { template: isStatic.template, op: isStatic.item[m] } : undefined;
    for (const r of this.routes) {
      if (r.regex.test(path) && r.item[m]) return { template: r.template, op: r.item[m] };
    }
    return undefined;
  }

  check(method: string, url: string, status: number, headers: Headers, text: string): void {
    method = method.toUpperCase();
    if (!METHODS.has(method)) return;
    const path = new URL(url, "http://x").pathname;
    const found = this.operationFor(method, path);
    const request = `${method} ${path}`;
    if (!found) {
      this.unmatched++;
      return;
    }
    // Answered before any route ran (Node's HTTP parser, the router's URL checks): no operation
    // applies, only the error body is promised (hardening.test.ts checks those answers).
    if (status >= 400 && PRE_ROUTING_CODES.some((code) => text.includes(`"code":"${code}"`))) {
      this.unmatched++;
      return;
    }
    this.checked++;
    const fail = (problem: string): void => {
      this.violations.push({ request: `${request} (${found.template})`, status, problem });
    };
    const res = found.op.responses?.[String(status)];
    if (!res) {
      fail(
        `status ${status} is not documented (documented: ${Object.keys(found.op.responses ?? {}).join(", ")})`,
      );
      return;
    }
    for (const [name, h] of Object.entries<Json>(res.headers ?? {})) {
      const header = h.$ref ? this.doc.components.headers[h.$ref.split("/").pop()] : h;
      if (header?.required && !headers.has(name)) fail(`required header ${name} missing`);
    }
    const type = (headers.get("content-type") ?? "").split(";")[0]!.trim();
    if (!res.content) {
      if (text.length > 0) fail(`documented without a body, got ${text.length} bytes of ${type}`);
      return;
    }
    if (!res.content[type]) {
      fail(`content-type ${type || "(none)"} not documented (${Object.keys(res.content).join(", ")})`);
      return;
    }
    // Bytes served as their own type (an attachment named .json) are content, not an answer to parse.
    if (!type.includes("json") || res.content[type].schema?.format === "binary") return;
    const pointer = [
      "paths",
      found.template,
      method.toLowerCase(),
      "responses",
      String(status),
      "content",
      type,
      "schema",
    ]
      .map((p) => p.replace(/~/g, "~0").replace(/\//g, "~1"))
      .join("/");
    let validate = this.compiled.get(pointer);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `openapi#/${pointer}` });
      this.compiled.set(pointer, validate);
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      fail("body is not JSON");
      return;
    }
    if (!validate(body)) fail(`body does not match: ${this.ajv.errorsText(validate.errors)}`);
  }

  /** Throws with every violation (called when the test server closes). */
  assertClean(): void {
    const log = process.env.TXTFS_CONTRACT_LOG;
    if (log)
      appendFileSync(
        log,
        `${JSON.stringify({ checked: this.checked, violations: this.violations.length })}\n`,
      );
    if (this.violations.length === 0) return;
    const lines = this.violations.slice(0, 20).map((v) => `${v.request} -> ${v.status}: ${v.problem}`);
    throw new Error(`OpenAPI contract violated (${this.violations.length}):\n${lines.join("\n")}`);
  }
}
