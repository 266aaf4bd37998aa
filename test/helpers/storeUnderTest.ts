// Which store the running vitest project tests: `postgres` provides the cluster URL (pgGlobalSetup).
import { inject } from "vitest";

/** The PostgreSQL admin URL in the `postgres` project, else undefined (the SQLite store). */
export function testPgUrl(): string | undefined {
  if (process.env.TXTFS_TEST_STORE !== "postgres") return undefined;
  const url = inject("pgUrl");
  if (!url)
    throw new Error("the postgres project runs without its globalSetup (test/helpers/pgGlobalSetup.ts)");
  return url;
}
