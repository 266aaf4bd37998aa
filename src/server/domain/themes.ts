// Themes: the account default, or a theme scoped to one file, folder or group. A scope without a
// saved theme inherits (file -> its folders, nearest first -> the account default -> `default`).
// Saves carry the revision the client read, so two editors never overwrite each other silently.
import { nowIso } from "../../lib/time.ts";
import type { ThemeRow } from "../../store/repos/rows.ts";
import type { Tx } from "../../store/store.ts";
import { requireFile, requireFolder } from "./access.ts";
import type { Actor } from "./actor.ts";
import { invalid, ServiceError } from "./errors.ts";

export const THEME_LIMITS = {
  idChars: 64,
  overrideKeys: 64,
  keyChars: 64,
  valueChars: 256,
  overridesBytes: 8192,
};
export const DEFAULT_THEME_ID = "default";

export type ThemeScope = { type: "account" | "file" | "folder" | "group"; id: string };
type Overrides = Record<string, string | number | boolean | null>;

export function themeScopeOf(
  actor: Actor,
  q: { fileId?: string; folderId?: string; groupId?: string },
): ThemeScope {
  const given = (["fileId", "folderId", "groupId"] as const).filter((k) => q[k] !== undefined);
  if (given.length > 1) throw invalid(given[1]!, "give at most one of fileId, folderId and groupId");
  if (q.fileId !== undefined) return { type: "file", id: q.fileId };
  if (q.folderId !== undefined) return { type: "folder", id: q.folderId };
  if (q.groupId !== undefined) return { type: "group", id: q.groupId };
  return { type: "account", id: actor.userId };
}

const noGroup = (id: string) =>
  new ServiceError(
    404,
    "not_found",
    `No group with id ${id} is visible to you.`,
    "This server has no groups yet: share a folder with the team and set the folder's theme (folderId) instead.",
  );

export const themeEtag = (scope: ThemeScope, revision: number) => `"theme-${scope.type}-${revision}"`;

/** Checks the caller may read (or change) the scope; returns the folder chain to inherit from. */
async function authorize(tx: Tx, actor: Actor, scope: ThemeScope, change: boolean): Promise<string[]> {
  if (scope.type === "group") throw noGroup(scope.id);
  if (scope.type === "account") return [];
  if (scope.type === "file") {
    const { file } = await requireFile(tx, actor, scope.id, change ? "writer" : "reader");
    return file.folder_id ? (await tx.folders.ancestry(file.folder_id)).map((f) => f.id) : [];
  }
  // Folder settings are the owner's to change (the spec's rule).
  const { folder } = await requireFolder(tx, actor, scope.id, change ? "owner" : "reader");
  return (await tx.folders.ancestry(folder.id)).slice(1).map((f) => f.id);
}

function record(scope: ThemeScope, own: ThemeRow | undefined, effective: ThemeRow | undefined) {
  return {
    scope: scope.type,
    scopeId: scope.id,
    themeId: effective?.theme_id ?? DEFAULT_THEME_ID,
    overrides: effective ? (JSON.parse(effective.overrides) as Overrides) : {},
    revision: own ? Number(own.revision) : 0,
    updatedAt: own?.updated_at ?? null,
    updatedBy: own?.updated_by ?? null,
    inherited: !own,
    inheritedFrom: !own && effective ? { scope: effective.scope_type, id: effective.scope_id } : null,
  };
}

export async function getTheme(tx: Tx, actor: Actor, scope: ThemeScope) {
  const folders = await authorize(tx, actor, scope, false);
  const own = await tx.themes.get(scope.type, scope.id);
  let effective = own;
  for (const id of folders) {
    if (effective) break;
    effective = await tx.themes.get("folder", id);
  }
  if (!effective && scope.type !== "account") effective = await tx.themes.get("account", actor.userId);
  return record(scope, own, effective);
}

function checkOverrides(value: unknown): Overrides {
  if (value === undefined) return {};
  if (value === null || typeof value !== "object" || Array.isArray(value))
    throw invalid("overrides", "must be an object of setting names to values");
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length > THEME_LIMITS.overrideKeys)
    throw invalid("overrides", `must have at most ${THEME_LIMITS.overrideKeys} settings`);
  for (const [k, v] of entries) {
    if (k.length === 0 || k.length > THEME_LIMITS.keyChars)
      throw invalid(`overrides.${k}`, `setting names must be 1-${THEME_LIMITS.keyChars} characters`);
    const ok =
      v === null ||
      typeof v === "boolean" ||
      (typeof v === "number" && Number.isFinite(v)) ||
      (typeof v === "string" && v.length <= THEME_LIMITS.valueChars);
    if (!ok)
      throw invalid(
        `overrides.${k}`,
        `must be a string of at most ${THEME_LIMITS.valueChars} characters, a number, a boolean or null`,
      );
  }
  if (Buffer.byteLength(JSON.stringify(value)) > THEME_LIMITS.overridesBytes)
    throw invalid("overrides", `must be at most ${THEME_LIMITS.overridesBytes} bytes as JSON`);
  return value as Overrides;
}

export async function saveTheme(
  tx: Tx,
  actor: Actor,
  scope: ThemeScope,
  input: { themeId: string; overrides?: unknown; revision: number },
  ifMatch?: readonly string[] | "*",
) {
  await authorize(tx, actor, scope, true);
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(input.themeId) || input.themeId.length > THEME_LIMITS.idChars)
    throw invalid("themeId", `must be 1-${THEME_LIMITS.idChars} letters, digits, '.', '_' or '-'`);
  const overrides = checkOverrides(input.overrides);
  const own = await tx.themes.get(scope.type, scope.id);
  const current = own ? Number(own.revision) : 0;
  const etag = themeEtag(scope, current);
  if (ifMatch !== undefined && ifMatch !== "*" && !ifMatch.includes(etag)) {
    throw new ServiceError(
      412,
      "precondition_failed",
      "If-Match does not match the theme's current entity tag.",
      "GET the theme again and retry with its ETag.",
      { currentEtag: etag },
    );
  }
  if (input.revision !== current) {
    throw new ServiceError(
      409,
      "revision_conflict",
      `The theme is at revision ${current}, not ${input.revision}: someone saved it since you read it.`,
      "GET the theme again, reapply your change and send its current `revision`.",
      { currentRevision: current },
    );
  }
  await tx.themes.upsert({
    scope_type: scope.type,
    scope_id: scope.id,
    theme_id: input.themeId,
    overrides: JSON.stringify(overrides),
    revision: current + 1,
    updated_by: actor.userId,
    updated_at: nowIso(),
  });
  return getTheme(tx, actor, scope);
}
