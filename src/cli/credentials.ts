// Which service and which credential a command uses, and where each came from (so an error can
// say "the key from TXTFS_API_KEY was refused by http://..."). Keys are read, in this order, from
// --key (visible in `ps` while typed; hidden at once, but prefer the others), --key-file PATH,
// TXTFS_API_KEY, TXTFS_API_KEY_FILE, then the config file's `key` or `keyFile`.
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { InvalidArgumentError } from "commander";
import type { CliConfig } from "../client/signIn.ts";
import { configDir } from "../lib/paths.ts";
import { parseUrl, UsageError } from "./options.ts";

/** Where `txtfs login` keeps its sign-in and the user keeps url/key (not importing the sign-in client). */
const configFile = () => join(configDir(), "config.json");

const CONFIG_KEYS: Record<string, "string" | "object"> = {
  url: "string",
  key: "string",
  keyFile: "string",
  signIn: "object",
};

/**
 * The config file, checked: malformed JSON or a value of the wrong type is an error naming the
 * file; an unknown key is reported on stderr (a typo would otherwise silently do nothing).
 */
export function readCliConfig(
  warn: (line: string) => void = (l) => process.stderr.write(`${l}\n`),
): CliConfig {
  const file = configFile();
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return {};
    throw new UsageError(`cannot read ${file}: ${(err as Error).message}`);
  }
  let config: unknown;
  try {
    config = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`${file} is not valid JSON (${(err as Error).message}); fix or remove it`);
  }
  if (!config || typeof config !== "object" || Array.isArray(config))
    throw new UsageError(`${file} must hold a JSON object like {"url": "...", "keyFile": "..."}`);
  for (const [name, value] of Object.entries(config)) {
    const type = CONFIG_KEYS[name];
    if (!type) {
      warn(
        `txtfs: ${file}: unknown setting "${name}" ignored (known: ${Object.keys(CONFIG_KEYS).join(", ")})`,
      );
    } else if (typeof value !== type || value === null) {
      throw new UsageError(`${file}: "${name}" must be a ${type}`);
    }
  }
  return config as CliConfig;
}

export interface Credentials {
  url?: string;
  urlFrom?: string;
  key?: string;
  keyFrom?: string;
}

function readKeyFile(path: string, from: string): string {
  let key: string;
  try {
    key = readFileSync(path, "utf8").trim();
  } catch (err) {
    throw new UsageError(
      `${from}: cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    );
  }
  if (!key) throw new UsageError(`${from}: ${path} is empty (it should hold the API key, txt_...)`);
  if (/\s/.test(key)) throw new UsageError(`${from}: ${path} should hold one API key and nothing else`);
  try {
    if ((statSync(path).mode & 0o077) !== 0)
      process.stderr.write(`txtfs: warning: ${path} is readable by other users; chmod 600 ${path}\n`);
  } catch {}
  return key;
}

function checkedUrl(value: string, from: string): string {
  try {
    return parseUrl(value);
  } catch (err) {
    if (err instanceof InvalidArgumentError)
      throw new UsageError(`${from}: ${JSON.stringify(value)} is invalid: ${err.message}`);
    throw err;
  }
}

/** Resolves URL and key from flags, environment and config, without any network call. */
export function resolveCredentials(
  flags: { url?: string; key?: string; keyFile?: string },
  config: CliConfig = readCliConfig(),
): Credentials {
  const out: Credentials = {};
  const env = process.env;
  if (flags.url) [out.url, out.urlFrom] = [checkedUrl(flags.url, "--url"), "--url"];
  else if (env.TXTFS_URL) [out.url, out.urlFrom] = [checkedUrl(env.TXTFS_URL, "TXTFS_URL"), "TXTFS_URL"];
  else if (config.url) [out.url, out.urlFrom] = [checkedUrl(config.url, configFile()), configFile()];

  if (flags.key !== undefined && flags.keyFile !== undefined)
    throw new UsageError("use either --key or --key-file, not both");
  if (flags.key !== undefined) {
    if (!flags.key.trim()) throw new UsageError("--key is empty");
    [out.key, out.keyFrom] = [flags.key.trim(), "--key"];
  } else if (flags.keyFile !== undefined) {
    [out.key, out.keyFrom] = [readKeyFile(flags.keyFile, "--key-file"), `--key-file ${flags.keyFile}`];
  } else if (env.TXTFS_API_KEY) {
    [out.key, out.keyFrom] = [env.TXTFS_API_KEY.trim(), "TXTFS_API_KEY"];
  } else if (env.TXTFS_API_KEY_FILE) {
    const path = env.TXTFS_API_KEY_FILE;
    [out.key, out.keyFrom] = [readKeyFile(path, "TXTFS_API_KEY_FILE"), `TXTFS_API_KEY_FILE (${path})`];
  } else if (typeof config.key === "string" && config.key) {
    [out.key, out.keyFrom] = [config.key.trim(), `the "key" of ${configFile()}`];
  } else if (typeof config.keyFile === "string" && config.keyFile) {
    const from = `the "keyFile" of ${configFile()}`;
    [out.key, out.keyFrom] = [readKeyFile(config.keyFile, from), `${from} (${config.keyFile})`];
  }
  return out;
}
