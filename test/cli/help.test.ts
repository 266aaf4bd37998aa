// Every command's --help says defaults as a person would type them: 256M, not 268435456; "none",
// not "" or [].
import { describe, expect, it } from "vitest";
import { runTxtfs } from "../helpers/cli.ts";

/** The subcommands a help text lists under "Commands:". */
function subcommands(help: string): string[] {
  const section = help.split(/^Commands:\n/m)[1] ?? "";
  return section
    .split("\n")
    .map((line) => /^ {2}(\S+)/.exec(line)?.[1])
    .filter((name): name is string => Boolean(name) && name !== "help");
}

describe("help texts", { timeout: 120_000 }, () => {
  it("show every default in the form the option takes", async () => {
    const queue: string[][] = [[]];
    const seen: string[] = [];
    const bad: string[] = [];
    while (queue.length > 0) {
      const path = queue.shift()!;
      const res = await runTxtfs([...path, "--help"]);
      expect(res.code, `${path.join(" ")}: ${res.stderr}`).toBe(0);
      seen.push(path.join(" "));
      const help = res.stdout.replace(/\n\s+/g, " "); // a default may wrap onto the next line
      for (const m of help.matchAll(/\(default: ([^)]*)\)/g))
        if (/^(""|\[\]|\d{6,})$/.test(m[1]!)) bad.push(`${path.join(" ")}: ${m[0]}`);
      for (const sub of subcommands(res.stdout)) queue.push([...path, sub]);
    }
    expect(seen).toContain("mount");
    expect(seen).toContain("admin key add");
    expect(bad).toEqual([]);
    const mount = (await runTxtfs(["mount", "--help"])).stdout.replace(/\n\s+/g, " ");
    expect(mount).toContain("(default: 256M)");
  });
});
