// vitest globalSetup of the `postgres` project: one throwaway cluster for the run. Every test
// server then gets a fresh database in it (test/helpers/server.ts). TXTFS_TEST_PG_URL, when set,
// names an existing server to use instead (its role must be allowed to CREATE DATABASE).
import type { TestProject } from "vitest/node";
import { type PgCluster, startPgCluster } from "./pgCluster.ts";

let cluster: PgCluster | undefined;

export async function setup(project: TestProject) {
  let url = process.env.TXTFS_TEST_PG_URL;
  if (!url) {
    cluster = await startPgCluster();
    url = cluster.url;
  }
  project.provide("pgUrl", url);
}

export async function teardown() {
  cluster?.stop();
}

declare module "vitest" {
  export interface ProvidedContext {
    pgUrl: string;
  }
}
