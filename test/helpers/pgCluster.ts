// A throwaway PostgreSQL cluster for tests and benchmarks: Debian's server binaries, initdb into a
// temp dir, listening on 127.0.0.1 and a free port only. initdb refuses root, so as root the
// cluster runs as the `postgres` system user. Stopped with `stop()` (immediate), then deleted.
import { execFileSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";

export interface PgCluster {
  /** Superuser URL of the `postgres` database. */
  url: string;
  port: number;
  dir: string;
  stop(): void;
}

/** The newest Debian PostgreSQL server binaries, or undefined if none is installed. */
export function pgBinDir(): string | undefined {
  const base = "/usr/lib/postgresql";
  if (!existsSync(base)) return undefined;
  const versions = readdirSync(base)
    .filter((v) => existsSync(join(base, v, "bin", "initdb")))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? join(base, versions[0], "bin") : undefined;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

export async function startPgCluster(opts: { durable?: boolean } = {}): Promise<PgCluster> {
  const bin = pgBinDir();
  if (!bin) throw new Error("PostgreSQL is not installed (apt-get install postgresql, or scripts/setup)");
  const dir = mkdtempSync(join(tmpdir(), "txtfs-pg-"));
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const uid = Number(execFileSync("id", ["-u", "postgres"]).toString());
    const gid = Number(execFileSync("id", ["-g", "postgres"]).toString());
    chownSync(dir, uid, gid);
  }
  const run = (cmd: string, args: string[]) => {
    const [file, argv] = asRoot
      ? ["runuser", ["-u", "postgres", "--", join(bin, cmd), ...args]]
      : [join(bin, cmd), args];
    return execFileSync(file, argv, { stdio: ["ignore", "pipe", "pipe"], timeout: 60_000 }).toString();
  };
  const data = join(dir, "data");
  run("initdb", ["-D", data, "-U", "postgres", "--auth=trust", "--locale=C", "--encoding=UTF8", "-N"]);
  const port = await freePort();
  // Tests trade durability for speed (fsync off); the benchmark keeps PostgreSQL's defaults.
  const settings = [
    `-p ${port}`,
    "-h 127.0.0.1",
    `-k ${dir}`,
    "-c max_connections=400",
    "-c shared_buffers=64MB",
    ...(opts.durable ? [] : ["-c fsync=off", "-c synchronous_commit=off", "-c full_page_writes=off"]),
  ];
  run("pg_ctl", ["-D", data, "-o", settings.join(" "), "-l", join(dir, "log"), "-w", "-t", "60", "start"]);
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    dir,
    stop() {
      try {
        run("pg_ctl", ["-D", data, "-m", "immediate", "-w", "-t", "30", "stop"]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

let created = 0;

/** Creates a fresh database in the cluster and returns its URL. */
export async function createDatabase(adminUrl: string, prefix = "txtfs"): Promise<string> {
  const name = `${prefix}_${process.pid}_${++created}_${Math.random().toString(36).slice(2, 8)}`;
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE "${name}"`);
  } finally {
    await client.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Drops a database made by createDatabase, disconnecting anyone still on it. */
export async function dropDatabase(dbUrl: string): Promise<void> {
  const url = new URL(dbUrl);
  const name = url.pathname.slice(1);
  url.pathname = "/postgres";
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  } finally {
    await client.end();
  }
}
