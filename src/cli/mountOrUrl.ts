// What `txtfs sync X` and `txtfs unmount X` are given: a mount, by its directory (resolved against
// the working directory), or a `txtfs dav` server, by the URL it serves as `txtfs status` shows it
// (`http://127.0.0.1:8080`, with or without the last "/").
import { resolve } from "node:path";

export const isUrlArgument = (arg: string) => /^https?:\/\//i.test(arg);

/** The registry's name for it: a mount's absolute path, or a dav server's URL ending in "/". */
export function mountOrUrl(arg: string): string {
  if (!isUrlArgument(arg)) return resolve(arg);
  try {
    return new URL(arg).href;
  } catch {
    return arg;
  }
}
