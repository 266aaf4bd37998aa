// The sshfs baseline of the mount benchmarks: a throwaway OpenSSH sshd on 127.0.0.1 (its own host
// key, client key and config under the benchmark's base dir, nothing of the machine's own ssh
// setup) and a Debian sshfs (default options) mounted over it. Shared by mount.ts and mount-large.ts.
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createConnection, createServer } from "node:net";
import { join } from "node:path";
import { type ChildServer, startChild } from "./lib.ts";

/** What the caller stops and removes at the end (also on failure). */
export interface SshfsResources {
  children: ChildServer[];
  mountpoints: string[];
  /** Set when /run/sshd was made here (the caller removes it again). */
  createdRunSshd: boolean;
}

export interface Sshfs {
  /** The sshfs mountpoint. */
  mnt: string;
  port: number;
  sshdPid: number;
  /** Starts sshfs and resolves once the mount is in the mount table. */
  mount(): Promise<void>;
  /** Unmounts and waits for sshfs to exit (it exits by itself once unmounted). */
  unmount(): Promise<void>;
  /** The running sshfs process, if mounted. */
  pid(): number | undefined;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Whether `dir` is a mountpoint right now (from /proc/mounts: never touches the mount). */
export function isMounted(dir: string): boolean {
  const escaped = dir.replace(/ /g, "\\040");
  return readFileSync("/proc/mounts", "utf8")
    .split("\n")
    .some((line) => line.split(" ")[1] === escaped);
}

/** Every mountpoint at or below `base`. */
export function mountsUnder(base: string): string[] {
  return readFileSync("/proc/mounts", "utf8")
    .split("\n")
    .map((line) => line.split(" ")[1] ?? "")
    .filter((m) => m === base || m.startsWith(`${base}/`));
}

export async function waitFor(
  what: string,
  cond: () => boolean,
  timeoutMs: number,
  pollMs = 50,
): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > until) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(pollMs);
  }
}

/** Runs a command in a child process; rejects with its stderr when it fails. */
function run(command: string, args: string[], timeoutMs = 20_000): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { timeout: timeoutMs, killSignal: "SIGKILL" }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${command} ${args.join(" ")}: ${err.message}\n${stderr}`));
      else resolve(stdout);
    });
  });
}

/** Unmounts a FUSE mount (no-op when not mounted): politely, then lazily. */
export async function unmountFuse(dir: string): Promise<void> {
  if (!isMounted(dir)) return;
  await run(
    "bash",
    ["-c", `fusermount -u '${dir}' 2>/dev/null || fusermount -uz '${dir}' 2>/dev/null || umount -l '${dir}'`],
    20_000,
  ).catch(() => {});
}

function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolvePort(port));
    });
  });
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolveConn) => {
    const s = createConnection({ host: "127.0.0.1", port });
    s.once("connect", () => {
      s.destroy();
      resolveConn(true);
    });
    s.once("error", () => resolveConn(false));
  });
}

/** A child that has ended is no longer ours to stop. */
function forget(res: SshfsResources, child: ChildServer): void {
  const i = res.children.indexOf(child);
  if (i >= 0) res.children.splice(i, 1);
}

/**
 * Starts the sshd (keys and config in `<base>/ssh`) serving `remote` and mounts it with sshfs on
 * `mnt` (made here), unless `mountNow` is false. Every process goes into `res.children`, the
 * mountpoint into `res.mountpoints`.
 */
export async function startSshfs(opts: {
  base: string;
  remote: string;
  mnt: string;
  res: SshfsResources;
  log: (msg: string) => void;
  /** How often to look for the mount in the mount table (a timed mount wants it fine-grained). */
  pollMs?: number;
  /** Mount at once (default) or leave the first mount to the caller (to time it). */
  mountNow?: boolean;
  /** More sshfs `-o` options (scripts/pjdfstest: allow_other,default_permissions). */
  options?: string[];
}): Promise<Sshfs> {
  const { base, remote, mnt, res, log, pollMs = 50, mountNow = true, options = [] } = opts;
  const sshDir = join(base, "ssh");
  for (const d of [sshDir, mnt]) mkdirSync(d, { mode: 0o700 });
  await run("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", `${sshDir}/host_key`]);
  await run("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", `${sshDir}/client_key`]);
  writeFileSync(join(sshDir, "authorized_keys"), readFileSync(join(sshDir, "client_key.pub")));
  const port = await freePort();
  writeFileSync(
    join(sshDir, "sshd_config"),
    [
      `Port ${port}`,
      "ListenAddress 127.0.0.1",
      `HostKey ${sshDir}/host_key`,
      `PidFile ${sshDir}/sshd.pid`,
      `AuthorizedKeysFile ${sshDir}/authorized_keys`,
      "PermitRootLogin prohibit-password",
      "PubkeyAuthentication yes",
      "PasswordAuthentication no",
      "KbdInteractiveAuthentication no",
      "UsePAM no",
      "StrictModes no", // the key lives under /var/tmp (world-writable parent)
      "Subsystem sftp /usr/lib/openssh/sftp-server",
      "LogLevel ERROR",
      "",
    ].join("\n"),
  );
  // sshd insists on its privilege-separation directory (normally made by systemd at boot).
  if (!existsSync("/run/sshd")) {
    mkdirSync("/run/sshd", { mode: 0o755 });
    res.createdRunSshd = true;
  }
  const sshd = startChild("sshd", "/usr/sbin/sshd", ["-D", "-e", "-f", join(sshDir, "sshd_config")], {
    cwd: "/",
  });
  res.children.push(sshd);
  const until = Date.now() + 15_000;
  while (!(await canConnect(port))) {
    if (Date.now() > until) throw new Error(`sshd did not listen on ${port}:\n${sshd.stderrTail()}`);
    await sleep(50);
  }
  log(`sshd (pid ${sshd.pid}) on 127.0.0.1:${port}`);
  res.mountpoints.push(mnt);

  let sshfs: ChildServer | undefined;
  const mount = async () => {
    sshfs = startChild(
      "sshfs",
      "sshfs",
      [
        "-f",
        `root@127.0.0.1:${remote}`,
        mnt,
        "-p",
        String(port),
        "-o",
        [
          `IdentityFile=${sshDir}/client_key,StrictHostKeyChecking=no,UserKnownHostsFile=/dev/null,BatchMode=yes,LogLevel=ERROR`,
          ...options,
        ].join(","),
      ],
      { cwd: "/" },
    );
    res.children.push(sshfs);
    await waitFor("the sshfs mount", () => isMounted(mnt), 20_000, pollMs).catch((err: Error) => {
      throw new Error(`${err.message}\n${sshfs?.stderrTail()}`);
    });
  };
  const unmount = async () => {
    if (!sshfs) return;
    const s = sshfs;
    sshfs = undefined;
    await unmountFuse(mnt);
    const how = await s.stop(5000); // sshfs exits by itself once unmounted
    if (how !== "exit code 0" && how !== "signal SIGTERM") log(`sshfs (pid ${s.pid}) ended with ${how}`);
    forget(res, s);
    if (isMounted(mnt)) throw new Error(`check failed: ${mnt} is unmounted`);
  };
  if (mountNow) await mount();
  return { mnt, port, sshdPid: sshd.pid, mount, unmount, pid: () => sshfs?.pid };
}
