// Which service and which credential a command uses, and where each came from (so an error can
// say "the key from TXTFS_API_KEY was refused by http://..."). Keys are read, in this order, from
// --key (visible in `ps` while typed; hidden at once, but prefer the others), --key-file PATH,
// TXTFS_API_KEY, TXTFS_API_KEY_FILE, then the config file's `key` or `keyFile`.
import { readFileSync, statSync } from "node:fs";
import { InvalidArgumentError } from "commander";
import { type CliConfig, configFile, loadCliConfig } from "../lib/cliConfig.ts";
import { parseUrl, UsageError } from "./options.ts";

/**
 * The config file, checked by its schema (src/lib/cliConfig.ts): malformed JSON, a value of the
 * wrong type or an unknown setting is one line naming the file (exit 2).
 */
export function readCliConfig(): Promise<CliConfig> {
  return loadCliConfig();
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
  config: CliConfig,
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
