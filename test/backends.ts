import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, test } from "node:test";
import { runMigrations } from "graphile-worker";
import postgres from "postgres";
import { workerSchemaFor } from "../src/engine/queue/index.ts";
import {
  openStore,
  postgresAnswers,
  redactDatabaseUrl,
  SQLITE_FILE,
  type Store,
} from "../src/store/store.ts";

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

/** The SQLite file every test database of this process is copied from (see sqliteTemplate()). */
let sqliteTemplateReady: Promise<string> | undefined;

/**
 * A migrated SQLite file, made once per test process: copying it costs a millisecond or two, where
 * migrating a new file cost about a tenth of a second of CPU, for every database a file opens. As
 * with PostgreSQL's template, the store opened on the copy still checks its revision.
 */
function sqliteTemplate(): Promise<string> {
  sqliteTemplateReady ??= (async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tidings-test-template-"));
    process.once("exit", () => fs.rmSync(dir, { recursive: true, force: true }));
    const store = await openStore({ dataDir: dir });
    try {
      await store.migrate();
    } finally {
      // Closing the last connection checkpoints the log into the file, which is then all there is.
      await store.close();
    }
    return path.join(dir, SQLITE_FILE);
  })();
  return sqliteTemplateReady;
}

const sqlite: Backend = {
  name: "sqlite",
  async open() {
    // A real file in WAL mode, as in production, not :memory:.
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "tidings-test-"));
    fs.copyFileSync(await sqliteTemplate(), path.join(dataDir, SQLITE_FILE));
    const store = await openStore({ dataDir });
    const destroy = async () => {
      await store.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    };
    await orDestroy(destroy, () => store.migrate());
    return { store, destroy, connect: () => openStore({ dataDir }) };
  },
};

/**
 * What a migrated test database holds depends on our migrations and on graphile-worker's: their
 * digest names the template, so a changed migration makes a new one.
 */
function templateName(): string {
  const root = path.resolve(import.meta.dirname, "..");
  const hash = createHash("sha256");
  const migrations = path.join(root, "src", "store", "migrations");
  for (const name of fs.readdirSync(migrations).sort()) {
    hash.update(name).update(fs.readFileSync(path.join(migrations, name)));
  }
  const worker = path.join(root, "node_modules", "graphile-worker", "package.json");
  hash.update(JSON.parse(fs.readFileSync(worker, "utf8")).version);
  return `tidings_test_template_${hash.digest("hex").slice(0, 16)}`;
}

const TEMPLATE_PREFIX = "tidings_test_template_";
let templateReady: Promise<string> | undefined;

/**
 * The migrated database each test database is copied from, made once per set of migrations by
 * whichever test process asks first (the others wait on an advisory lock). Copying it costs
 * PostgreSQL about a fifth of a second; migrating a new schema cost about a second, for every test
 * file, and dropping it more.
 */
function template(url: string): Promise<string> {
  templateReady ??= (async () => {
    const digest = templateName();
    const admin = postgres(url, { max: 1, onnotice: () => {} });
    try {
      await admin`select pg_advisory_lock(hashtext('tidings:test-template'))`;
      // Named `<digest>_<seconds since the epoch when made>`.
      const [found] = await admin<{ datname: string }[]>`
        select datname from pg_database where datname ~ ${`^${digest}_[0-9]+$`}`;
      if (found) return found.datname;
      // Other checkouts (other branches, other migrations) may share this server and be using
      // theirs: only templates made more than a day ago are dropped.
      const dayAgo = Math.floor(Date.now() / 1000) - 86_400;
      for (const old of await admin<{ datname: string }[]>`
        select datname from pg_database where datname like ${`${TEMPLATE_PREFIX}%`}`) {
        const madeAt = Number(/_(\d+)$/.exec(old.datname)?.[1] ?? 0);
        if (madeAt < dayAgo) await admin.unsafe(`drop database if exists "${old.datname}" with (force)`);
      }
      const name = `${digest}_${Math.floor(Date.now() / 1000)}`;
      // Built under another name and renamed once complete, so a template is never half-made.
      const building = `${digest}_building`;
      await admin.unsafe(`drop database if exists "${building}" with (force)`);
      await admin.unsafe(`create database "${building}"`);
      const buildingUrl = databaseUrlFor(url, building);
      const store = await openStore({ databaseUrl: buildingUrl, pgPoolSize: 2 });
      try {
        await store.migrate();
      } finally {
        await store.close();
      }
      await runMigrations({
        connectionString: buildingUrl,
        schema: workerSchemaFor(undefined),
        maxPoolSize: 1,
      });
      await admin.unsafe(`alter database "${building}" rename to "${name}"`);
      return name;
    } finally {
      await admin`select pg_advisory_unlock(hashtext('tidings:test-template'))`.catch(() => {});
      await admin.end();
    }
  })();
  return templateReady;
}

