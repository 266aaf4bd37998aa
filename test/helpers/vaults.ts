// Vaults for link-graph tests: one generated here with the shapes of a real Obsidian vault (nested
// folders, spaces and Unicode in names, embeds, aliases, duplicate names in different folders,
// markdown links, links in code), and Obsidian's own public help vault when a copy is on this
// machine (never in the repository: TXTFS_OBSIDIAN_HELP names a checkout or a git directory of
// github.com/obsidianmd/obsidian-help; its `en/` folder is the vault).
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";

/** Path from the vault root -> the note's text. */
export type Vault = Map<string, string>;

export function generatedVault(): Vault {
  const v: Vault = new Map();
  const fm = (tags: string[], aliases: string[]) =>
    `---\ntags: [${tags.join(", ")}]\naliases:\n${aliases.map((a) => `  - ${a}`).join("\n")}\n---\n`;
  v.set(
    "Home.md",
    `${fm(["vault", "home"], ["Start", "Index page"])}# Home\n[[Note]] [[Projects/Note|project note]] [[Ça va]] [[Journal/2024/Jan 01]]\n![[diagram.png]] ![[Café menu#Drinks]] [[Missing note]]\n`,
  );
  v.set("Note.md", "Root note: back to [[home]], on to [[Deep note#^block1]].\n```\n[[Inside code]]\n```\n");
  v.set(
    "Projects/Note.md",
    `${fm(["project"], [])}Same name as the root note. [[Note]] is me, [[../Note]] is the root one, [[./Plan]].\n`,
  );
  v.set(
    "Projects/Plan.md",
    "See [the note](Note.md), [home](../Home.md) and [menu](<../Food & drink/Café menu.md>).\n",
  );
  v.set(
    "Projects/Archive/Note.md",
    "A third Note. [[Plan]] is not here; [[Projects/Plan]] is. [[Start]] is an alias.\n",
  );
  v.set("Projects/Archive/Deep note.md", "Deep. [[Index page]] ^block1\n`[[inline code link]]`\n");
  v.set(
    "Food & drink/Café menu.md",
    "## Drinks\n[[Ça va]] and [[ça VA]] and [Encoded](Projects/Archive/Deep%20note.md).\n",
  );
  v.set(
    "Ünïcödé/Ça va.md",
    `${fm(["unicode"], ["Comment ça va"])}![[Home]] [[Note.md]] [[Projects/Archive/Note]]\n`,
  );
  v.set(
    "Journal/2024/Jan 01.md",
    "Journal: [[Comment ça va]] [[Plan]] [[Home#Home]] [[home.md]] ![[photo 1.jpg]]\n",
  );
  v.set("Journal/2024/Plan.md", "A Plan in the journal: nearest for [[Jan 01]]; [[Plan]] links to itself.\n");
  v.set("Journal/notes.txt", "A plain-text note: [[Home]] here is not read as a link.\n");
  v.set("Journal/Link to txt.md", "[[notes.txt]] [[notes]] [[Journal/notes.txt]]\n");
  return v;
}

const HELP_GIT_DEFAULT = "/work/.mirror/obsidianmd+obsidian-help/repo";

/** The help vault's English notes, or why they are not here. */
export function obsidianHelpVault(): { vault: Vault } | { missing: string } {
  const where = process.env.TXTFS_OBSIDIAN_HELP ?? HELP_GIT_DEFAULT;
  if (!existsSync(where))
    return {
      missing: `no copy of github.com/obsidianmd/obsidian-help at ${where} (set TXTFS_OBSIDIAN_HELP to a checkout or its git directory)`,
    };
  const vault: Vault = new Map();
  if (existsSync(join(where, "en")) && statSync(join(where, "en")).isDirectory()) {
    const walk = (dir: string) => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        const p = join(dir, e.name);
        if (e.isDirectory()) walk(p);
        else if (e.name.endsWith(".md")) vault.set(relative(join(where, "en"), p), readFileSync(p, "utf8"));
      }
    };
    walk(join(where, "en"));
  } else {
    const git = (...args: string[]) =>
      execFileSync("git", ["--git-dir", where, ...args], { encoding: "utf8", maxBuffer: 256 << 20 });
    const paths = git("ls-tree", "-r", "-z", "--name-only", "HEAD", "en/")
      .split("\0")
      .filter((p) => p.endsWith(".md"));
    for (const p of paths) vault.set(p.slice(3), git("show", `HEAD:${p}`));
  }
  return vault.size ? { vault } : { missing: `no notes under en/ in ${where}` };
}

/** Files that are not notes beside the generated vault's notes (what its embeds name, and more). */
export function generatedAttachments(): Map<string, Buffer> {
  const png = Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    Buffer.from(Array.from({ length: 3000 }, (_, i) => (i * 131 + 7) % 256)),
  ]);
  return new Map([
    ["diagram.png", png],
    [
      "Attachments/photo 1.jpg",
      Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x00, 0xff, 0xd9]),
    ],
    ["Food & drink/logo.svg", Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><circle r="4"/></svg>\n')],
  ]);
}

/** Writes a vault's notes and other files under `dir`. */
export function writeVault(dir: string, notes: Vault, others: ReadonlyMap<string, Buffer> = new Map()): void {
  for (const [path, bytes] of [...notes, ...others]) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), bytes);
  }
}

const TEST_VAULT_DEFAULT = "/work/vaults/obsidian-help";

/**
 * A real vault as a folder on this machine (never in the repository): TXTFS_TEST_VAULT, by default
 * a copy of Obsidian's help vault (`en/` of github.com/obsidianmd/obsidian-help) at
 * /work/vaults/obsidian-help. Its notes (`.md`/`.txt` outside dot-folders) and its other files.
 */
export function vaultFolder():
  | { dir: string; notes: Vault; others: Map<string, Buffer> }
  | { missing: string } {
  const dir = process.env.TXTFS_TEST_VAULT ?? TEST_VAULT_DEFAULT;
  if (!existsSync(dir) || !statSync(dir).isDirectory())
    return { missing: `no vault folder at ${dir} (set TXTFS_TEST_VAULT to a copy of a real vault)` };
  const notes: Vault = new Map();
  const others = new Map<string, Buffer>();
  const walk = (sub: string) => {
    for (const e of readdirSync(join(dir, sub), { withFileTypes: true })) {
      const rel = sub ? `${sub}/${e.name}` : e.name;
      if (e.isDirectory()) {
        if (!e.name.startsWith(".")) walk(rel);
      } else if (e.isFile()) {
        const bytes = readFileSync(join(dir, rel));
        if (/\.(md|txt)$/i.test(e.name)) notes.set(rel, bytes.toString("utf8"));
        else others.set(rel, bytes);
      }
    }
  };
  walk("");
  return notes.size ? { dir, notes, others } : { missing: `no notes in ${dir}` };
}
