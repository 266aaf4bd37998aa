// Model output made safe to store: names, tags, context and reasons within the service's limits,
// and ids only where the caller may see them (others are dropped and logged by the caller).
import { LIMITS } from "../limits.ts";

const chars = (s: string, max: number) => [...s].slice(0, max).join("");
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what we strip
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g;

export function cleanText(s: string, max: number): string {
  return chars(s.replace(CONTROL, "").trim(), max);
}

/** A file name from a title: no slashes or control characters, `.md` appended, at most 255 bytes. */
export function fileNameFrom(title: string, fallback: string): string {
  let base = cleanText(title.replace(/[\n\r\t]/g, " "), 120)
    .replace(/[/\\]/g, "-")
    .replace(/^\.+/, "")
    .replace(/\.(md|txt)$/i, "")
    .trim();
  if (!base) base = fallback;
  while (Buffer.byteLength(`${base}.md`, "utf8") > LIMITS.nameBytes) base = base.slice(0, -1);
  return `${base}.md`;
}

export function cleanTags(tags: readonly string[], keep: readonly string[] = []): string[] {
  const out = [...keep];
  for (const raw of tags) {
    const tag = cleanText(raw.replace(/,/g, " ").replace(/\s+/g, " "), LIMITS.tagChars);
    if (tag && !out.includes(tag)) out.push(tag);
  }
  return out.slice(0, LIMITS.tags);
}

export const cleanReason = (s: string) => cleanText(s, LIMITS.reasonChars);
export const cleanContext = (s: string) => cleanText(s, LIMITS.contextChars);

/** Folder name from a model: a single path component. */
export function cleanFolderName(s: string | null): string | null {
  if (!s) return null;
  const name = cleanText(s.replace(/[/\\\n\r\t]/g, " "), 80)
    .replace(/^\.+/, "")
    .trim();
  return name || null;
}
