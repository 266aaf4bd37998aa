// txtfs mount (and, registered beside it, unmount, sync and status).
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, fchmodSync, fstatSync, mkdirSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { type Command, Option } from "commander";
import type { TxtfsClient } from "../client/api.ts";
import type { StoredSignIn } from "../client/signIn.ts";
import { recordCacheOwner, rememberCacheDir } from "../lib/cacheDirs.ts";
import type { Logger } from "../lib/logger.ts";
import { LOG_LEVELS } from "../lib/logLevels.ts";
import { listMounts } from "../lib/mountRegistry.ts";
import { cacheDir, dataDir } from "../lib/paths.ts";
import type { BrainConfig } from "../server/domain/brain/config.ts";
import { addAiOptions, aiOptionsTyped, brainOptions } from "./aiOptions.ts";
import { announceDaemon } from "./announceDaemon.ts";
import { attachmentLimits } from "./attachmentLimits.ts";
import { readCliConfig, resolveCredentials } from "./credentials.ts";
import { hideKeyArgument, KEY_ENV } from "./keyArgument.ts";
import {
  adoptOrphanedJournal,
  keyHash,
  mountCacheDir,
  rememberedPort,
  rememberPort,
} from "./mountIdentity.ts";
import { describeRefusal, savesWord, waitWord } from "./notOnService.ts";
import { logFormatOption, parseId, parsePollWait, parseSize, parseUrl, UsageError } from "./options.ts";
import { checkCacheDirWritable, checkNotMounted, explainConnectError } from "./preflight.ts";
import { registerStatus } from "./status.ts";
import { registerSync } from "./sync.ts";
import { registerUnmount } from "./unmount.ts";
import { BIN_ARGS } from "./version.ts";

// What the mount's actions need is imported when they run (see main.ts): the service, FUSE and the
// vfs are the bulk of the program, and `status` or `--help` need none of them.
const lazy = {
  client: () => import("../client/api.ts"),
  signIn: () => import("../client/signIn.ts"),
  fuse: () => import("../fuse/index.ts"),
  logger: () => import("../lib/logger.ts"),
  accounts: () => import("../server/domain/accounts.ts"),
  server: () => import("../server/serve.ts"),
  vfs: () => import("../vfs/vfs.ts"),
  device: () => import("./device.ts"),
  memory: () => import("../lib/memoryMode.ts"),
  notify: () => import("../lib/sdNotify.ts"),
  watch: () => import("../lib/mountWatch.ts"),
  excludes: () => import("../vfs/local/excludes.ts"),
};

/** Refresh the signed-in access token this long before it expires (a mount outlives tokens). */
const SIGNED_IN_MARGIN_MS = 5 * 60_000;

/** Keeps the client's OAuth access token fresh; returns a stop function. */
function keepSignedIn(client: TxtfsClient, log: Logger): () => void {
  const timer = setInterval(() => {
    lazy
      .signIn()
      .then(({ currentSignIn }) => currentSignIn(SIGNED_IN_MARGIN_MS))
      .then((s) => {
        if (s) client.setKey(s.accessToken);
      })
      .catch((err: Error) =>
        log.warn({ err: err.message }, "could not refresh the sign-in; run txtfs login"),
      );
  }, 30_000);
  timer.unref();
  return () => clearInterval(timer);
}

/** --serve: the service core in this process, with a local user and key made on first use. */
export async function serveLocally(data: string, log: Logger, brain: Partial<BrainConfig>) {
  const [{ startServer }, { createKey, createUser }] = await Promise.all([lazy.server(), lazy.accounts()]);
  // The mount says the service's URL itself; the in-process service speaks only of trouble,
  // unless the user asked for debug lines or for a line per request (TXTFS_LOG_REQUESTS=1).
  const talkative = log.isLevelEnabled("debug") || process.env.TXTFS_LOG_REQUESTS === "1";
  const serviceLog = talkative ? log : log.child({}, { level: "warn" });
  const start = (port: number) =>
    startServer({
      host: "127.0.0.1",
      port,
      dataDir: data,
      retentionDays: 90,
      logger: serviceLog,
      rateLimit: { limit: 1_000_000 },
      // Its one user is its operator: the provider given with --ai-* serves them whatever the plan.
      brain: { ...brain, operatorServesEveryPlan: true },
      attachments: attachmentLimits(),
    });
  // The same port as last time for this data dir, so the TXTFS_URL printed before stays valid.
  const previous = rememberedPort(data);
  const server = await start(previous).catch((err) => {
    // Only a taken port is worth another try: any other failure (the store is in use) is the answer.
    if (previous === 0 || (err as NodeJS.ErrnoException).code !== "EADDRINUSE") throw err;
    log.warn({ port: previous, err: (err as Error).message }, "the last port is taken; picking another");
    return start(0);
  });
  rememberPort(data, Number(new URL(server.url).port));
  const keyFile = join(data, "mount.key");
  let key = existsSync(keyFile) ? readFileSync(keyFile, "utf8").trim() : "";
  if (!key) {
    key = await server.store.transaction(async (tx) => {
      const user =
        (await tx.users.list())[0] ??
        (await createUser(tx, `${process.env.USER || "me"}@localhost`, "Local user"));
      return (await createKey(tx, user.id, { label: "local mount" })).secret;
    });
    writeFileSync(keyFile, `${key}\n`, { mode: 0o600 });
  }
  return { server, key };
}

