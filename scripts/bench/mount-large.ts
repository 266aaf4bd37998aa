// How many requests and how long a mount of a large account takes, and the catch-up after the
// service was away: `node scripts/bench/mount-large.ts [FILES=10000]`. A real `txtfs serve` (its
// request log counts the requests) and a real `txtfs mount --url` in other processes.
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const ROOT = join(import.meta.dirname, "..", "..");
const BIN = join(ROOT, "bin", "txtfs");
const FILES = Number(process.argv[2] ?? 10_000);
const base = mkdtempSync(join(tmpdir(), "txtfs-large-"));
const env = { ...process.env, TXTFS_CONFIG: join(base, "config"), TXTFS_CACHE: join(base, "cache") };
const requests: string[] = [];

function start(
  args: string[],
  extraEnv: Record<string, string>,
  ready: RegExp,
  onLine?: (l: string) => void,
) {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { ...env, ...extraEnv },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stderr!.on("data", (d) => {
    err += d;
    if (onLine) for (const l of String(d).split("\n")) onLine(l);
  });
  return new Promise<{ child: ChildProcess; out: () => string }>((resolve, reject) => {
    child.stdout!.on("data", (d) => {
      out += d;
      if (ready.test(out)) resolve({ child, out: () => out });
    });
    child.once("exit", (code) => reject(new Error(`${args[0]} exited ${code}: ${out}\n${err}`)));
  });
}

async function api(
  url: string,
  key: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ files: { id: string }[] }> {
  const res = await fetch(url + path, {
    method,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as { files: { id: string }[] };
}

const stop = async (c: ChildProcess) => {
  c.kill("SIGTERM");
  await new Promise((r) => c.once("exit", r));
};

const mnt = join(base, "mnt");
mkdirSync(mnt);
let serve: ChildProcess | undefined;
let mount: ChildProcess | undefined;
try {
  const s = await start(
    ["serve", "--port", "0", "--data", join(base, "data")],
    { TXTFS_LOG_REQUESTS: "1" },
    /TXTFS_API_KEY=txt_\w+/,
    (l) => {
      if (l.includes('"msg":"incoming request"')) requests.push(JSON.parse(l).req.url.split("?")[0]);
    },
  );
  serve = s.child;
  const url = /^txtfs (http:\/\/\S+)/m.exec(s.out())![1]!;
  const key = /TXTFS_API_KEY=(txt_\w+)/.exec(s.out())![1]!;
  for (let i = 0; i < FILES; i += 1000) {
    const files = Array.from({ length: Math.min(1000, FILES - i) }, (_, j) => ({
      path: `folder${(i + j) % 100}/note${i + j}.md`,
      content: `# Note ${i + j}\n${"lorem ipsum ".repeat(20)}\n`,
    }));
    await api(url, key, "POST", "/api/v1/files/import", { files });
  }
  const before = requests.length;
  const t0 = performance.now();
  const m = await start(["mount", mnt, "--url", url, "--key", key, "--poll-wait", "25"], {}, /mounted /);
  mount = m.child;
  const mountMs = performance.now() - t0;
  const reported = /mounted \S+ \((\d+) ms\)/.exec(m.out())?.[1];
  await new Promise((r) => setTimeout(r, 500));
  const atMount = requests.slice(before);
  const count = spawnSync("bash", ["-c", `find '${mnt}' -name '*.md' | wc -l`], {
    encoding: "utf8",
  }).stdout.trim();

  // Catch-up: 1,000 remote edits in 10 batches while the mount follows; how many requests it takes.
  const index = await api(url, key, "GET", "/api/me/files");
  const mark = requests.length;
  for (let i = 0; i < 1000; i += 100) {
    const operations = index.files.slice(i, i + 100).map((f) => ({
      op: "file.update",
      target: f.id,
      body: { tags: ["edited"] },
    }));
    await api(url, key, "POST", "/api/v1/batch", { operations });
  }
  await new Promise((r) => setTimeout(r, 2000));
  const followed = requests.slice(mark).filter((p) => p === "/api/v1/changes").length;

  const kinds = new Map<string, number>();
  for (const p of atMount) {
    const k = p.replace(/\/(f|d|dv)_[0-9A-Za-z]{20,}/g, "/:id");
    kinds.set(k, (kinds.get(k) ?? 0) + 1);
  }
  console.log(`files: ${FILES} (find sees ${count})`);
  console.log(
    `mount: ${Math.round(mountMs)} ms wall to "mounted" (daemon reports ${reported} ms for the listing)`,
  );
  console.log(
    `requests during mount: ${atMount.length} (${[...kinds].map(([k, n]) => `${k} ${n}`).join(", ")})`,
  );
  console.log(`1,000 remote edits (10 batch requests) followed with ${followed} change-feed requests`);
} finally {
  if (mount) await stop(mount);
  if (serve) await stop(serve);
  spawnSync("fusermount", ["-uz", mnt]);
  rmSync(base, { recursive: true, force: true });
}
