// WebDAV beside the FUSE mount, in one run on loopback: PROPFIND depth 1 of a 1,000-note folder,
// GET of a note (cold, then warm), PUT of 500 notes, and through davfs2 `ls -lR` and `grep -r`.
// Measured on `txtfs dav` (the vfs), `/dav/` on `txtfs serve` (the store), the FUSE mount's
// equivalent operations, and `rclone serve webdav` over a local directory of the same files.
//
//   node scripts/bench/dav.ts [--notes 1000] [--puts 500] [--reps 5]
import { execFileSync } from "node:child_process";
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  argValue,
  cleanEnv,
  cleanUpOnStop,
  fmtMs,
  machineInfo,
  markdownTable,
  median,
  numberOption,
  startChild,
} from "./lib.ts";

const arg = argValue;
const NOTES = numberOption("notes", arg("notes"), 1000, 10, true);
const PUTS = numberOption("puts", arg("puts"), 500, 10, true);
const REPS = numberOption("reps", arg("reps"), 5, 1, true);
if (REPS * 5 > NOTES) throw new Error("--reps: at most a fifth of --notes (each reader takes its own notes)");
const BIN = join(import.meta.dirname, "..", "..", "bin", "txtfs");
const log = (m: string) => process.stderr.write(`bench:dav: ${m}\n`);

const base = mkdtempSync("/var/tmp/txtfs-bench-dav-");
chmodSync(base, 0o755); // davfs2 runs as its own user
const dirs = Object.fromEntries(
  ["data", "cache", "davcache", "mnt", "davfs", "local", "config"].map((d) => [d, join(base, d)]),
) as Record<string, string>;
for (const d of Object.values(dirs)) mkdirSync(d);
const env = cleanEnv({ TXTFS_CONFIG: dirs.config!, TXTFS_CACHE: dirs.cache! });
const children: ReturnType<typeof startChild>[] = [];
const mounted: string[] = [];
const cleanup = async () => {
  for (const m of mounted.splice(0)) {
    try {
      execFileSync("umount", [m], { stdio: "ignore" });
    } catch {
      execFileSync("umount", ["-l", m], { stdio: "ignore" });
    }
  }
  for (const c of children.splice(0).reverse()) await c.stop();
  rmSync(base, { recursive: true, force: true });
};
cleanUpOnStop(cleanup, 1800, log);

const time = async (fn: () => Promise<unknown>) => {
  const t = performance.now();
  await fn();
  return performance.now() - t;
};
const shTime = (script: string, cwd = "/") => {
  const t = performance.now();
  execFileSync("bash", ["-c", script], { cwd, stdio: ["ignore", "ignore", "inherit"], maxBuffer: 1 << 26 });
  return performance.now() - t;
};
const auth = (key: string) => `Basic ${Buffer.from(`bench:${key}`).toString("base64")}`;
async function req(
  url: string,
  key: string,
  method: string,
  body?: string,
  headers: Record<string, string> = {},
) {
  const res = await fetch(url, { method, body, headers: { authorization: auth(key), ...headers } });
  const text = await res.text();
  if (res.status >= 400) throw new Error(`${method} ${url}: ${res.status} ${text.slice(0, 200)}`);
  return text;
}