export function registerMount(program: Command): void {
  const mount = program
    .command("mount <mountpoint>")
    .description("Mount the service as a directory tree (FUSE). Foreground until unmounted.")
    .option("--url <url>", "service URL (or TXTFS_URL, or the config file's url)", parseUrl)
    .option("--key <key>", "API key; visible to other users in ps: prefer --key-file or TXTFS_API_KEY")
    .option(
      "--key-file <path>",
      "file holding the API key (or TXTFS_API_KEY_FILE, or the config file's keyFile)",
    )
    .option("--serve", "run the service in this process on the embedded store (no account needed)")
    .option("--data <dir>", "data directory for --serve", dataDir())
    .option("--read-only", "mount read-only")
    .option("--allow-other", "let other users access the mount (needs user_allow_other in /etc/fuse.conf)")
    .option("--cache-dir <dir>", "where local-only files and caches live")
    .addOption(
      new Option(
        "--cache-size <size>",
        "bound of the content cache (note bodies: the last 8M in memory, the rest in the cache dir) and, apart, of attachments' bytes read from the service",
      )
        .argParser(parseSize)
        .default(parseSize("256M"), "256M"),
    )
    .option("--uid <uid>", "owner uid of every file", parseId)
    .option("--gid <gid>", "owner gid of every file", parseId)
    .addOption(
      new Option("-o, --options <opts>", "FUSE options (comma-separated, repeatable)")
        .argParser((v: string, prev: string[]) => [...prev, v])
        .default([] as string[], "none"),
    )
    .option("--allow-non-empty", "mount over a directory that is not empty (hiding what is in it)")
    .option("--daemon", "detach once mounted")
    .option("--quiet", "print nothing once mounted (with --daemon; what mount(8) helpers do)")
    .addOption(
      new Option("--log-level <level>", "log level")
        .choices(LOG_LEVELS)
        .default(process.env.TXTFS_LOG_LEVEL ?? "info"),
    )
    .addOption(logFormatOption())
    .option("--log-file <file>", "append logs to FILE instead of stderr (reopened on SIGHUP, for logrotate)")
    .option("--poll-wait <seconds>", "long-poll wait of the change feed (0-60)", parsePollWait, 25)
    .option(
      "--write-through",
      "every save waits for the service (default: saves return once in the on-disk journal, which delivers them in order; fsync and `txtfs sync` wait for delivery)",
    )
    .addOption(
      new Option(
        "--local-dir <name>",
        "folders of this name keep everything inside on this machine, like .git and node_modules (repeatable; see docs/mount.md)",
      )
        .argParser((v: string, prev: string[]) => [...prev, v])
        .default([] as string[], "none"),
    )
    .addOption(
      new Option(
        "--exclude <pattern>",
        "files matching PATTERN stay on this machine (.gitignore syntax; repeatable; also read from .txtfsignore at the mount root; see docs/mount.md)",
      )
        .argParser((v: string, prev: string[]) => [...prev, v])
        .default([] as string[], "editor swap/backup files, .DS_Store, ._*, Thumbs.db, desktop.ini"),
    )
    .option(
      "--show-control-dir",
      "list .txtfs/ (history, tags, related notes, search, comments) in the root folder; it is always reachable by its path",
    )
    .option("--trace", "log every FUSE operation (debug level)")
    .action(async (mountpointArg: string, opts) => {
      const mountpoint = resolve(mountpointArg);
      // Before anything touches the mountpoint: an automount point (x-systemd.automount) would make
      // that touch wait for this very mount. Node's stat is statx, which (unlike stat(2)) triggers
      // it, and mounting stats the mountpoint: refused rather than hung.
      const { isAutomountPoint } = await lazy.watch();
      if (isAutomountPoint(mountpoint))
        throw new Error(
          `${mountpoint} is an automount point (x-systemd.automount): not supported yet; mount it at boot instead (_netdev, without x-systemd.automount)`,
        );
      // Everything given is checked before any network call, mount or detaching: a bad option is
      // one line and exit 2, and nothing is mounted.
      const { ExcludePatternError, parseExclude } = await lazy.excludes();
      for (const pattern of opts.exclude as string[]) {
        try {
          parseExclude(pattern);
        } catch (err) {
          if (err instanceof ExcludePatternError) throw new UsageError(`--exclude: ${err.message}`);
          throw err;
        }
      }
      const creds = resolveCredentials(opts, await readCliConfig());
      if (aiOptionsTyped(mount) && !opts.serve)
        throw new UsageError(
          "the --ai-* options need --serve (a remote service's AI provider is its operator's)",
        );
      const brain = opts.serve ? brainOptions(opts) : {};
      const fuse = await lazy.fuse();
      let extra: Record<string, string | boolean>;
      try {
        extra = fuse.parseMountOptions(opts.options);
      } catch (err) {
        throw new UsageError((err as Error).message);
      }
      // The daemon checks the mountpoint and says what is wrong in its log (and daemonize repeats it).
      if (opts.daemon) return daemonize(mountpoint, opts.quiet);
      const [
        { TxtfsClient },
        { currentSignIn },
        { createLogger, logFile, logWritten, stderrLog },
        { Vfs },
        { ensureDevice },
        { sdNotify },
        { watchMountpoint },
        { favourMemoryFromNowOn },
      ] = await Promise.all([
        lazy.client(),
        lazy.signIn(),
        lazy.logger(),
        lazy.vfs(),
        lazy.device(),
        lazy.notify(),
        lazy.watch(),
        lazy.memory(),
      ]);
      const { MountError, mountVfs, prepareMountpoint } = fuse;
      const file = opts.logFile ? logFile(opts.logFile) : undefined;
      const log = createLogger(
        "txtfs-mount",
        opts.trace ? "debug" : opts.logLevel,
        file ?? stderrLog(opts.logFormat),
      );
      const readOnly = Boolean(
        opts.readOnly || (opts.options as string[]).some((o) => o.split(",").includes("ro")),
      );
      checkNotMounted(mountpoint);
      await prepareMountpoint(mountpoint, log, { allowNonEmpty: opts.allowNonEmpty });

      let url = creds.url as string;
      let key = creds.key as string;
      let keyFrom = creds.keyFrom ?? "";
      // No key: the signed-in identity (txtfs login), its access token refreshed before it expires.
      let signedIn: StoredSignIn | null = null;
      if (!key && !opts.serve) {
        signedIn = await currentSignIn(SIGNED_IN_MARGIN_MS);
        if (signedIn && (!url || url.replace(/\/$/, "") === signedIn.url)) {
          url = signedIn.url;
          key = signedIn.accessToken;
          keyFrom = "the sign-in of txtfs login";
        } else {
          signedIn = null;
        }
      }
      let stopServer: (() => Promise<void>) | undefined;
      if (opts.serve) {
        const local = await serveLocally(opts.data, log, brain);
        url = local.server.url;
        key = local.key;
        keyFrom = join(opts.data, "mount.key");
        stopServer = () => local.server.close();
        process.stdout.write(
          `txtfs service ${url} (data: ${opts.data})\nexport TXTFS_URL=${url}\nexport TXTFS_API_KEY=${key}\n`,
        );
      }
      if (!url || !key) {
        throw new MountError(
          "no service to mount: pass --url and --key-file (or TXTFS_URL/TXTFS_API_KEY, or the config file), sign in with txtfs login, or use --serve for a local one",
        );
      }
      const cache =
        opts.cacheDir ??
        mountCacheDir(cacheDir(), { serveData: opts.serve ? opts.data : undefined, url }, mountpoint);
      mkdirSync(cache, { recursive: true, mode: 0o700 });
      if (resolve(cache).startsWith(`${mountpoint}/`))
        throw new MountError("--cache-dir must be outside the mountpoint");
      checkCacheDirWritable(cache);
      // Saves left in another cache dir of this key and mountpoint (the service's URL changed
      // since) are delivered from here. A sign-in's token changes: its saves stay where they are;
      // so do those of a --cache-dir the user chose.
      if (!signedIn && !opts.cacheDir) {
        const owner = { keyHash: keyHash(key), mountpoint };
        const inUse = new Set(listMounts().map((m) => resolve(m.cacheDir)));
        const from = adoptOrphanedJournal(cacheDir(), cache, owner, inUse);
        if (from) log.info({ from, to: cache }, "picked up the saves still waiting in an earlier cache dir");
        recordCacheOwner(cache, owner);
      }
      // Before anything is journalled: an unmount or a kill leaving saves here, and status and
      // sync still find them (src/lib/cacheDirs.ts).
      rememberCacheDir({ cacheDir: cache, mountpoint, url });

      const client = new TxtfsClient({ url, key, source: "mount", timeoutMs: 10_000, logger: log });
      const deviceId = await ensureDevice(
        client,
        opts.serve ? `serve:${resolve(opts.data)}` : url,
        log,
      ).catch((err) => {
        throw explainConnectError(err, url, keyFrom);
      });
      const stopRefresh = signedIn ? keepSignedIn(client, log) : () => {};
      const vfs = new Vfs({
        deviceId,
        client,
        cacheDir: cache,
        cacheSize: opts.cacheSize,
        readOnly,
        uid: opts.uid ?? process.getuid?.() ?? 0,
        gid: opts.gid ?? process.getgid?.() ?? 0,
        logger: log,
        pollWait: opts.pollWait,
        writeBehind: !opts.writeThrough,
        localDirs: opts.localDir,
        excludes: opts.exclude,
        mountpoint,
        showControlDir: Boolean(opts.showControlDir),
      });
      const started = Date.now();
      await vfs.start((message) => process.stderr.write(`txtfs: ${message}\n`));
      const mounted = await mountVfs(
        vfs,
        mountpoint,
        {
          allowOther: opts.allowOther,
          allowNonEmpty: opts.allowNonEmpty,
          uid: opts.uid,
          gid: opts.gid,
          extra,
          trace: opts.trace,
        },
        log,
      );
      // Known to status, sync and unmount: its control socket and its record. Refused saves whose
      // bytes only a local copy holds, also from earlier mounts, are reported by them until the copy
      // is moved or deleted (recorded in the cache dir).
      // Its device names its FUSE connection: `txtfs unmount` aborts that one alone once this
      // daemon is gone (killed, or a zombie), never another mount's.
      const { mountsAt, isFuseType } = await lazy.watch();
      const device = (mountsAt(mountpoint) ?? []).filter((m) => isFuseType(m.fstype)).at(-1)?.device;
      const announced = await announceDaemon(
        vfs,
        { kind: "mount", mountpoint, url, cacheDir: cache, started, device },
        log,
      );
      favourMemoryFromNowOn();
      announced.record();
      // Recorded before it is announced: `txtfs status` (and mount(8)'s caller) finds it at once.
      // A key that cannot write makes a read-only mount: said here, not found out by a lost save.
      const readOnlyBecause = vfs.readOnlyBecause;
      if (readOnlyBecause) log.info({ because: readOnlyBecause }, "mounted read-only");

      let stopping = false;
      const stop = async (signal: string) => {
        if (stopping) return;
        stopping = true;
        const stopStarted = Date.now();
        log.info({ signal, pending: vfs.stats().dirty }, "unmounting: flushing pending writes");
        await sdNotify(["STOPPING=1", "STATUS=flushing pending writes"], log);
        stopWatch();
        announced.stopRecording();
        stopRefresh();
        // A program's writes to a note it still has open, held in C: saved with it below.
        await mounted
          .takeHeldWrites()
          .catch((err) => log.error({ err }, "writes held in C could not be taken"));
        await vfs.stop();
        // A save refused in this last delivery (or since the last sync) is reported by `txtfs
        // unmount`, or else by the next `txtfs sync`: its copy if it kept one, else the refusal.
        for (const r of announced.refusalsAtStop())
          process.stderr.write(`txtfs: ${describeRefusal(mountpoint, r)}\n`);
        // Ctrl-C of a mount in the foreground: its terminal hears what is left, not only the log.
        const left = vfs.stats().dirty;
        if (left > 0)
          process.stderr.write(
            `txtfs: ${savesWord(left)} for ${url} ${waitWord(left)} in ${cache}; ${left === 1 ? "it is" : "they are"} sent at the next mount (txtfs status lists them)\n`,
          );
        const flushedMs = Date.now() - stopStarted;
        announced.closeControl();
        if (signal !== "unmounted") await mounted.unmount();
        // Everything is delivered (or journalled for the next mount): no connection needs a goodbye.
        await client.destroy();
        await stopServer?.();
        announced.withdraw();
        log.info({ flushedMs, stoppedMs: Date.now() - stopStarted }, "unmounted");
        await logWritten(log);
        mounted.exit(0);
      };
      // Unmounted from outside (`umount DIR`, fusermount -u): the saves still on their way go up, then exit.
      mounted.onUnmounted(() => void stop("unmounted"));
      process.on("SIGINT", () => void stop("SIGINT"));
      process.on("SIGTERM", () => void stop("SIGTERM"));
      // SIGHUP (systemctl reload): what can change without a remount is read again, as rclone does.
      const reload = async () => {
        file?.reopen(); // logrotate moved the log file
        const changes: string[] = [];
        if (!opts.serve && !signedIn) {
          try {
            const fresh = resolveCredentials(opts, await readCliConfig());
            if (fresh.key && fresh.key !== key) {
              key = fresh.key;
              client.setKey(key);
              changes.push(`the key from ${fresh.keyFrom}`);
            }
          } catch (err) {
            log.error(
              { err: (err as Error).message },
              "SIGHUP: the credentials could not be read again; keeping the old ones",
            );
          }
        }
        vfs.relist();
        changes.push("the directory listing (refetched)");
        log.info({ reloaded: changes }, "SIGHUP: reloaded");
      };
      process.on("SIGHUP", () => void reload());
      // `umount DIR` without the umount helper (or fusermount -u by hand) ends the mount under us:
      // deliver what is pending and exit as at SIGTERM. The binding says so at once (its loop ends:
      // mounted.onUnmounted above); this look at the mount table every second is the fallback.
      const stopWatch = watchMountpoint(mountpoint, () => void stop("unmounted"));
      // Announced last: a program that reads "mounted" and sends SIGINT at once must find the
      // handlers above in place (on a busy machine it can, between this write and the next line).
      process.stdout.write(
        `mounted ${mountpoint} (${Date.now() - started} ms)${readOnlyBecause ? ` read-only: ${readOnlyBecause}` : ""}\n`,
      );
      // Under systemd (Type=notify): the unit is started once the directory is mounted.
      void sdNotify(["READY=1", `STATUS=mounted ${mountpoint} from ${url}`], log);
    });
  // With --serve: the AI provider of the service it runs (docs/brain.md).
  addAiOptions(mount, { quotas: false });

  registerUnmount(program);
  registerSync(program);
  registerStatus(program);
}

