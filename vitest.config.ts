import { existsSync } from "node:fs";
import { defineConfig } from "vitest/config";

// Two projects: everything on the embedded SQLite store, and the API suite plus the multi-server
// tests again on a throwaway PostgreSQL cluster. `npx vitest run --project sqlite` (or
// TXTFS_TEST_PG=0) runs without PostgreSQL.
const withPostgres = process.env.TXTFS_TEST_PG !== "0";

// Real FUSE mounts need /dev/fuse: without it the mount tests are left out, and said so (finer
// kernel features are probed per test: test/helpers/kernel.ts).
const withFuse = existsSync("/dev/fuse");
if (!withFuse)
  process.stderr.write("[skip] test/mount and test/auth/mount.test.ts: no /dev/fuse on this machine\n");

const shared = {
  testTimeout: 20_000,
  hookTimeout: 30_000,
  pool: "forks" as const,
  // Debian's bash reads ~/.bashrc when its stdin is a socket (it takes itself for rshd's) and SHLVL
  // is below 2 — every `bash -c` the tests start from Node, whose pipes are sockets, when the suite
  // runs without SHLVL (CI: `env -i`). This machine's bashrc (pyenv, cargo) cost ~150 ms a start
  // and put its own PATH first: the model test took 232 s instead of 46.
  env: { SHLVL: "1" },
};

export default defineConfig({
  test: {
    reporters: ["default"],
    projects: [
      {
        test: {
          ...shared,
          name: "sqlite",
          include: ["test/**/*.test.ts"],
          exclude: ["test/postgres/**", ...(withFuse ? [] : ["test/mount/**", "test/auth/mount.test.ts"])],
        },
      },
      ...(withPostgres
        ? [
            {
              test: {
                ...shared,
                name: "postgres",
                include: ["test/api/**/*.test.ts", "test/postgres/**/*.test.ts"],
                globalSetup: ["test/helpers/pgGlobalSetup.ts"],
                env: { ...shared.env, TXTFS_TEST_STORE: "postgres" },
              },
            },
          ]
        : []),
    ],
  },
});
