// What a note's YAML front-matter says about it: its `tags` and its `aliases` (the other names a
// link may use). Read with a real YAML parser; front-matter that is not valid YAML, or not a
// mapping, says nothing (as in Obsidian, which then shows no properties).
import { parse } from "yaml";
import { normalTag } from "./inlineTags.ts";
import { splitFrontMatter } from "./markdownText.ts";

export interface FrontMatter {
  tags: string[];
  aliases: string[];
}

/** A list, or a string of comma-separated items (Obsidian's older form); anything else is no items. */
function items(value: unknown, splitSpaces: boolean): string[] {
  const list = Array.isArray(value) ? value : typeof value === "string" ? [value] : [];
  const out: string[] = [];
  for (const v of list) {
    if (typeof v !== "string" && typeof v !== "number") continue;
    for (const part of String(v).split(splitSpaces ? /[,\s]+/ : /,/)) {
      const s = part.trim();
      if (s) out.push(s);
    }
  }
  return out;
}

function field(data: Record<string, unknown>, ...names: string[]): unknown {
  for (const name of names) if (name in data) return data[name];
  return undefined;
}

export function readFrontMatter(note: string): FrontMatter {
  const { frontMatter } = splitFrontMatter(note);
  if (frontMatter === null) return { tags: [], aliases: [] };
  let data: unknown;
  try {
    // One document, no custom tags; a billion-laughs alias bomb is cut off by the parser's limit.
    data = parse(frontMatter, { maxAliasCount: 100, uniqueKeys: false });
  } catch {
    return { tags: [], aliases: [] };
  }
  if (!data || typeof data !== "object" || Array.isArray(data)) return { tags: [], aliases: [] };
  const record = data as Record<string, unknown>;
  const tags: string[] = [];
  for (const raw of items(field(record, "tags", "tag"), true)) {
    const tag = normalTag(raw.replace(/^#/, ""));
    if (tag && !tags.some((t) => t.toLowerCase() === tag.toLowerCase())) tags.push(tag);
  }
  const aliases: string[] = [];
  for (const alias of items(field(record, "aliases", "alias"), false))
    if (!aliases.some((a) => a.toLowerCase() === alias.toLowerCase())) aliases.push(alias);
  return { tags, aliases };
}
