// JSON Schema -> a compact TypeScript-like shape for plain-text reference pages:
// `{ id: string, folderId: string | null, tags?: string[] }`. Named records print as their name
// (their shape is listed once under "Records").

// biome-ignore lint/suspicious/noExplicitAny: JSON Schema nodes
type Schema = Record<string, any>;

const REF = "#/components/schemas/";

export function refName(schema: Schema): string | undefined {
  return typeof schema?.$ref === "string" && schema.$ref.startsWith(REF)
    ? schema.$ref.slice(REF.length)
    : undefined;
}

/** Every record name a schema mentions (to list them under Records). */
export function refsOf(schema: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(schema)) for (const s of schema) refsOf(s, out);
  else if (schema && typeof schema === "object") {
    const name = refName(schema as Schema);
    if (name) out.add(name);
    for (const v of Object.values(schema)) refsOf(v, out);
  }
  return out;
}

function constraints(s: Schema): string {
  const parts: string[] = [];
  if (s.maxLength !== undefined) parts.push(`max ${s.maxLength} chars`);
  if (s.minLength !== undefined && s.minLength > 0) parts.push(`min ${s.minLength}`);
  if (s.maxItems !== undefined) parts.push(`max ${s.maxItems} items`);
  if (s.minimum !== undefined) parts.push(`>= ${s.minimum}`);
  if (s.maximum !== undefined) parts.push(`<= ${s.maximum}`);
  if (s.format) parts.push(s.format);
  return parts.length ? ` /* ${parts.join(", ")} */` : "";
}

export function shape(s: Schema | undefined, depth = 0): string {
  if (!s || Object.keys(s).length === 0) return "any";
  const name = refName(s);
  if (name) return name;
  if (s.const !== undefined) return JSON.stringify(s.const);
  if (s.enum) return s.enum.map((v: unknown) => JSON.stringify(v)).join(" | ");
  // An object with per-variant rules (batch operations) prints as its fields.
  if (s.oneOf && s.properties) return shape({ ...s, oneOf: undefined }, depth);
  if (s.anyOf || s.oneOf) return (s.anyOf ?? s.oneOf).map((x: Schema) => shape(x, depth)).join(" | ");
  if (s.allOf) return s.allOf.map((x: Schema) => shape(x, depth)).join(" & ");
  const type = Array.isArray(s.type) ? s.type : [s.type];
  if (type.length > 1) return type.map((t: string) => shape({ ...s, type: t }, depth)).join(" | ");
  switch (type[0]) {
    case "string":
    case "integer":
    case "number":
    case "boolean":
    case "null":
      return `${type[0]}${constraints(s)}`;
    case "array":
      return `${wrap(shape(s.items, depth))}[]${constraints(s)}`;
    case "object": {
      const props = Object.entries<Schema>(s.properties ?? {});
      if (props.length === 0) return "object";
      const required = new Set<string>(s.required ?? []);
      const pad = "  ".repeat(depth + 1);
      const fields = props.map(([k, v]) => `${pad}${k}${required.has(k) ? "" : "?"}: ${shape(v, depth + 1)}`);
      return `{\n${fields.join(",\n")}\n${"  ".repeat(depth)}}`;
    }
    default:
      return "any";
  }
}

const wrap = (t: string) => (t.includes(" | ") || t.includes(" & ") ? `(${t})` : t);
