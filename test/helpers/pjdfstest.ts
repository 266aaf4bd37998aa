// pjdfstest (github pjd/pjdfstest: POSIX filesystem conformance, one TAP script per case) run in a
// directory: where it is installed, a tree of its scripts whose names are notes (`.md`) or kept as
// they are (local-only files), and the outcome of every subtest. Shared by
// test/mount/pjdfstest.test.ts and scripts/pjdfstest.ts. Nothing is downloaded: a machine without
// it built (docs/pjdfstest.md says how) skips.
import { spawn } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";

/** Where pjdfstest is looked for: `$TXTFS_PJDFSTEST`, then /usr/local/lib/pjdfstest (its binary and tests/). */
export function findPjdfstest(): string | undefined {
  for (const dir of [process.env.TXTFS_PJDFSTEST, "/usr/local/lib/pjdfstest"]) {
    if (dir && existsSync(join(dir, "pjdfstest")) && existsSync(join(dir, "tests", "misc.sh"))) return dir;
  }
  return undefined;
}

/** How pjdfstest names what it creates: `pjdfstest_HASH` (local-only files here) or with `.md` (notes). */
export type Names = "local" | "note";

/**
 * A copy of pjdfstest's test tree (links to its scripts, its conf and binary) whose `namegen` gives
 * `.md` names for `note`: every file, folder, link and node a test makes is then named like a note.
 */
export function prepareTree(installed: string, names: Names): string {
  const root = mkdtempSync("/var/tmp/txtfs-pjdfstest-");
  const tests = join(root, "tests");
  mkdirSync(tests);
  symlinkSync(join(installed, "pjdfstest"), join(root, "pjdfstest"));
  writeFileSync(join(tests, "conf"), readFileSync(join(installed, "tests", "conf")));
  let misc = readFileSync(join(installed, "tests", "misc.sh"), "utf8");
  if (names === "note")
    misc += `\nnamegen()\n{\n\techo "pjdfstest_\`dd if=/dev/urandom bs=1k count=1 2>/dev/null | openssl md5 | awk '{print $NF}'\`.md"\n}\n`;
  writeFileSync(join(tests, "misc.sh"), misc);
  for (const group of groups(installed)) {
    mkdirSync(join(tests, group));
    for (const file of scripts(installed, group))
      symlinkSync(join(installed, "tests", group, file), join(tests, group, file));
  }
  return root;
}

