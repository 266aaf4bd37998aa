// .txtfs/comments/PATH: the comment threads and pending suggestions of the note at PATH, rendered
// as Markdown (read-only), named as the note. One way to write: append a quote of the note's text
// (lines beginning with "> ") followed by the comment; it is added anchored at the quote's first
// occurrence in the note. Anything else is refused with EINVAL.
import type { TxtComment, TxtSuggestion } from "../../lib/apiTypes.ts";
import type { Bodies } from "../bodies.ts";
import type { VfsCore } from "../core.ts";
import type { Delivery } from "../delivery/deliver.ts";
import { fail, toVfsError } from "../errors.ts";
import type { FileNode } from "../tree.ts";
import type { Area } from "./area.ts";
import { type Entry, FRESH_MS, mirrorChildren, Recent, resolveMirror } from "./entries.ts";

const when = (iso: string) => `${iso.slice(0, 16).replace("T", " ")} UTC`;
const quoted = (text: string) =>
  text
    .split("\n")
    .map((l) => (l ? `> ${l}` : ">"))
    .join("\n");
const who = (x: { user_name: string | null; user_email: string }) => x.user_name || x.user_email;

export function renderComments(path: string, comments: TxtComment[], suggestions: TxtSuggestion[]): string {
  const out = [`# Comments on ${path}`, ""];
  if (!comments.length) out.push("No comments.", "");
  for (const c of comments) {
    const state = [
      c.resolved ? "resolved" : "",
      c.anchor_state === "outdated" ? "the quoted text changed" : "",
    ]
      .filter(Boolean)
      .join(", ");
    out.push(`## ${who(c)}, ${when(c.created_at)}${state ? ` (${state})` : ""}`, "");
    if (c.selected_text) out.push(quoted(c.selected_text), "");
    out.push(c.body, "");
  }
  out.push("# Pending suggestions", "");
  if (!suggestions.length) out.push("None.", "");
  for (const s of suggestions) {
    out.push(`## ${who(s)}, ${when(s.created_at)}`, "", quoted(s.original_text), "", "Replace with:", "");
    out.push(quoted(s.suggested_text), "");
  }
  return `${out.join("\n").trimEnd()}\n`;
}

/**
 * An appended message: the quote (its "> " lines) and the comment after it. Null while the comment
 * is not complete (no line after the quote yet); EINVAL when it can never be one.
 */
export function parseAppended(text: string): { quote: string; body: string } | null {
  if (!text.startsWith("> ")) throw fail("EINVAL", "a comment starts with a '> quote' line");
  const lines = text.split("\n");
  let i = 0;
  const quote: string[] = [];
  for (; i < lines.length && (lines[i]!.startsWith("> ") || lines[i] === ">"); i++)
    quote.push(lines[i]!.slice(2));
  const body = lines.slice(i).join("\n").trim();
  if (!body || !text.endsWith("\n")) return null;
  if (!quote.join("").trim()) throw fail("EINVAL", "the quote is empty");
  return { quote: quote.join("\n"), body };
}

/** The parts comments call. */
export interface CommentsParts {
  bodies: Pick<Bodies, "body">;
  delivery: Pick<Delivery, "settle">;
}

export class Comments implements Area {
  private readonly bodies: CommentsParts["bodies"];
  private readonly delivery: CommentsParts["delivery"];
  private readonly c: VfsCore;
  private readonly rendered = new Recent<Buffer>(FRESH_MS);

  constructor(c: VfsCore, parts: CommentsParts) {
    this.c = c;
    this.bodies = parts.bodies;
    this.delivery = parts.delivery;
  }

  private at(parts: string[]): FileNode | { dir: string[] } {
    const found = resolveMirror(this.c.tree, parts);
    if (!found || found.rest.length) throw fail("ENOENT");
    return found.node.kind === "dir" ? { dir: mirrorChildren(found.node) } : found.node;
  }

  private async render(node: FileNode): Promise<Buffer> {
    await this.delivery.settle(node);
    const id = node.id;
    const path = this.c.tree.pathOf(node).slice(1);
    if (!id) return Buffer.from(renderComments(path, [], []));
    return this.rendered.get(id, async () => {
      try {
        const [comments, suggestions] = await Promise.all([
          this.c.client.comments(id),
          this.c.client.suggestions(id, "pending"),
        ]);
        return Buffer.from(renderComments(path, comments, suggestions));
      } catch (err) {
        throw toVfsError(err);
      }
    });
  }

  async stat(parts: string[]): Promise<Entry> {
    const node = this.at(parts);
    if ("dir" in node) return { type: "dir" };
    const body = await this.render(node);
    // Rendered now: a fresh time, so an open never keeps pages of an earlier rendering.
    return { type: "file", size: body.length, mtimeMs: this.c.clock.now(), writable: true };
  }

  async list(parts: string[]): Promise<string[]> {
    const node = this.at(parts);
    if (!("dir" in node)) throw fail("ENOTDIR");
    return node.dir;
  }

  read(parts: string[]): Promise<Buffer> {
    const node = this.at(parts);
    if ("dir" in node) return Promise.reject(fail("EISDIR"));
    return this.render(node);
  }

  async append(parts: string[], data: Buffer): Promise<boolean> {
    const node = this.at(parts);
    if ("dir" in node) throw fail("EISDIR");
    const message = parseAppended(data.toString("utf8"));
    if (!message) return false;
    const text = (await this.bodies.body(node)).toString("utf8");
    // UTF-16 offsets (JavaScript string indices), as the service counts them.
    const start = text.indexOf(message.quote);
    if (start < 0) throw fail("EINVAL", "the quoted text is not in the note");
    if (!node.id) throw fail("EIO", "the note is not on the service yet");
    try {
      await this.c.client.comment(node.id, {
        body: message.body,
        selection_start: start,
        selection_end: start + message.quote.length,
        selected_text: message.quote,
      });
    } catch (err) {
      throw toVfsError(err);
    } finally {
      this.rendered.drop(node.id);
    }
    return true;
  }
}
