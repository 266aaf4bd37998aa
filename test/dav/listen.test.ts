// Where `txtfs dav` listens and what it lets change: HTTPS with --tls-cert/--tls-key (beyond
// loopback too), --insecure-listen for plain HTTP beyond it, --read-only refusing every change.
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { type RunningDav, startDav } from "../helpers/dav.ts";
import {
  contentAt,
  findByPath,
  type MountDirs,
  makeMountDirs,
  q,
  removeMountDirs,
  sh,
} from "../helpers/mount.ts";

const started: RunningDav[] = [];
const made: MountDirs[] = [];
afterEach(async () => {
  for (const d of started.splice(0)) await d.stop();
  for (const d of made.splice(0)) await removeMountDirs(d);
});

async function dav(args: string[]) {
  const dirs = makeMountDirs("txtfs-dav-listen-");
  made.push(dirs);
  const d = await startDav(dirs, { args });
  started.push(d);
  return { dirs, d };
}

it("serves HTTPS with --tls-cert and --tls-key, also on an address beyond loopback", {
  timeout: 60_000,
}, async () => {
  const dirs = makeMountDirs("txtfs-dav-tls-");
  made.push(dirs);
  const cert = join(dirs.base, "cert.pem");
  const key = join(dirs.base, "key.pem");
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-days",
      "1",
      "-subj",
      "/CN=127.0.0.1",
      "-keyout",
      key,
      "-out",
      cert,
    ],
    { stdio: "ignore" },
  );
  const d = await startDav(dirs, { args: ["--addr", "0.0.0.0:0", "--tls-cert", cert, "--tls-key", key] });
  started.push(d);
  expect(d.url).toMatch(/^https:\/\/0\.0\.0\.0:\d+\/$/);
  const url = d.url.replace("0.0.0.0", "127.0.0.1");
  const put = await sh(
    `curl -sk -o /dev/null -w '%{http_code}' -u txtfs:${q(d.key)} -T - ${q(`${url}tls.md`)} <<< 'over tls'`,
    { cwd: "/" },
  );
  expect(put.stdout).toBe("201");
  await expect.poll(() => contentAt(d.api, "tls.md"), { timeout: 15_000 }).toBe("over tls\n");
  const plain = await sh(`curl -s -o /dev/null -w '%{http_code}' ${q(url.replace("https:", "http:"))}`, {
    cwd: "/",
  });
  expect(plain.stdout).not.toBe("200"); // no plain HTTP on a TLS port
});

it("--insecure-listen serves plain HTTP beyond loopback, still behind the key", async () => {
  const { d } = await dav(["--addr", "0.0.0.0:0", "--insecure-listen"]);
  const url = d.url.replace("0.0.0.0", "127.0.0.1");
  const anonymous = await sh(`curl -s -o /dev/null -w '%{http_code}' ${q(url)}`, { cwd: "/" });
  expect(anonymous.stdout).toBe("401");
});

it("--read-only refuses every change with 403 and changes nothing", async () => {
  const { d } = await dav(["--read-only"]);
  expect(d.stdout()).toMatch(/^txtfs dav \S+ \(cache: .*\) read-only: /m);
  expect((await d.dav("PUT", "/new.md", { body: "no\n" })).status).toBe(403);
  expect((await d.dav("MKCOL", "/dir")).status).toBe(403);
  expect((await d.dav("PROPFIND", "/", { headers: { depth: "1" } })).status).toBe(207);
  expect(await findByPath(d.api, "new.md")).toBeUndefined();
  expect(await findByPath(d.api, "dir")).toBeUndefined();
});
