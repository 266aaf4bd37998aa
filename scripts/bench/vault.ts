// A whole vault through the drive (issue 48's figures): `cp -r` of a real vault into mount A until
// `cp` returns, until every note and every attachment (each file that is not a note) is on the
// service (`txtfs sync` returns), and until mount B (another cache dir, same account) shows every
// file byte for byte. Each run starts from an empty account: its own `txtfs serve` (loopback), two
// mounts with empty cache dirs.
//
//   node scripts/bench/vault.ts                          (npm run bench:vault)
//   node scripts/bench/vault.ts --vault DIR --runs 5
//
// The vault is a folder on this machine (never in the repository): --vault, else TXTFS_TEST_VAULT,
// else /work/vaults/obsidian-help (docs/testing.md). Every action on a mount runs in a child
// `bash -c`; every result is checked (the service's note count; each attachment's path, size and
// SHA-256 through GET /api/v1/attachments; every file's bytes on B). Servers and mounts are stopped
// by pid and unmounted, and the base dir removed, even on failure.
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import {
  type ChildServer,
  cleanEnv,
  cleanUpOnStop,
  fmtInt,
  machineInfo,
  markdownTable,
  median,
  numberOption,
  startChild,
} from "./lib.ts";
import { isMounted, unmountFuse } from "./sshfs.ts";

const root = resolve(import.meta.dirname, "../..");
const BIN = join(root, "bin/txtfs");
const log = (msg: string) => process.stderr.write(`[bench:vault] ${msg}\n`);

const HELP = `usage: node scripts/bench/vault.ts [options]
  --vault <dir>        the vault to copy (default $TXTFS_TEST_VAULT or /work/vaults/obsidian-help)
  --runs <n>           runs, each from an empty account; times are their medians (default 3)
  --out <file>         Markdown report (default bench-results/vault.md)
  --timeout <s>        watchdog: give up (and clean up) after this many seconds (default 900)`;

interface VaultFiles {
  notes: string[];
  /** The files that are not notes: they go to the service as attachments. */
  others: string[];
  bytes: number;
  otherBytes: number;
}

function listVault(dir: string): VaultFiles {
  const out: VaultFiles = { notes: [], others: [], bytes: 0, otherBytes: 0 };
  const walk = (sub: string) => {
    for (const e of readdirSync(join(dir, sub), { withFileTypes: true })) {
      const rel = sub ? `${sub}/${e.name}` : e.name;
      if (e.isDirectory()) walk(rel);
      else if (e.isFile()) {
        const size = statSync(join(dir, rel)).size;
        out.bytes += size;
        if (/\.(md|txt)$/i.test(e.name)) out.notes.push(rel);
        else {
          out.others.push(rel);
          out.otherBytes += size;
        }
      }
    }
  };
  walk("");
  return out;
}

function bash(script: string, timeoutMs: number): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile("bash", ["-c", script], { timeout: timeoutMs, maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
      const code = err ? Number((err as { code?: unknown }).code ?? 1) || 1 : 0;
      done({ code, stdout, stderr });
    });
  });
}

const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

function check(ok: boolean, what: string): asserts ok {
  if (!ok) throw new Error(`check failed: ${what}`);
}

interface RunFigures {
  cpMs: number;
  onServiceMs: number;
  onSecondMs: number;
  serviceNotes: number;
  serviceAttachments: number;
}

async function api<T>(url: string, key: string, path: string): Promise<T> {
  const r = await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${key}` } });
  check(r.ok, `GET ${path} answers 200 (got ${r.status}: ${(await r.clone().text()).slice(0, 300)})`);
  return (await r.json()) as T;
}

/**
 * Every file that is not a note is an attachment on the service at its path, with its size and
 * SHA-256 (GET /api/v1/attachments, its folders from GET /api/me/folders); none is missing, none
 * extra. Answers the count.
 */
async function checkAttachments(url: string, key: string, vault: string, files: VaultFiles): Promise<number> {
  const { folders } = await api<{ folders: { id: string; name: string; parentFolderId: string | null }[] }>(
    url,
    key,
    "/api/me/folders",
  );
  const byId = new Map(folders.map((f) => [f.id, f]));
  const folderPath = (id: string | null): string => {
    if (id === null) return "";
    const f = byId.get(id);
    check(f !== undefined, `folder ${id} is in GET /api/me/folders`);
    const up = folderPath(f.parentFolderId);
    return up ? `${up}/${f.name}` : f.name;
  };
  const found = new Map<string, { size: number; contentHash: string }>();
  let cursor: string | null = null;
  for (;;) {
    const page: {
      attachments: { name: string; folderId: string | null; size: number; contentHash: string }[];
      nextCursor: string | null;
      hasMore: boolean;
    } = await api(
      url,
      key,
      `/api/v1/attachments?limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
    );
    for (const a of page.attachments) {
      const at = folderPath(a.folderId);
      const rel = at ? `${at}/${a.name}` : a.name;
      check(!found.has(rel), `one attachment at ${rel}`);
      found.set(rel, { size: a.size, contentHash: a.contentHash });
    }
    if (!page.hasMore || !page.nextCursor) break;
    cursor = page.nextCursor;
  }
  const wanted = new Set(files.others);
  const extra = [...found.keys()].filter((rel) => !wanted.has(rel));
  const missing = files.others.filter((rel) => !found.has(rel));
  check(
    missing.length === 0 && extra.length === 0,
    `the service has the ${files.others.length} attachments (got ${found.size}; missing: ${missing.slice(0, 5).join(", ") || "none"}; extra: ${extra.slice(0, 5).join(", ") || "none"})`,
  );
  for (const rel of files.others) {
    const bytes = readFileSync(join(vault, rel));
    const got = found.get(rel)!;
    const hash = createHash("sha256").update(bytes).digest("hex");
    check(
      got.size === bytes.length && got.contentHash === hash,
      `attachment ${rel}: ${bytes.length} bytes, sha256 ${hash} (the service has ${got.size} bytes, ${got.contentHash})`,
    );
  }
  return found.size;
}

