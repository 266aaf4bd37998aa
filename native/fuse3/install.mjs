// npm's install step of the txtfs package: builds txtfs's libfuse3 binding (this folder) with
// node-gyp, as native addons are, and records a Node new enough for txtfs when the one running npm
// is (bin/txtfs runs on it when the first `node` on PATH is older). Plain JavaScript: npm may run it
// on any Node. TXTFS_SKIP_FUSE=1 installs without the binding (`txtfs serve` only; no mount).
import { spawnSync } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..", "..");
const say = (line) => process.stderr.write(`txtfs: ${line}\n`);
const has = (cmd, args = ["--version"]) => spawnSync(cmd, args, { stdio: "ignore" }).status === 0;

// A clone (npm ci in scripts/setup): scripts/setup builds the binding itself, when its sources change.
if (existsSync(join(root, "src", "cli", "main.ts"))) process.exit(0);

const [major, minor] = process.versions.node.split(".").map(Number);
if (major > 22 || (major === 22 && minor >= 13))
  writeFileSync(join(root, "node-path"), `${process.execPath}\n`);

function missing(what, debian) {
  say(`cannot build the FUSE binding (native/fuse3), which txtfs mount needs: ${what}.`);
  say(
    `Install it (Debian/Ubuntu: apt-get install ${debian}; Fedora: dnf install fuse3-devel gcc make pkgconf),`,
  );
  say("then install txtfs again; or set TXTFS_SKIP_FUSE=1 to install without the mount (txtfs serve only).");
  process.exit(1);
}

if (process.env.TXTFS_SKIP_FUSE === "1") {
  say("TXTFS_SKIP_FUSE=1: the FUSE binding is not built; txtfs mount will say so.");
  process.exit(0);
}
if (!has("pkg-config")) missing("pkg-config is missing", "pkg-config libfuse3-dev fuse3");
if (!has("pkg-config", ["--exists", "fuse3"]))
  missing("libfuse3's headers are missing", "libfuse3-dev fuse3");
if (!has("cc") && !has("gcc")) missing("there is no C compiler", "gcc make");
if (!has("make")) missing("make is missing", "make");
if (!has("fusermount3", ["-V"]))
  say("warning: fusermount3 is missing (apt-get install fuse3); txtfs mount needs it.");

// npm gives its own node-gyp to install scripts; headers of the running Node when it has them
// (no download), else node-gyp fetches them.
const gyp = process.env.npm_config_node_gyp;
const nodedir = dirname(dirname(process.execPath));
const args = [
  "rebuild",
  ...(existsSync(join(nodedir, "include", "node", "node_api.h")) ? [`--nodedir=${nodedir}`] : []),
];
const r = gyp
  ? spawnSync(process.execPath, [gyp, ...args], { cwd: here, stdio: ["ignore", "ignore", "inherit"] })
  : spawnSync("node-gyp", args, { cwd: here, stdio: ["ignore", "ignore", "inherit"] });
if (r.status !== 0) {
  say(
    `node-gyp could not build native/fuse3 (${r.error ? r.error.message : `exit ${r.status}`}); its messages are above.`,
  );
  process.exit(1);
}
