// The mount registers itself as a device once per service and keeps the id in its config
// (`devices.json` in the config dir), so its availability states survive restarts.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { ApiError, NetworkError, type TxtfsClient } from "../client/api.ts";
import type { Logger } from "../lib/logger.ts";
import { configDir } from "../lib/paths.ts";
import { VERSION } from "./version.ts";

function load(file: string): Record<string, string> {
  try {
    return JSON.parse(readFileSync(file, "utf8"));
  } catch {
    return {};
  }
}

/** The device id for `service` (a URL, or `serve:DATA` for --serve): reused, or registered now. */
export async function ensureDevice(
  client: TxtfsClient,
  service: string,
  log: Logger,
): Promise<string | undefined> {
  const dir = configDir();
  const file = join(dir, "devices.json");
  const devices = load(file);
  try {
    const known = devices[service];
    if (known && (await client.getDevice(known))) return known;
    const device = await client.registerDevice({
      name: hostname(),
      platform: process.platform === "darwin" ? "macos" : process.platform === "win32" ? "windows" : "linux",
      clientName: "txtfs mount",
      clientVersion: VERSION,
    });
    devices[service] = device.id;
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    writeFileSync(`${file}.tmp`, `${JSON.stringify(devices, null, 2)}\n`, { mode: 0o600 });
    renameSync(`${file}.tmp`, file);
    log.info({ device: device.id }, "registered this mount as a device");
    return device.id;
  } catch (err) {
    // A refused key or an unreachable service is the caller's to explain (and stops the mount).
    if (
      err instanceof NetworkError ||
      (err instanceof ApiError && (err.status === 401 || err.status === 403))
    )
      throw err;
    // An older service without devices: pins then live only in this mount.
    log.warn({ err }, "could not register a device; availability is kept locally only");
    return devices[service];
  }
}
