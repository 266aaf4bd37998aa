// Agent skills (TxtSkill): every `SKILL.md` the caller can read, with `scope`, `project`, `agent`
// and `skill` derived from where it sits and from its front matter (the rule is in docs/api.md).
import type { FileMetaRow, FolderRow, Role } from "../../store/repos/rows.ts";
import type { Tx } from "../../store/store.ts";
import { folderRoleInScope, loadScope, roleInScope, visibleTo } from "./access.ts";
import type { Actor } from "./actor.ts";
import { fileEndpoint, parseTags } from "./records.ts";

export const SKILL_FILE = /^skill\.md$/i;

/** The `key: value` lines of a leading `---` front-matter block (top-level scalars only). */
export function frontMatter(content: string): Record<string, string> {
  const m = /^\uFEFF?---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(\r?\n|$)/.exec(content);
  const out: Record<string, string> = {};
  if (!m) return out;
  for (const line of m[1]!.split(/\r?\n/)) {
    const kv = /^([A-Za-z_][\w-]*)[ \t]*:[ \t]*(.*)$/.exec(line);
    if (!kv) continue;
    let value = kv[2]!.trim();
    if (/^(["']).*\1$/.test(value)) value = value.slice(1, -1);
    if (value !== "" && value !== "|" && value !== ">") out[kv[1]!.toLowerCase()] = value;
  }
  return out;
}

export interface SkillPlace {
  scope: "global" | "project" | "unknown";
  project: string | null;
  agent: string | null;
  skill: string;
}

/**
 * Derives a skill's place from its folder path (top first, the folder holding SKILL.md last) and
 * its front matter. Front matter `name`, `agent`, `scope` and `project` win over the path.
 */
export function deriveSkill(path: readonly string[], meta: Record<string, string>): SkillPlace {
  const agentDir = path.findIndex((seg) => seg.startsWith(".") && seg.length > 1 && seg !== "..");
  const skillsAt = path.findIndex((seg) => seg.toLowerCase() === "skills");
  const skill = meta.name ?? (path.length > 0 && skillsAt !== path.length - 1 ? path.at(-1)! : "SKILL");
  const agent = meta.agent ?? (agentDir >= 0 ? path[agentDir]!.slice(1) : null);
  let scope: SkillPlace["scope"] = "unknown";
  let project: string | null = null;
  if (skillsAt >= 0) {
    const before = path.slice(0, skillsAt).filter((_, i) => i !== agentDir);
    if (before.length === 0) scope = "global";
    else {
      scope = "project";
      project = before.at(-1)!;
    }
  }
  if (meta.scope === "global" || meta.scope === "project") scope = meta.scope;
  if (meta.project) {
    project = meta.project;
    if (!meta.scope) scope = "project";
  }
  if (scope === "global") project = null;
  return { scope, project, agent, skill };
}

export async function listSkills(tx: Tx, actor: Actor) {
  const scope = await loadScope(tx, actor);
  const rows = (await tx.files.list({
    ...visibleTo(scope),
  })) as FileMetaRow[];
  const skillRows = rows.filter((r) => SKILL_FILE.test(r.name));
  // Paths only through folders the caller can see: a shared tree starts at its shared top.
  const folders = new Map<string, FolderRow | null>();
  const visibleFolder = async (id: string): Promise<FolderRow | null> => {
    if (!folders.has(id)) {
      const f = (await tx.folders.byId(id)) ?? null;
      folders.set(id, f && folderRoleInScope(scope, f) ? f : null);
    }
    return folders.get(id)!;
  };
  const skills = [];
  for (const row of skillRows) {
    const path: string[] = [];
    let folderName: string | null = null;
    for (let id = row.folder_id; id; ) {
      const f = await visibleFolder(id);
      if (!f) break;
      folderName ??= f.name;
      path.unshift(f.name);
      id = f.parent_id;
    }
    const file = await tx.files.byId(row.id);
    const meta = frontMatter(file?.content ?? "");
    const role: Role = roleInScope(scope, row) ?? "reader";
    skills.push({
      id: row.id,
      name: row.name,
      context: row.context,
      tags: parseTags(row.tags),
      folderId: row.folder_id,
      folderName,
      type: row.type,
      updatedAt: row.updated_at,
      access: role === "owner" ? ("owner" as const) : ("shared" as const),
      role,
      ...deriveSkill(path, meta),
      description: meta.description ?? null,
      path: [...path, row.name].join("/"),
      endpoint: fileEndpoint(row.id),
      raw: `${fileEndpoint(row.id)}/raw`,
    });
  }
  skills.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { skills };
}
