// `txtfs completion bash|zsh` and `txtfs man`, generated from the command definitions: the bash
// completion is run in a real bash, the man page rendered by man(1) and checked by groff.
import { execFile, execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN, runTxtfs } from "../helpers/cli.ts";

const dir = mkdtempSync(join(tmpdir(), "txtfs-completion-"));
let script: string;

beforeAll(async () => {
  const r = await runTxtfs(["completion", "bash"]);
  expect(r.code, r.stderr).toBe(0);
  script = join(dir, "txtfs.bash");
  writeFileSync(script, r.stdout);
  writeFileSync(join(dir, "notes.md"), "");
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** What bash offers for the command line `words` (the last word is the one being completed). */
function complete(...words: string[]): string[] {
  const line = words.map((w) => `'${w}'`).join(" ");
  const out = execFileSync(
    "bash",
    [
      "-c",
      `source '${script}'; COMP_WORDS=(${line}); COMP_CWORD=${words.length - 1}; _txtfs; printf '%s\\n' "\${COMPREPLY[@]}"`,
    ],
    { cwd: dir, encoding: "utf8" },
  );
  return out.split("\n").filter(Boolean).sort();
}

describe("txtfs completion bash", () => {
  it("completes commands and nested subcommands", () => {
    expect(complete("txtfs", "se")).toEqual(["serve"]);
    expect(complete("txtfs", "")).toEqual(
      expect.arrayContaining(["serve", "mount", "admin", "status", "completion"]),
    );
    expect(complete("txtfs", "admin", "")).toEqual(["backup", "key", "migrate", "restore", "user"]);
    expect(complete("txtfs", "admin", "key", "")).toEqual(["add", "list", "revoke"]);
  });

  it("completes each command's own options, and the values of options with choices", () => {
    expect(complete("txtfs", "serve", "--log-l")).toEqual(["--log-level"]);
    expect(complete("txtfs", "serve", "--log-level", "")).toEqual([
      "debug",
      "error",
      "fatal",
      "info",
      "silent",
      "trace",
      "warn",
    ]);
    // an option's value is skipped when finding the command, and other commands' options are not offered
    expect(complete("txtfs", "serve", "--port", "80", "--tr")).toEqual(["--trust-proxy"]);
    expect(complete("txtfs", "mount", "--tr")).toEqual(["--trace"]);
    expect(complete("txtfs", "admin", "backup", "--")).toEqual(
      expect.arrayContaining(["--to", "--force", "--data", "--db", "--help"]),
    );
  });

  it("offers files for option values and arguments", () => {
    expect(complete("txtfs", "admin", "restore", "--from", "no")).toEqual(["notes.md"]);
    expect(complete("txtfs", "mount", "no")).toEqual(["notes.md"]);
  });

  it("zsh gets the same completion through bashcompinit; an unknown shell is explained", async () => {
    const zsh = await runTxtfs(["completion", "zsh"]);
    expect(zsh.stdout.startsWith("#compdef txtfs\n")).toBe(true);
    expect(zsh.stdout).toContain("bashcompinit");
    expect(zsh.stdout).toContain("complete -F _txtfs txtfs");
    const bad = await runTxtfs(["completion", "tcsh"]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("choose bash, zsh or fish");
  });
});

describe("txtfs completion fish", () => {
  let fishScript: string;
  beforeAll(async () => {
    const r = await runTxtfs(["completion", "fish"]);
    expect(r.code, r.stderr).toBe(0);
    fishScript = join(dir, "txtfs.fish");
    writeFileSync(fishScript, r.stdout);
  });

  /** What a real fish offers for the command line (`complete -C`), names only, sorted. */
  function fish(line: string): string[] {
    const out = execFileSync("fish", ["--no-config", "-c", `source '${fishScript}'; complete -C '${line}'`], {
      cwd: dir,
      encoding: "utf8",
    });
    return out
      .split("\n")
      .filter(Boolean)
      .map((l) => l.split("\t")[0]!)
      .sort();
  }

  it("completes commands with their descriptions, nested subcommands, options and their choices", () => {
    expect(fish("txtfs se")).toEqual(["serve"]);
    expect(fish("txtfs admin ")).toEqual(["backup", "key", "migrate", "restore", "user"]);
    expect(fish("txtfs admin key ")).toEqual(["add", "list", "revoke"]);
    expect(fish("txtfs serve --log-level ")).toEqual([
      "debug",
      "error",
      "fatal",
      "info",
      "silent",
      "trace",
      "warn",
    ]);
    // an option's value is skipped when finding the command; other commands' options are not offered
    expect(fish("txtfs serve --port 80 --tr")).toEqual(["--trust-proxy"]);
    expect(fish("txtfs mount --tr")).toEqual(["--trace"]);
    const described = execFileSync(
      "fish",
      ["--no-config", "-c", `source '${fishScript}'; complete -C 'txtfs unm'`],
      {
        encoding: "utf8",
      },
    );
    expect(described).toMatch(/^unmount\tUnmount: the daemon delivers pending saves first\./);
  });

  it("offers files for arguments and option values, none where a subcommand is expected", () => {
    expect(fish("txtfs mount no")).toEqual(["notes.md"]);
    expect(fish("txtfs admin restore --from no")).toEqual(["notes.md"]);
    expect(fish("txtfs admin no")).toEqual([]);
  });
});

describe("txtfs man", () => {
  it("renders as a man page listing every command with its options, without groff warnings", async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, XDG_DATA_HOME: "" };
    delete env.TXTFS_DATA; // the default data directory, as a user without settings sees it
    const r = await new Promise<{ code: number; stdout: string }>((resolve) =>
      execFile(process.execPath, [BIN, "man"], { env }, (err, stdout) =>
        resolve({ code: err ? 1 : 0, stdout }),
      ),
    );
    expect(r.code).toBe(0);
    const page = join(dir, "txtfs.1");
    writeFileSync(page, r.stdout);
    const text = execFileSync("man", ["-l", page], {
      encoding: "utf8",
      env: { ...process.env, MANWIDTH: "200" },
    });
    for (const section of ["NAME", "SYNOPSIS", "COMMANDS", "ENVIRONMENT", "FILES"])
      expect(text).toMatch(new RegExp(`^${section}$`, "m"));
    for (const command of [
      "txtfs serve",
      "txtfs admin backup",
      "txtfs admin key add <email>",
      "txtfs mount <mountpoint>",
      "txtfs pin <paths...>",
    ])
      expect(text).toContain(command);
    expect(text).toContain("--log-level <level>");
    expect(text).toContain("one of: fatal, error, warn, info, debug, trace, silent");
    expect(text).toContain("TXTFS_METRICS_TOKEN");
    // defaults under the home directory are shown as ~ (the page is the same for every user)
    expect(text).toContain("(default: ~/.local/share/txtfs)");
    expect(text).not.toContain(`${homedir()}/`);
    const lint = spawnSync("groff", ["-man", "-ww", "-z", page], { encoding: "utf8" });
    expect(lint.stderr).toBe("");
  });
});
