import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, test } from "node:test";
import postgres from "postgres";
import { workerSchemaFor } from "../src/engine/queue/index.ts";
import { openStore, postgresAnswers, redactDatabaseUrl, type Store } from "../src/store/store.ts";

export type BackendName = "sqlite" | "postgres";

export interface OpenedDatabase {
  store: Store;
  /** Another connection to the same database (standing for another process); the caller closes it. */
  connect(): Promise<Store>;
  destroy(): Promise<void>;
}

export interface Backend {
  readonly name: BackendName;
  /** A fresh, migrated database of this backend, and how to throw it away. */
  open(): Promise<OpenedDatabase>;
}

const DEFAULT_PG_URL = "postgres://postgres@127.0.0.1:5432/test";

/**
 * Runs a set-up step; when it fails, throws away what was opened before rethrowing. An open pool or
 * worker left behind keeps the test file's process alive long after its tests have failed.
 */
export async function orDestroy<T>(destroy: () => Promise<void>, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    await destroy().catch(() => {});
    throw error;
  }
}

/** Drops a test's PostgreSQL schema and everything in it. */
export async function dropSchema(url: string, schema: string): Promise<void> {
  const admin = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`drop schema if exists "${schema}" cascade`);
  } finally {
    await admin.end();
  }
}

const sqlite: Backend = {
  name: "sqlite",
  async open() {
    // A real file in WAL mode, as in production, not :memory:.
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "tidings-test-"));
    const store = await openStore({ dataDir });
    const destroy = async () => {
      await store.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    };
    await orDestroy(destroy, () => store.migrate());
    return { store, destroy, connect: () => openStore({ dataDir }) };
  },
};

function postgresBackend(url: string): Backend {
  return {
    name: "postgres",
    async open() {
      // Each test file works in a schema of its own, dropped afterwards.
      const schema = `test_${process.pid}_${randomBytes(4).toString("hex")}`;
      const store = await openStore({ databaseUrl: url, pgSchema: schema, pgPoolSize: 10 });
      const destroy = async () => {
        await store.close();
        await dropSchema(url, schema);
        // The job queue's worker schema, when a test opened the queue.
        await dropSchema(url, workerSchemaFor(schema));
      };
      await orDestroy(destroy, () => store.migrate());
      return {
        store,
        destroy,
        connect: () => openStore({ databaseUrl: url, pgSchema: schema, pgPoolSize: 4 }),
      };
    },
  };
}

/**
 * The backends every HTTP test runs against: SQLite always; PostgreSQL at TEST_DATABASE_URL (then
 * required: unreachable is a failure), or at the local default when one answers there. When neither,
 * the PostgreSQL half is skipped and says so loudly.
 */
async function resolveBackends(): Promise<{ backends: Backend[]; skipped?: string; postgresUrl?: string }> {
  const required = process.env.TEST_DATABASE_URL;
  if (required) {
    if (!(await postgresAnswers(required))) {
      throw new Error(
        `TEST_DATABASE_URL is set but PostgreSQL does not answer at ${redactDatabaseUrl(required)}`,
      );
    }
    return { backends: [sqlite, postgresBackend(required)], postgresUrl: required };
  }
  if (await postgresAnswers(DEFAULT_PG_URL)) {
    return { backends: [sqlite, postgresBackend(DEFAULT_PG_URL)], postgresUrl: DEFAULT_PG_URL };
  }
  return {
    backends: [sqlite],
    skipped: `PostgreSQL SKIPPED: TEST_DATABASE_URL is not set and nothing answers at ${DEFAULT_PG_URL}`,
  };
}

/** The PostgreSQL server the suite uses (undefined when its half is skipped), for tests that need a database of their own. */
export const { backends, skipped: postgresSkipped, postgresUrl } = await resolveBackends();

/**
 * Declares `define` once per backend of the run, each inside describe(`<name> [<backend>]`), and,
 * when the PostgreSQL half is skipped, a skipped test that says so. The one loop behind
 * forEachBackend (in-process apps) and forEachProcessBackend (real processes). `only` narrows the
 * backends (a reliability run on one of them).
 */
export function describeEachBackend(
  name: string,
  define: (backend: Backend) => void,
  only?: readonly BackendName[],
): void {
  for (const backend of backends) {
    if (only && !only.includes(backend.name)) continue;
    describe(`${name} [${backend.name}]`, () => define(backend));
  }
  if (postgresSkipped && (!only || only.includes("postgres"))) {
    describe(`${name} [postgres]`, () => {
      test("PostgreSQL half", { skip: postgresSkipped }, () => {});
    });
    process.emitWarning(postgresSkipped);
  }
}