try {
  // --- the service, seeded with a folder of NOTES notes (and the same files on local disk for rclone)
  const serve = startChild(
    "serve",
    process.execPath,
    [BIN, "serve", "--data", dirs.data!, "--port", "0", "--rate-limit", "100000000"],
    { env },
  );
  children.push(serve);
  const serviceUrl = (await serve.waitForLine(/^txtfs (http:\/\/\S+)/, 30_000))[1]!;
  const key = (await serve.waitForLine(/TXTFS_API_KEY=(txt_\w+)/, 30_000))[1]!;
  const api = (path: string, json: unknown) =>
    fetch(serviceUrl + path, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify(json),
    }).then((r) => r.json() as Promise<{ folder: { id: string } }>);
  const folder = (await api("/api/v1/folders", { name: "big", parentFolderId: null })).folder.id;
  mkdirSync(join(dirs.local!, "big"));
  const body = (i: number) =>
    `# Note ${i}\n\n${"Some words about the topic of this note. ".repeat(20)}\nneedle-${i}\n`;
  log(`seeding ${NOTES} notes`);
  for (let i = 0; i < NOTES; i += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, NOTES - i) }, (_, j) =>
        api("/api/v1/files", { name: `n${i + j}.md`, folderId: folder, content: body(i + j) }),
      ),
    );
  }
  for (let i = 0; i < NOTES; i++) writeFileSync(join(dirs.local!, "big", `n${i}.md`), body(i));

  // --- the three WebDAV servers and the FUSE mount, all on that service
  const dav = startChild(
    "dav",
    process.execPath,
    [BIN, "dav", "--url", serviceUrl, "--addr", "127.0.0.1:0", "--cache-dir", join(base, "dav-vfs")],
    {
      env: { ...env, TXTFS_API_KEY: key },
    },
  );
  children.push(dav);
  const davUrl = (await dav.waitForLine(/^txtfs dav (\S+)/, 60_000))[1]!;
  const rclone = startChild("rclone", "rclone", [
    "serve",
    "webdav",
    dirs.local!,
    "--addr",
    "127.0.0.1:0",
    "--user",
    "bench",
    "--pass",
    key,
  ]);
  children.push(rclone);
  const rcloneUrl = await new Promise<string>((resolve, reject) => {
    const deadline = Date.now() + 20_000;
    const poll = () => {
      const m =
        /Serving on (http:\/\/\S+?)\/?$/m.exec(rclone.stderrTail()) ??
        /(http:\/\/127\.0\.0\.1:\d+)\//.exec(rclone.stderrTail());
      if (m) return resolve(`${m[1]!.replace(/\/$/, "")}/`);
      if (Date.now() > deadline) return reject(new Error(`rclone did not start: ${rclone.stderrTail()}`));
      setTimeout(poll, 100);
    };
    poll();
  });
  const mount = startChild(
    "mount",
    process.execPath,
    [BIN, "mount", dirs.mnt!, "--url", serviceUrl, "--cache-dir", join(base, "mount-vfs")],
    {
      env: { ...env, TXTFS_API_KEY: key },
    },
  );
  children.push(mount);
  await mount.waitForLine(/^mounted /, 60_000);
  mounted.push(dirs.mnt!);
  const servers = [
    { name: "txtfs dav", url: davUrl },
    { name: "serve /dav/", url: `${serviceUrl}/dav/` },
    { name: "rclone serve webdav", url: rcloneUrl },
  ];

  const rows: string[][] = [];
  const row = (what: string, values: number[]) => rows.push([what, ...values.map(fmtMs)]);

  // PROPFIND depth 1 of the folder; the mount's equivalent is `ls -l` (a child process: its start included)
  const propfind = async (url: string) => {
    const out: number[] = [];
    for (let r = 0; r < REPS; r++)
      out.push(await time(() => req(`${url}big/`, key, "PROPFIND", undefined, { depth: "1" })));
    return median(out);
  };
  const ls: number[] = [];
  for (let r = 0; r < REPS; r++) ls.push(shTime(`ls -l ${dirs.mnt}/big > /dev/null`));
  row(`PROPFIND depth 1, ${NOTES} notes (mount: ls -l)`, [
    ...(await Promise.all(servers.map((s) => propfind(s.url)))),
    median(ls),
  ]);

  // GET: cold (a note not read before, each server its own), then warm (the same note again)
  const getTimes = async (url: string, from: number) => {
    const cold: number[] = [];
    const warm: number[] = [];
    for (let r = 0; r < REPS; r++) cold.push(await time(() => req(`${url}big/n${from + r}.md`, key, "GET")));
    for (let r = 0; r < REPS; r++) warm.push(await time(() => req(`${url}big/n${from}.md`, key, "GET")));
    return { cold: median(cold), warm: median(warm) };
  };
  const gets = [];
  // Distinct notes per server and for the mount, so that no one reads another's cached note.
  const slot = (i: number) => Math.floor((NOTES / 5) * (i + 1));
  for (const [i, s] of servers.entries()) gets.push(await getTimes(s.url, slot(i)));
  const catCold: number[] = [];
  const catWarm: number[] = [];
  const own = slot(servers.length);
  for (let r = 0; r < REPS; r++) catCold.push(shTime(`cat ${dirs.mnt}/big/n${own + r}.md > /dev/null`));
  for (let r = 0; r < REPS; r++) catWarm.push(shTime(`cat ${dirs.mnt}/big/n${own}.md > /dev/null`));
  row("GET of a note, cold (mount: cat)", [...gets.map((g) => g.cold), median(catCold)]);
  row("GET of a note, warm (mount: cat)", [...gets.map((g) => g.warm), median(catWarm)]);

  // PUT of PUTS new notes, one after another (mount: a shell loop of printf > file)
  const putAll = async (url: string, dir: string) => {
    await req(`${url}${dir}/`, key, "MKCOL");
    return time(async () => {
      for (let i = 0; i < PUTS; i++) await req(`${url}${dir}/p${i}.md`, key, "PUT", `put ${i}\n`);
    });
  };
  const puts = [];
  for (const [i, s] of servers.entries()) puts.push(await putAll(s.url, `put${i}`));
  const loop = shTime(
    `mkdir put-m && for i in $(seq 0 ${PUTS - 1}); do printf 'put %s\\n' $i > put-m/p$i.md; done`,
    dirs.mnt,
  );
  row(`PUT of ${PUTS} notes, total (mount: shell loop)`, [...puts, loop]);

  // davfs2 over txtfs dav: ls -lR and grep -r of the folder
  let davfs: string[] | undefined;
  try {
    execFileSync("sh", ["-c", "command -v mount.davfs"]);
    const gid = Number(execFileSync("id", ["-g", "davfs2"], { encoding: "utf8" }));
    chownSync(dirs.davcache!, 0, gid);
    chmodSync(dirs.davcache!, 0o775);
    writeFileSync(join(base, "secrets"), `${davUrl} bench ${key}\n`, { mode: 0o600 });
    writeFileSync(
      join(base, "davfs2.conf"),
      `secrets ${join(base, "secrets")}\ncache_dir ${dirs.davcache}\nbuf_size 64\n`,
    );
    execFileSync("mount", ["-t", "davfs", davUrl, dirs.davfs!, "-o", `conf=${join(base, "davfs2.conf")}`], {
      stdio: "ignore",
    });
    mounted.unshift(dirs.davfs!);
    const lsR = shTime(`ls -lR ${dirs.davfs}/big > /dev/null`);
    const grep = shTime(`grep -rl needle-7 ${dirs.davfs}/big > /dev/null`);
    const grepWarm = shTime(`grep -rl needle-7 ${dirs.davfs}/big > /dev/null`);
    const mountLsR = shTime(`ls -lR ${dirs.mnt}/big > /dev/null`);
    const mountGrep = shTime(`grep -rl needle-7 ${dirs.mnt}/big > /dev/null`);
    davfs = [
      `| davfs2 \`ls -lR\` of the folder | ${fmtMs(lsR)} | (mount: ${fmtMs(mountLsR)}) |`,
      `| davfs2 \`grep -r\`, first / again | ${fmtMs(grep)} / ${fmtMs(grepWarm)} | (mount: ${fmtMs(mountGrep)}) |`,
    ];
  } catch (err) {
    log(`davfs2 skipped: ${(err as Error).message}`);
  }

  const m = machineInfo();
  process.stdout.write(
    `WebDAV beside the FUSE mount (${m.date}; ${m.cpus} CPUs, ${m.cpuModel}, load ${m.load}; ${NOTES} notes, median of ${REPS}), ms\n\n`,
  );
  process.stdout.write(
    `${markdownTable(["operation", ...servers.map((s) => s.name), "FUSE mount"], rows, ["l", "r", "r", "r", "r"])}\n`,
  );
  if (davfs)
    process.stdout.write(`\n| through davfs2 over txtfs dav | ms | |\n|---|--:|---|\n${davfs.join("\n")}\n`);
} finally {
  await cleanup();
}
process.exit(0);
