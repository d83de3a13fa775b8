// PostgreSQL only: it reads PostgreSQL's schemas; SQLite has none and keeps Kysely's introspector.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { Kysely, PostgresIntrospector } from "kysely";
import postgres from "postgres";
import { postgresUrl } from "../../test/backends.ts";
import { PostgresJsDialect } from "./postgres-driver.ts";
import { openStore, type Store } from "./store.ts";

// The Migrator introspects before every run. Kysely's own introspector read every schema of the
// database and failed ("schema … does not exist") whenever another schema was dropped meanwhile,
// which broke a start-up in CI. Ours reads only the search path's schemas.

describe("PostgreSQL introspection", { skip: postgresUrl ? false : "PostgreSQL is not available" }, () => {
  const url = postgresUrl as string;
  const tag = `${process.pid}_${randomBytes(3).toString("hex")}`;
  const ours = `introspect_${tag}`;
  const neighbour = `introspect_other_${tag}`;
  let admin: postgres.Sql;
  let store: Store;

  before(async () => {
    admin = postgres(url, { max: 1, onnotice: () => {} });
    await admin
      .unsafe(
        `create schema "${neighbour}"; create table "${neighbour}".workflows (id serial primary key, x text)`,
      )
      .simple();
    store = await openStore({ databaseUrl: url, pgSchema: ours, pgPoolSize: 2 });
    await store.migrate();
    await admin.unsafe(
      `create table "${ours}".probe (serial_id serial, identity_id int generated always as identity, plain int default 7)`,
    );
  });

  after(async () => {
    await store?.close();
    await admin
      .unsafe(`drop schema if exists "${ours}" cascade; drop schema if exists "${neighbour}" cascade`)
      .simple();
    await admin.end();
  });

  test("describes our tables exactly as Kysely's own introspector does, and no other schema's", async () => {
    const mine = await store.db.introspection.getTables({ withInternalKyselyTables: true });
    assert.ok(mine.length >= 6, "the migrated tables are listed");
    assert.ok(
      mine.every((t) => t.schema === ours),
      "only the search path's schema is read",
    );

    const sqlClient = postgres(url, { max: 1, onnotice: () => {}, connection: { search_path: ours } });
    const kysely = new Kysely<unknown>({ dialect: new PostgresJsDialect(sqlClient) });
    try {
      // Kysely's own introspector reads every schema of the shared test database and fails when
      // another test file drops its schema meanwhile (the very fault ours removes): retry it.
      const theirs = (
        await withRetries(() =>
          new PostgresIntrospector(kysely).getTables({ withInternalKyselyTables: true }),
        )
      ).filter((t) => t.schema === ours);
      const plain = (value: unknown) => JSON.parse(JSON.stringify(value));
      assert.deepEqual(plain(mine), plain(theirs));
      // Our workflows table is found; the neighbour's table of the same name is not.
      const workflows = mine.filter((t) => t.name === "workflows");
      assert.equal(workflows.length, 1);
      assert.ok(workflows[0]?.columns.some((c) => c.name === "environment_id"));
      // Serial and identity columns are auto-incrementing; a plain integer with a default is not.
      const probe = mine.find((t) => t.name === "probe");
      assert.deepEqual(
        probe?.columns.map((c) => [c.name, c.isAutoIncrementing, c.hasDefaultValue]),
        [
          ["serial_id", true, true],
          ["identity_id", true, false],
          ["plain", false, true],
        ],
      );
    } finally {
      await kysely.destroy();
    }
  });

  test("migrating while other schemas of the database are created and dropped never fails", async () => {
    const churner = postgres(url, { max: 1, onnotice: () => {} });
    let stop = false;
    let churned = 0;
    const churn = (async () => {
      for (let i = 0; !stop; i++) {
        const name = `introspect_churn_${tag}_${i}`;
        await churner
          .unsafe(`create schema "${name}"; create table "${name}".t (id serial primary key, a text)`)
          .simple();
        await churner.unsafe(`drop schema "${name}" cascade`);
        churned++;
      }
    })();
    const failures: string[] = [];
    try {
      // Kysely's own introspector failed about one run in fifteen under this churn.
      for (let i = 0; i < 150; i++) {
        try {
          await store.migrate();
        } catch (error) {
          failures.push(String(error));
        }
      }
    } finally {
      stop = true;
      await churn;
      await churner.end();
    }
    assert.ok(churned > 0, "schemas were dropped while migrating");
    assert.deepEqual(failures, []);
  });
});

async function withRetries<T>(run: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (error) {
      if ((error as { code?: string }).code !== "3F000" || attempt >= 20) throw error;
    }
  }
}
