// The mount with no key uses the identity signed in with `txtfs login` (its access token, refreshed
// before it expires).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import { requestSync } from "../../src/lib/mountControl.ts";
import { spawnLogin } from "../helpers/cli.ts";
import {
  type MountDirs,
  makeMountDirs,
  type RunningMount,
  removeMountDirs,
  sh,
  startMount,
} from "../helpers/mount.ts";
import { completeLogin } from "../helpers/oidc.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

let srv: TestServer;
let dirs: MountDirs;
let mount: RunningMount | undefined;

beforeAll(async () => {
  srv = await startTestServer({ devIdp: {} });
  dirs = makeMountDirs("txtfs-signin-");
});
afterAll(async () => {
  await mount?.stop();
  if (dirs) await removeMountDirs(dirs);
  await srv?.close();
});

test("txtfs mount --url without a key mounts the signed-in account", async () => {
  const login = await spawnLogin(["--url", srv.url], {
    TXTFS_CONFIG: dirs.config,
    TXTFS_URL: "",
    TXTFS_API_KEY: "",
  });
  expect((await completeLogin(login.authUrl, "alice", "alice-password")).status).toBe(200);
  expect(await login.exited).toBe(0);
  const token = JSON.parse(readFileSync(join(dirs.config, "config.json"), "utf8")).signIn
    .accessToken as string;
  const alice = srv.client(token);
  expect((await alice.post("/api/v1/files", { name: "remote.md", content: "# from the API\n" })).status).toBe(
    201,
  );

  mount = await startMount(dirs, { service: { url: srv.url } });
  const listed = await sh(
    `cat '${mount.mnt}/remote.md' && echo '# from the mount' > '${mount.mnt}/local.md'`,
    { cwd: "/" },
  );
  expect(listed.code, listed.stderr).toBe(0);
  expect(listed.stdout).toBe("# from the API\n");
  expect((await requestSync(dirs.cache)).pending).toBe(0); // saves are write-behind
  const files = (await alice.get("/api/me/files")).body.files.map((f: { name: string }) => f.name).sort();
  expect(files).toEqual(["local.md", "remote.md"]);
});
