// Every acknowledged write survives kill -9, whatever raced with it: 32 writers, each on a note of
// its own, PUT numbered versions until the server has acknowledged enough of them, then the server
// is killed with SIGKILL mid-stream and started again on the same store. Each note must hold its
// last acknowledged version or the one that was on its way — never an older one, never another
// writer's. On SQLite this proves group commit (many writes share one COMMIT); on PostgreSQL, the
// same promise of its commits.

import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BIN, type ServeProcess, spawnServe } from "../helpers/cli.ts";
import { createDatabase } from "../helpers/pgCluster.ts";
import { testPgUrl } from "../helpers/storeUnderTest.ts";

const WRITERS = 32;
const ACKED_BEFORE_KILL = 400;

const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

async function storeArgs(): Promise<string[]> {
  const data = mkdtempSync(join(tmpdir(), "txtfs-durable-"));
  cleanup.push(() => rmSync(data, { recursive: true, force: true }));
  const pg = testPgUrl();
  return pg ? ["--data", data, "--db", await createDatabase(pg)] : ["--data", data];
}

async function put(url: string, key: string, id: string, content: string) {
  const res = await fetch(`${url}/api/v1/files/${id}`, {
    method: "PUT",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ content }),
  });
  if (res.status !== 200) throw new Error(`PUT ${res.status}`);
  await res.arrayBuffer();
}

describe("acknowledged writes and kill -9", () => {
  it("32 concurrent writers: after SIGKILL and a restart every note holds its last acknowledged version or a newer one", async () => {
    const args = await storeArgs();
    let server: ServeProcess = await spawnServe([...args, "--rate-limit", "100000000"]);
    cleanup.push(() => server.stop());
    const email = "writer@localhost";
    const admin = (cmd: string[]) =>
      execFileSync(process.execPath, [BIN, "admin", ...cmd, ...args], { encoding: "utf8" }).trim();
    admin(["user", "add", email]);
    const key = admin(["key", "add", email]).split("\n").at(-1)!;

    const ids: string[] = [];
    for (let w = 0; w < WRITERS; w++) {
      const res = await fetch(`${server.url}/api/v1/files`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ name: `w${w}.md`, content: `w${w} v0` }),
      });
      expect(res.status).toBe(201);
      ids.push(((await res.json()) as { file: { id: string } }).file.id);
    }

    const acked = ids.map(() => 0); // the last version each writer saw acknowledged
    const sent = ids.map(() => 0); // the last version each writer sent
    let total = 0;
    let killed!: () => void;
    const kill = new Promise<void>((resolve) => {
      killed = resolve;
    });
    const writers = ids.map(async (id, w) => {
      for (let v = 1; ; v++) {
        sent[w] = v;
        try {
          await put(server.url, key, id, `w${w} v${v}`);
        } catch {
          return; // the server is gone: this write may or may not have committed
        }
        acked[w] = v;
        if (++total === ACKED_BEFORE_KILL) {
          server.child.kill("SIGKILL");
          killed();
        }
      }
    });
    await kill;
    await Promise.all(writers);
    await server.exited;
    expect(total).toBeGreaterThanOrEqual(ACKED_BEFORE_KILL);

    server = await spawnServe(args);
    for (const [w, id] of ids.entries()) {
      const res = await fetch(`${server.url}/api/v1/files/${id}/raw`, {
        headers: { authorization: `Bearer ${key}` },
      });
      expect(res.status).toBe(200);
      const body = await res.text();
      const m = /^w(\d+) v(\d+)$/.exec(body);
      expect(m, body).not.toBeNull();
      expect(Number(m![1]), "another writer's bytes").toBe(w);
      const v = Number(m![2]);
      expect(v, `w${w}: acknowledged v${acked[w]}, holds v${v}`).toBeGreaterThanOrEqual(acked[w]!);
      expect(v, `w${w}: never sent v${v}`).toBeLessThanOrEqual(sent[w]!);
    }
  }, 90_000);
});
