// `--key KEY` on a command line is readable by every user of the machine (`ps`, /proc/PID/cmdline)
// for as long as the process runs. The key is taken out of sight at once: the process title is
// rewritten (which overwrites /proc/PID/cmdline), and a process txtfs starts itself (the launcher's
// child, the --daemon child) receives it in its environment, readable only by the same user, with a
// placeholder in its arguments.
export const KEY_PLACEHOLDER = "@TXTFS_KEY_ARG";
export const KEY_ENV = "TXTFS_KEY_ARG";

const isKeyFlag = (arg: string) => arg === "--key" || arg.startsWith("--key=");

/** `args` with the key's value replaced by the placeholder, and the value. */
export function hideKeyArgument(args: readonly string[]): { args: string[]; key?: string } {
  const out = [...args];
  let key: string | undefined;
  for (let i = 0; i < out.length; i++) {
    if (out[i] === "--") break;
    if (out[i] === "--key" && i + 1 < out.length) {
      key = out[i + 1];
      out[i + 1] = KEY_PLACEHOLDER;
      i++;
    } else if (out[i]!.startsWith("--key=")) {
      key = out[i]!.slice("--key=".length);
      out[i] = `--key=${KEY_PLACEHOLDER}`;
    }
  }
  return { args: out, key: key === KEY_PLACEHOLDER ? undefined : key };
}

/**
 * For this process: the argv commander should parse (the placeholder replaced by the key from the
 * environment, which is then removed from it), with the process title scrubbed when a key was on
 * the command line. `typed`: a key was given with --key (to warn about it).
 */
export function takeKeyArgument(argv: readonly string[]): { argv: string[]; typed: boolean } {
  const given = process.env[KEY_ENV];
  delete process.env[KEY_ENV];
  const { args, key } = hideKeyArgument(argv.slice(2));
  const hasFlag = argv.slice(2).some(isKeyFlag);
  if (hasFlag) process.title = ["txtfs", ...args].join(" ");
  const real = (v: string) => (v === KEY_PLACEHOLDER ? (given ?? "") : v);
  const restored = argv
    .slice(2)
    .map((a, i, all) =>
      a === KEY_PLACEHOLDER && all[i - 1] === "--key"
        ? real(a)
        : a === `--key=${KEY_PLACEHOLDER}`
          ? `--key=${real(KEY_PLACEHOLDER)}`
          : a,
    );
  return {
    argv: [...argv.slice(0, 2), ...restored],
    typed: hasFlag && (key !== undefined || given !== undefined),
  };
}