/** The daemon's log, for this user only (also one an older txtfs created readable by all). */
function privateLog(file: string): number {
  const fd = openSync(file, "a", 0o600);
  fchmodSync(fd, 0o600);
  return fd;
}

/** --daemon: run the same command detached, return once it reports "mounted". */
async function daemonize(mountpoint: string, quiet = false): Promise<void> {
  const logDir = join(cacheDir(), "logs");
  mkdirSync(logDir, { recursive: true });
  const logFile = join(
    logDir,
    `mount-${createHash("sha256").update(mountpoint).digest("hex").slice(0, 8)}.log`,
  );
  // The key never rides in the child's arguments (visible in ps for the daemon's life).
  const { args, key } = hideKeyArgument(process.argv.slice(2).filter((a) => a !== "--daemon"));
  const logFd = privateLog(logFile);
  const logStart = fstatSync(logFd).size; // this run's lines start here
  const child = spawn(process.execPath, [...BIN_ARGS, ...args], {
    detached: true,
    env: key === undefined ? process.env : { ...process.env, [KEY_ENV]: key },
    stdio: ["ignore", "pipe", logFd],
  });
  await new Promise<void>((resolveMount, reject) => {
    let out = "";
    child.stdout!.on("data", (d) => {
      out += d;
      if (!quiet) process.stdout.write(d);
      if (/^mounted /m.test(out)) resolveMount();
    });
    child.once("exit", (code) => {
      // Its own one-line reason (the last `txtfs: ...` it wrote), then where the rest is.
      let reason = "";
      try {
        reason =
          readFileSync(logFile)
            .subarray(logStart)
            .toString("utf8")
            .match(/^txtfs: .*$/gm)
            ?.pop()
            ?.slice(7) ?? "";
      } catch {}
      reject(new Error(`${reason ? `${reason}; ` : ""}the mount daemon exited (${code}); see ${logFile}`));
    });
  });
  child.stdout!.destroy();
  child.unref();
  if (!quiet) process.stdout.write(`daemon pid ${child.pid}, log ${logFile}\n`);
  process.exit(0);
}