function databaseUrlFor(server: string, database: string): string {
  const url = new URL(server);
  url.pathname = `/${database}`;
  return url.toString();
}

/**
 * Set by `npm test` (scripts/run-tests.mjs) for the processes it runs: the run's mark, which the
 * names of the run's PostgreSQL databases carry, and a promise that the runner drops them all once
 * the run is over.
 *
 * Dropping a database makes PostgreSQL (15) take a checkpoint at once, writing out every page any
 * test database has changed since the last one: with a drop at the end of each test file, the
 * server wrote out each new copy of the template (~10 MB) and rewrote the pages the running tests
 * kept changing, some hundred times a run. Dropped together after the run, databases that no
 * checkpoint reached are never written at all.
 */
const testRun = process.env.TIDINGS_TEST_RUN;

/**
 * A name for a test's own PostgreSQL database: `<kind>_<run>_<pid>_<random>`, the run's mark when the
 * runner drops the run's databases itself, else `<kind>_<pid>_<random>`.
 */
export function testDatabaseName(kind: "tidings_test" | "tidings_proc"): string {
  return [kind, ...(testRun ? [testRun] : []), process.pid, randomBytes(4).toString("hex")].join("_");
}

/** Drops a test's database: at once, or, in a run that drops them all at its end, not here. */
export async function dropTestDatabase(server: string, name: string): Promise<void> {
  if (testRun && name.includes(`_${testRun}_`)) return;
  const admin = postgres(server, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`drop database if exists "${name}" with (force)`);
  } finally {
    await admin.end();
  }
}

/** A new database copied from the migrated template (see template()), dropped by the caller. */
export async function migratedPostgresDatabase(
  server: string,
): Promise<{ databaseUrl: string; drop(): Promise<void> }> {
  const name = testDatabaseName("tidings_test");
  const admin = postgres(server, { max: 1, onnotice: () => {} });
  try {
    await admin
      .unsafe(`create database "${name}" template "${await template(server)}"`)
      .catch(async (error) => {
        // Another checkout's run dropped it (an older one did so at once): made again, once.
        if (!/template database .* does not exist/.test(String(error?.message))) throw error;
        templateReady = undefined;
        await admin.unsafe(`create database "${name}" template "${await template(server)}"`);
      });
  } finally {
    await admin.end();
  }
  return {
    databaseUrl: databaseUrlFor(server, name),
    drop: () => dropTestDatabase(server, name),
  };
}

function postgresBackend(url: string): Backend {
  return {
    name: "postgres",
    async open() {
      // Each test file works in a database of its own, copied from a migrated template and dropped
      // afterwards; the store and its queue use the server's default schemas, as a user's would.
      const database = await migratedPostgresDatabase(url);
      const destroy = async () => {
        await store?.close();
        await database.drop();
      };
      let store: Store | undefined;
      store = await orDestroy(destroy, () =>
        openStore({ databaseUrl: database.databaseUrl, pgPoolSize: 10 }),
      );
      // A no-op on the template's copy; kept so that a store opened on it checks its revision.
      await orDestroy(destroy, () => (store as Store).migrate());
      return {
        store,
        destroy,
        connect: () => openStore({ databaseUrl: database.databaseUrl, pgPoolSize: 4 }),
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
 * backends (a reliability run on one of them). `sideBySide` runs the halves at once instead of one
 * after the other: only for suites whose halves share nothing in the test's own process (no
 * module-level state), such as the steady load, which spends its time waiting on its server.
 * `concurrency` lets that many of a half's tests run at once (node:test's describe option): for
 * suites of many independent tests, each on data of its own.
 */
export function describeEachBackend(
  name: string,
  define: (backend: Backend) => void,
  only?: readonly BackendName[],
  { sideBySide = false, concurrency }: { sideBySide?: boolean; concurrency?: number } = {},
): void {
  const halves = () => {
    for (const backend of backends) {
      if (only && !only.includes(backend.name)) continue;
      describe(`${name} [${backend.name}]`, { concurrency }, () => define(backend));
    }
    if (postgresSkipped && (!only || only.includes("postgres"))) {
      describe(`${name} [postgres]`, () => {
        test("PostgreSQL half", { skip: postgresSkipped }, () => {});
      });
      process.emitWarning(postgresSkipped);
    }
  };
  if (sideBySide) describe(name, { concurrency: true }, halves);
  else halves();
}