/** pjdfstest's groups (its folders of scripts: chmod, chown, link, ...). */
export function groups(installed: string): string[] {
  return readdirSync(join(installed, "tests"), { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
}

export function scripts(installed: string, group: string): string[] {
  return readdirSync(join(installed, "tests", group))
    .filter((f) => f.endsWith(".t"))
    .sort();
}

export interface ScriptResult {
  /** `group/NN.t` */
  script: string;
  planned: number;
  /** Subtest numbers that passed. */
  passed: number[];
  /** Subtest numbers that failed or never ran (the script died or timed out), with what it printed. */
  failed: { n: number; line: string }[];
  ms?: number;
}

/**
 * Runs one script (`group/NN.t`) of the tree `root` in the folder `cwd` (made first; where it makes
 * its names), as pjdfstest expects: as root, through `sh`, in a child process. Never rejects.
 */
export function runScript(
  root: string,
  script: string,
  cwd: string,
  timeoutMs = 120_000,
): Promise<ScriptResult> {
  return new Promise((resolve) => {
    const child = spawn(
      "sh",
      ["-c", 'mkdir -p "$1" && cd "$1" && exec sh "$2"', "sh", cwd, join(root, "tests", script)],
      {
        cwd: "/",
        stdio: ["ignore", "pipe", "ignore"],
      },
    );
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    const started = Date.now();
    child.on("close", () => {
      clearTimeout(timer);
      resolve({ ...parseTap(script, out), ms: Date.now() - started });
    });
  });
}

export function parseTap(script: string, out: string): ScriptResult {
  const planned = Number(/^1\.\.(\d+)/m.exec(out)?.[1] ?? 0);
  const seen = new Map<number, { ok: boolean; line: string }>();
  for (const line of out.split("\n")) {
    const m = /^(not )?ok (\d+)/.exec(line);
    // A failing TODO is pjdfstest's own known difference (prove counts it as no failure): not ours.
    if (m) seen.set(Number(m[2]), { ok: !m[1] || /# TODO/.test(line), line });
  }
  const passed: number[] = [];
  const failed: { n: number; line: string }[] = [];
  for (let n = 1; n <= Math.max(planned, ...seen.keys()); n++) {
    const r = seen.get(n);
    if (r?.ok) passed.push(n);
    else failed.push({ n, line: r?.line ?? "never ran" });
  }
  return { script, planned, passed, failed };
}

/** `[1, 2, 3, 5]` as `1-3 5`. */
export function ranges(ns: number[]): string {
  const out: string[] = [];
  for (let i = 0; i < ns.length; ) {
    let j = i;
    while (j + 1 < ns.length && ns[j + 1] === ns[j]! + 1) j++;
    out.push(i === j ? `${ns[i]}` : `${ns[i]}-${ns[j]}`);
    i = j + 1;
  }
  return out.join(" ");
}

/** `1-3 5` as `[1, 2, 3, 5]`. */
export function unranges(text: string): number[] {
  return text
    .trim()
    .split(/\s+/)
    .filter(Boolean)
    .flatMap((r) => {
      const [a, b] = r.split("-").map(Number) as [number, number | undefined];
      return Array.from({ length: (b ?? a) - a + 1 }, (_, i) => a + i);
    });
}

/** Subtests expected to fail, by script: `chmod/00.t` -> {5, 6, 7}. */
export type Expected = Map<string, Set<number>>;

/**
 * The lists of docs/pjdfstest.md, for each run (`note`, `local`): the subtests failing by design,
 * and those failing by a known defect (a bug to fix, reported at every run), by script: lines
 * `- \`chmod/00.t\` 5-8 10 — why`, after a `<!-- by-design:NAMES -->` or `<!-- defect:NAMES -->`
 * marker, up to `<!-- end -->`.
 */
export function expectedFailures(doc: string): Record<"byDesign" | "defects", Record<Names, Expected>> {
  const lists = {
    byDesign: { note: new Map(), local: new Map() } as Record<Names, Expected>,
    defects: { note: new Map(), local: new Map() } as Record<Names, Expected>,
  };
  let current: Expected | undefined;
  for (const line of doc.split("\n")) {
    const marker = /<!-- (by-design|defect):(note|local) -->/.exec(line);
    if (marker) current = lists[marker[1] === "defect" ? "defects" : "byDesign"][marker[2] as Names];
    else if (/<!-- end -->/.test(line)) current = undefined;
    const entry = /^- `([a-z_]+\/\d+\.t)` ([\d\s-]+)/.exec(line);
    if (current && entry) {
      const set = current.get(entry[1]!) ?? new Set<number>();
      for (const n of unranges(entry[2]!)) set.add(n);
      current.set(entry[1]!, set);
    }
  }
  return lists;
}

/** How a run compares with the lists: what fails unlisted, what a list has that passes now, the defects seen. */
export function compare(
  results: ScriptResult[],
  byDesign: Expected,
  defects: Expected,
): { unexpected: string[]; nowPassing: string[]; defectsSeen: string[] } {
  const unexpected: string[] = [];
  const nowPassing: string[] = [];
  const defectsSeen: string[] = [];
  for (const r of results) {
    const designed = byDesign.get(r.script) ?? new Set<number>();
    const known = defects.get(r.script) ?? new Set<number>();
    for (const f of r.failed) {
      if (known.has(f.n)) defectsSeen.push(`${r.script} ${f.line}`);
      else if (!designed.has(f.n)) unexpected.push(`${r.script} ${f.line}`);
    }
    const fixed = r.passed.filter((n) => designed.has(n) || known.has(n));
    if (fixed.length) nowPassing.push(`${r.script} ${ranges(fixed)}`);
  }
  return { unexpected, nowPassing, defectsSeen };
}
