// The command line's config file, ~/.config/txtfs/config.json (TXTFS_CONFIG): the service URL, a
// key or key file, and the sign-in `txtfs login` saves. Read and written through `conf`: a JSON
// schema checks every read and write, writes are atomic (a temporary file renamed over it) with mode
// 0600 (it holds credentials). A malformed file, a value of the wrong type or an unknown setting is
// one line naming the file (exit 2): never ignored, never overwritten by the next save.
// `conf` (and its validator) is loaded only by the commands that read the config.
import { statSync } from "node:fs";
import { join } from "node:path";
import { configDir } from "./paths.ts";

/** A signed-in identity (`txtfs login`), its tokens refreshed before they expire. */
export interface StoredSignIn {
  provider: string;
  issuer: string;
  clientId: string;
  audience: string;
  url: string;
  tokenEndpoint: string;
  revocationEndpoint: string | null;
  accessToken: string;
  refreshToken: string | null;
  /** ISO time the access token expires. */
  expiresAt: string;
  scope: string;
}

export interface CliConfig {
  url?: string;
  key?: string;
  keyFile?: string;
  signIn?: StoredSignIn;
}

/** A config file that cannot be used as it is: the CLI prints the message alone and exits 2. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}

const SCHEMA = {
  url: { type: "string" },
  key: { type: "string" },
  keyFile: { type: "string" },
  signIn: {
    type: "object",
    required: ["issuer", "clientId", "url", "tokenEndpoint", "accessToken", "expiresAt"],
    properties: {
      provider: { type: "string" },
      issuer: { type: "string" },
      clientId: { type: "string" },
      audience: { type: "string" },
      url: { type: "string" },
      tokenEndpoint: { type: "string" },
      revocationEndpoint: { type: ["string", "null"] },
      accessToken: { type: "string" },
      refreshToken: { type: ["string", "null"] },
      expiresAt: { type: "string" },
      scope: { type: "string" },
    },
  },
} as const;

export const configFile = () => join(configDir(), "config.json");

/** `conf`'s refusals, as one line that names the file and what to do. */
function explain(err: unknown, file: string): Error {
  const e = err as NodeJS.ErrnoException;
  if (e.name === "SyntaxError" || e instanceof SyntaxError)
    return new ConfigError(`${file} is not valid JSON; fix or remove it`);
  const violation = /^Config schema violation: (.*)$/s.exec(e.message ?? "");
  if (violation) {
    const unknown = /`([^`]*)` must NOT have additional properties/.exec(violation[1]!);
    if (unknown)
      return new ConfigError(
        `${file}: unknown setting "${unknown[1]}" (known: ${Object.keys(SCHEMA).join(", ")}); fix or remove it`,
      );
    return new ConfigError(`${file}: ${violation[1]!.replace(/`([^`]*)`/g, '"$1"')}; fix or remove it`);
  }
  if (e.code) return new ConfigError(`cannot use ${file}: ${e.code} (${e.message})`);
  return err as Error;
}

/**
 * `conf`, loaded once. Its atomic writer (`atomically`, through `when-exit`) hooks SIGHUP, SIGINT,
 * SIGTERM and a dozen other signals at import and, at the first one, raises that signal again:
 * the mount daemon's own SIGHUP handler (reload) would then run twice, and a signal it leaves to
 * Node's default would be handled by a stranger. Those signal hooks are taken off again (the hook
 * on process exit, which removes a half-written temporary file, stays): signals are txtfs's own.
 */
let confModule: Promise<typeof import("conf")> | undefined;
function loadConf(): Promise<typeof import("conf")> {
  confModule ??= (async () => {
    const signals = ["SIGHUP", "SIGINT", "SIGTERM", "SIGALRM", "SIGABRT", "SIGVTALRM", "SIGXCPU", "SIGXFSZ"];
    const more = [
      "SIGUSR2",
      "SIGTRAP",
      "SIGSYS",
      "SIGQUIT",
      "SIGIOT",
      "SIGIO",
      "SIGPOLL",
      "SIGPWR",
      "SIGSTKFLT",
    ];
    const all = [...signals, ...more] as NodeJS.Signals[];
    const before = new Map(all.map((s) => [s, new Set(process.listeners(s))]));
    const mod = await import("conf");
    for (const s of all)
      for (const listener of process.listeners(s))
        if (!before.get(s)!.has(listener)) process.removeListener(s, listener);
    return mod;
  })();
  return confModule;
}

async function open() {
  const file = configFile();
  const { default: Conf } = await loadConf();
  try {
    return new Conf<CliConfig>({
      cwd: configDir(),
      configName: "config",
      projectName: "txtfs",
      schema: SCHEMA as never,
      // A setting nobody reads (a typo such as "kye") is refused rather than silently ignored.
      rootSchema: { additionalProperties: false },
      configFileMode: 0o600,
      clearInvalidConfig: false,
    });
  } catch (err) {
    throw explain(err, file);
  }
}

/** The config, checked (none: `{}`). */
export async function loadCliConfig(): Promise<CliConfig> {
  // No file, nothing to check: `conf` (and the schema compiled at every open) costs a mount or a
  // CLI command about 200 ms at start.
  let exists = true;
  try {
    exists = statSync(configFile(), { throwIfNoEntry: false }) !== undefined;
  } catch {
    // unreadable: opening it below says why
  }
  if (!exists) return {};
  const conf = await open();
  try {
    return { ...conf.store };
  } catch (err) {
    throw explain(err, configFile());
  }
}

/** Changes the config (checked, written atomically, mode 0600); returns what was written. */
export async function updateCliConfig(change: (config: CliConfig) => CliConfig): Promise<CliConfig> {
  const conf = await open();
  try {
    const next = change({ ...conf.store });
    conf.store = next;
    return next;
  } catch (err) {
    throw explain(err, configFile());
  }
}