interface Resources {
  children: ChildServer[];
  mountpoints: string[];
}

async function oneRun(base: string, vault: string, files: VaultFiles, res: Resources): Promise<RunFigures> {
  const data = join(base, "data");
  const server = startChild(
    "serve",
    process.execPath,
    [BIN, "serve", "--host", "127.0.0.1", "--port", "0", "--data", data, "--rate-limit", "100000000"],
    { cwd: root, env: cleanEnv({}) },
  );
  res.children.push(server);
  const url = (await server.waitForLine(/^txtfs (http:\/\/127\.0\.0\.1:\d+)\b/, 60_000))[1]!;
  const key = (await server.waitForLine(/^export TXTFS_API_KEY=(\S+)$/, 10_000))[1]!;
  const mounts: { mnt: string; config: string; daemon: ChildServer }[] = [];
  for (const name of ["a", "b"]) {
    const mnt = join(base, `${name}-mnt`);
    const config = join(base, `${name}-config`);
    const cache = join(base, `${name}-cache`);
    for (const d of [mnt, config, cache]) mkdirSync(d);
    const daemon = startChild(
      `mount ${name}`,
      process.execPath,
      [BIN, "mount", mnt, "--url", url, "--key", key, "--cache-dir", cache, "--poll-wait", "1"],
      { cwd: root, env: cleanEnv({ TXTFS_CONFIG: config, TXTFS_CACHE: join(config, "cache") }) },
    );
    res.children.push(daemon);
    res.mountpoints.push(mnt);
    await daemon.waitForLine(/^mounted /, 60_000);
    check(isMounted(mnt), `${mnt} is mounted`);
    mounts.push({ mnt, config, daemon });
  }
  const [a, b] = mounts as [(typeof mounts)[0], (typeof mounts)[0]];

  const t0 = performance.now();
  const cp = await bash(`cp -r ${q(vault)}/. ${q(a.mnt)}/`, 600_000);
  const cpMs = performance.now() - t0;
  check(cp.code === 0 && cp.stderr === "", `cp -r succeeds (${cp.code}: ${cp.stderr.slice(0, 300)})`);
  const sync = await bash(
    `TXTFS_CONFIG=${q(a.config)} ${q(process.execPath)} ${q(BIN)} sync ${q(a.mnt)} --timeout 600`,
    620_000,
  );
  const onServiceMs = performance.now() - t0;
  check(sync.code === 0, `txtfs sync succeeds (${sync.code}: ${sync.stdout}${sync.stderr})`);
  const idx = await fetch(`${url}/api/me/files`, {
    headers: { authorization: `Bearer ${key}` },
  }).then((r) => r.json() as Promise<{ files?: unknown[] }>);
  const serviceNotes = idx.files?.length ?? -1;
  check(
    serviceNotes === files.notes.length,
    `the service has ${files.notes.length} notes (got ${serviceNotes})`,
  );
  const serviceAttachments = await checkAttachments(url, key, vault, files);

  // Mount B: every file (notes and attachments) with the copied bytes (it follows the change feed).
  // Each poll stops at the first file not there yet, or not yet the same, and names it.
  const list = join(base, "files.txt");
  writeFileSync(list, `${[...files.notes, ...files.others].join("\n")}\n`);
  const same = `cd ${q(b.mnt)} && while IFS= read -r p; do cmp -s -- ${q(vault)}/"$p" "$p" || { printf '%s\\n' "$p"; exit 1; }; done < ${q(list)}`;
  const deadline = Date.now() + 600_000;
  for (;;) {
    const poll = await bash(same, 120_000);
    if (poll.code === 0) break;
    if (Date.now() >= deadline) {
      const p = poll.stdout.trim();
      const detail = await bash(
        `cd ${q(b.mnt)} && ls -l -- ${q(p)}; cmp -- ${q(vault)}/${q(p)} ${q(p)} 2>&1 | head -3`,
        60_000,
      );
      check(
        false,
        `mount B shows every file byte for byte within 600 s (not ${p}: ${detail.stdout}${detail.stderr})`,
      );
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const onSecondMs = performance.now() - t0;

  for (const m of [b, a]) {
    await m.daemon.stop(30_000);
    await unmountFuse(m.mnt);
    res.children.splice(res.children.indexOf(m.daemon), 1);
  }
  await server.stop(15_000);
  res.children.splice(res.children.indexOf(server), 1);
  return { cpMs, onServiceMs, onSecondMs, serviceNotes, serviceAttachments };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      vault: { type: "string" },
      runs: { type: "string" },
      out: { type: "string" },
      timeout: { type: "string" },
      help: { type: "boolean" },
    },
  });
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
    return;
  }
  const vault = resolve(values.vault ?? process.env.TXTFS_TEST_VAULT ?? "/work/vaults/obsidian-help");
  if (!existsSync(vault)) {
    process.stderr.write(`bench:vault: no vault at ${vault} (give --vault DIR or set TXTFS_TEST_VAULT)\n`);
    process.exit(2);
  }
  const runs = numberOption("runs", values.runs, 3, 1, true);
  const out = resolve(values.out ?? join(root, "bench-results/vault.md"));
  const files = listVault(vault);
  log(
    `${vault}: ${fmtInt(files.notes.length)} notes, ${fmtInt(files.others.length)} other files (${fmtInt(files.otherBytes)} bytes), ${fmtInt(files.bytes)} bytes`,
  );

  const res: Resources = { children: [], mountpoints: [] };
  const bases: string[] = [];
  const cleanup = async () => {
    for (const c of res.children.splice(0).reverse()) await c.stop(10_000).catch(() => "");
    for (const m of res.mountpoints) if (isMounted(m)) await unmountFuse(m).catch(() => undefined);
    for (const b of bases)
      if (!res.mountpoints.some((m) => m.startsWith(b) && isMounted(m)))
        rmSync(b, { recursive: true, force: true });
  };
  cleanUpOnStop(cleanup, numberOption("timeout", values.timeout, 900, 1), log);

  const figures: RunFigures[] = [];
  try {
    for (let r = 1; r <= runs; r++) {
      const base = mkdtempSync("/var/tmp/txtfs-bench-vault-");
      bases.push(base);
      const f = await oneRun(base, vault, files, res);
      log(
        `run ${r}: cp -r ${(f.cpMs / 1000).toFixed(2)} s, on the service ${(f.onServiceMs / 1000).toFixed(2)} s, on mount B ${(f.onSecondMs / 1000).toFixed(2)} s`,
      );
      figures.push(f);
      res.mountpoints.length = 0;
    }
  } finally {
    await cleanup();
  }

  const s = (pick: (f: RunFigures) => number) => (median(figures.map(pick)) / 1000).toFixed(2);
  const all = (pick: (f: RunFigures) => number) => figures.map((f) => (pick(f) / 1000).toFixed(2)).join(", ");
  const m = machineInfo();
  const report = [
    "# bench:vault",
    "",
    `${m.date}; ${m.cpus} CPUs (${m.cpuModel}), ${m.memory}, ${m.os}, Node ${m.node}, load ${m.load}.`,
    `Vault: ${vault}: ${fmtInt(files.notes.length)} notes and ${fmtInt(files.others.length)} other files (${fmtInt(files.otherBytes)} bytes), ${fmtInt(files.bytes)} bytes. ${runs} runs, each from an empty account and empty cache dirs; medians.`,
    "",
    markdownTable(
      ["figure", "median (s)", "runs (s)"],
      [
        ["`cp -r` into mount A returns", s((f) => f.cpMs), all((f) => f.cpMs)],
        [
          "every note and attachment on the service (`txtfs sync` returns)",
          s((f) => f.onServiceMs),
          all((f) => f.onServiceMs),
        ],
        ["mount B shows every file byte for byte", s((f) => f.onSecondMs), all((f) => f.onSecondMs)],
      ],
      ["l", "r", "l"],
    ),
    "",
    `Times from the start of \`cp -r\`. Checked in every run: the service has ${fmtInt(files.notes.length)} notes and ${fmtInt(files.others.length)} attachments, each at its path with its size and SHA-256 (GET /api/v1/attachments); mount B's figure includes its poll (each poll \`cmp\`s every file).`,
    "",
  ].join("\n");
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, report);
  process.stdout.write(report);
  log(`wrote ${out}`);
}

main().catch((err) => {
  process.stderr.write(`bench:vault: ${(err as Error).message}\n`);
  process.exit(1);
});
