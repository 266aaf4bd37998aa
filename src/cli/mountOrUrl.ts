// What `txtfs sync X` and `txtfs unmount X` are given: a mount, by its directory (resolved against
// the working directory), or a `txtfs dav` server, by the URL it serves as `txtfs status` shows it
// (`http://127.0.0.1:8080`, with or without the last "/").
import { isAbsolute, resolve } from "node:path";
import { UsageError } from "./options.ts";

export const isUrlArgument = (arg: string) => /^https?:\/\//i.test(arg);

/** The registry's name for it: a mount's absolute path, or a dav server's URL ending in "/". */
export function mountOrUrl(arg: string): string {
  if (!isUrlArgument(arg)) return resolve(workingDir(arg), arg);
  try {
    return new URL(arg).href;
  } catch {
    return arg;
  }
}

/**
 * The working directory a relative path is resolved against. Inside a mount whose daemon is gone
 * it cannot be read (ENOTCONN, "Transport endpoint is not connected"): the shell's $PWD then.
 */
function workingDir(arg: string): string {
  if (isAbsolute(arg)) return "/";
  try {
    return process.cwd();
  } catch (err) {
    const pwd = process.env.PWD;
    if (pwd && isAbsolute(pwd)) return pwd;
    throw new UsageError(
      `${arg}: the working directory cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}): give the mountpoint as an absolute path`,
    );
  }
}
