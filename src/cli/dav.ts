// txtfs dav: the drive over WebDAV instead of FUSE (the same vfs, its journal and cache), for
// machines without FUSE: macOS Finder, Windows Explorer, phones, davfs2, rclone (docs/dav.md).
import { mkdirSync, readFileSync } from "node:fs";
import { isIP } from "node:net";
import { join } from "node:path";
import { type Command, Option } from "commander";
import { recordCacheOwner, rememberCacheDir } from "../lib/cacheDirs.ts";
import { LOG_LEVELS } from "../lib/logLevels.ts";
import { recordRoot } from "../lib/mountRegistry.ts";
import { cacheDir, dataDir } from "../lib/paths.ts";
import { announceDaemon } from "./announceDaemon.ts";
import { readCliConfig, resolveCredentials } from "./credentials.ts";
import { keyHash, mountCacheDir } from "./mountIdentity.ts";
import { describeRefusal, savesWord, waitWord } from "./notOnService.ts";
import { logFormatOption, parsePollWait, parseSize, parseUrl, UsageError } from "./options.ts";
import { checkCacheDirWritable, explainConnectError } from "./preflight.ts";

const lazy = {
  client: () => import("../client/api.ts"),
  logger: () => import("../lib/logger.ts"),
  vfs: () => import("../vfs/vfs.ts"),
  device: () => import("./device.ts"),
  mount: () => import("./mount.ts"),
  dav: () => import("../dav/httpServer.ts"),
  site: () => import("../dav/vfsSite.ts"),
};

/** host:port (IPv6 in brackets); port 0 picks a free one. */
export function parseAddr(value: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(value);
  const host = m?.[1] ?? m?.[2];
  const port = Number(m?.[3]);
  if (!m || !host || port > 65535)
    throw new UsageError(`--addr ${value}: expected HOST:PORT, e.g. 127.0.0.1:8080`);
  return { host, port };
}

export function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || (isIP(host) === 4 && host.startsWith("127."));
}

export function registerDav(program: Command): void {
  program
    .command("dav")
    .description("Serve the drive over WebDAV (no FUSE needed), with the mount's journal and cache.")
    .option("--url <url>", "service URL (or TXTFS_URL, or the config file's url)", parseUrl)
    .option("--key <key>", "API key; visible to other users in ps: prefer --key-file or TXTFS_API_KEY")
    .option(
      "--key-file <path>",
      "file holding the API key (or TXTFS_API_KEY_FILE, or the config file's keyFile)",
    )
    .option("--serve", "run the service in this process on the embedded store (no account needed)")
    .option("--data <dir>", "data directory for --serve", dataDir())
    .option("--addr <host:port>", "where to listen", "127.0.0.1:8080")
    .option("--tls-cert <file>", "serve HTTPS with this certificate (PEM)")
    .option("--tls-key <file>", "the certificate's private key (PEM)")
    .option(
      "--insecure-listen",
      "allow plain HTTP on an address other than loopback (the key crosses the network in clear)",
    )
    .option("--cache-dir <dir>", "where the journal, caches, locks and local-only files live")
    .addOption(
      new Option("--cache-size <size>", "bound of the content cache")
        .argParser(parseSize)
        .default(parseSize("256M"), "256M"),
    )
    .option("--read-only", "refuse every change")
    .option("--poll-wait <seconds>", "long-poll wait of the change feed (0-60)", parsePollWait, 25)
    .option(
      "--write-through",
      "every save waits for the service (default: a PUT answers once it is in the journal)",
    )
    .addOption(
      new Option("--log-level <level>", "log level")
        .choices(LOG_LEVELS)
        .default(process.env.TXTFS_LOG_LEVEL ?? "info"),
    )
    .addOption(logFormatOption())
    .action(async (opts) => {
      // Everything given is checked before any network call: a bad option is one line, exit 2.
      const { host, port } = parseAddr(opts.addr);
      if (Boolean(opts.tlsCert) !== Boolean(opts.tlsKey))
        throw new UsageError("--tls-cert and --tls-key go together");
      if (!isLoopback(host) && !opts.tlsCert && !opts.insecureListen)
        throw new UsageError(
          `--addr ${opts.addr} is not loopback: serve it with --tls-cert/--tls-key, or pass --insecure-listen to send the key in clear`,
        );
      const tls = opts.tlsCert
        ? { cert: readPem(opts.tlsCert, "--tls-cert"), key: readPem(opts.tlsKey, "--tls-key") }
        : undefined;
      const creds = resolveCredentials(opts, await readCliConfig());
      const [
        { TxtfsClient },
        { createLogger, stderrLog },
        { Vfs },
        { ensureDevice },
        { serveLocally },
        dav,
        site,
      ] = await Promise.all([
        lazy.client(),
        lazy.logger(),
        lazy.vfs(),
        lazy.device(),
        lazy.mount(),
        lazy.dav(),
        lazy.site(),
      ]);
      const log = createLogger("txtfs-dav", opts.logLevel, stderrLog(opts.logFormat));
      let url = creds.url as string;
      let key = creds.key as string;
      let keyFrom = creds.keyFrom ?? "";
      let stopServer: (() => Promise<void>) | undefined;
      if (opts.serve) {
        const local = await serveLocally(opts.data, log, {});
        url = local.server.url;
        key = local.key;
        keyFrom = join(opts.data, "mount.key");
        stopServer = () => local.server.close();
        process.stdout.write(
          `txtfs service ${url} (data: ${opts.data})\nexport TXTFS_URL=${url}\nexport TXTFS_API_KEY=${key}\n`,
        );
      }
      // A WebDAV client sends the key as its password: a sign-in's rotating token cannot be it.
      if (!url || !key)
        throw new UsageError(
          "no service to serve: pass --url and an API key (--key-file, TXTFS_URL/TXTFS_API_KEY, or the config file), or --serve; a txtfs login sign-in cannot be a WebDAV password",
        );
      const cache =
        opts.cacheDir ??
        mountCacheDir(
          cacheDir(),
          { serveData: opts.serve ? opts.data : undefined, url },
          `/dav/${host}:${port}`,
        );
      mkdirSync(cache, { recursive: true, mode: 0o700 });
      checkCacheDirWritable(cache);
      const client = new TxtfsClient({ url, key, source: "dav", timeoutMs: 10_000, logger: log });
      const deviceId = await ensureDevice(client, opts.serve ? `serve:${opts.data}` : url, log).catch(
        (err) => {
          throw explainConnectError(err, url, keyFrom);
        },
      );
      const vfs = new Vfs({
        deviceId,
        client,
        cacheDir: cache,
        cacheSize: opts.cacheSize,
        readOnly: Boolean(opts.readOnly),
        uid: process.getuid?.() ?? 0,
        gid: process.getgid?.() ?? 0,
        logger: log,
        pollWait: opts.pollWait,
        writeBehind: !opts.writeThrough,
      });
      const started = Date.now();
      await vfs.start((message) => process.stderr.write(`txtfs: ${message}\n`));
      const server = dav.createDavServer({ site: site.vfsSite(vfs, cache), key, log, tls });
      const served = await dav.listen(server, host, port, Boolean(tls));
      // Before the first PUT can be journalled: once this server is stopped or killed, status, sync
      // and unmount name its cache dir by the URL it served (src/lib/cacheDirs.ts), as a mount's.
      if (!opts.cacheDir) recordCacheOwner(cache, { keyHash: keyHash(key), mountpoint: served, kind: "dav" });
      rememberCacheDir({ cacheDir: cache, mountpoint: served, url, kind: "dav" });
      // Known to status, sync and unmount as a mount is, by the URL it serves (announceDaemon.ts).
      const announced = await announceDaemon(
        vfs,
        { kind: "dav", mountpoint: served, url, cacheDir: cache, started },
        log,
      );
      announced.record();
      // A key that cannot write serves read-only: said here, not found out by a refused save.
      const readOnlyBecause = vfs.readOnlyBecause;
      let stopping = false;
      const stop = async (signal: string) => {
        if (stopping) return;
        stopping = true;
        log.info({ signal, pending: vfs.stats().dirty }, "stopping: flushing pending writes");
        announced.stopRecording();
        server.close();
        server.closeAllConnections();
        await vfs.stop();
        // Refused in this last delivery and keeping nothing: said here, and kept for the next sync.
        const root = recordRoot({ kind: "dav", mountpoint: served });
        for (const r of announced.refusalsAtStop())
          process.stderr.write(`txtfs: ${describeRefusal(root, r)}\n`);
        const left = vfs.stats().dirty;
        if (left > 0)
          process.stderr.write(
            `txtfs: ${savesWord(left)} for ${url} ${waitWord(left)} in ${cache}; ${left === 1 ? "it is" : "they are"} sent when txtfs dav is started again with --cache-dir ${cache} (txtfs status lists them)\n`,
          );
        await client.destroy();
        await stopServer?.();
        announced.withdraw();
        process.exit(0);
      };
      process.on("SIGINT", () => void stop("SIGINT"));
      process.on("SIGTERM", () => void stop("SIGTERM"));
      // Announced once the handlers are in place: a program that reads this line and sends SIGINT
      // at once gets a clean stop, not a death by signal.
      process.stdout.write(
        `txtfs dav ${served} (cache: ${cache})${readOnlyBecause ? ` read-only: ${readOnlyBecause}` : ""}\n`,
      );
    });
}

function readPem(file: string, flag: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    throw new UsageError(
      `${flag}: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    );
  }
}
