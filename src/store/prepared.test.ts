import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  sql,
} from "kysely";
import { listSlots, prepared, rowSlots, rowsShape, runPreparedRows, slot } from "./prepared.ts";
import type { Database } from "./schema.ts";
import { openStore } from "./store.ts";

// Compiles for PostgreSQL without a server: enough to see the SQL and parameters it would send.
const postgresCompiler = () =>
  new Kysely<Database>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => new DummyDriver(),
      createIntrospector: (db) => new PostgresIntrospector(db),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
  });

describe("prepared statements", () => {
  test("each call sends its own values in the placeholders' places, constants kept", () => {
    const db = postgresCompiler();
    const build = () =>
      db
        .updateTable("jobs")
        .set({ status: slot("to"), attempts: 0 })
        .where("id", "=", slot("id"))
        .where("status", "in", [slot("from0"), slot("from1")]);
    const first = prepared(db, "test move", build, {
      to: "running",
      id: "j1",
      from0: "queued",
      from1: "pending",
    });
    const second = prepared(db, "test move", build, {
      to: "failed",
      id: "j2",
      from0: "running",
      from1: "delayed",
    });
    assert.equal(first.sql, second.sql);
    assert.equal(
      first.sql,
      'update "jobs" set "status" = $1, "attempts" = $2 where "id" = $3 and "status" in ($4, $5)',
    );
    assert.deepEqual(first.parameters, ["running", 0, "j1", "queued", "pending"]);
    assert.deepEqual(second.parameters, ["failed", 0, "j2", "running", "delayed"]);
    // The same as Kysely builds with the values themselves.
    const direct = db
      .updateTable("jobs")
      .set({ status: "failed", attempts: 0 })
      .where("id", "=", "j2")
      .where("status", "in", ["running", "delayed"])
      .compile();
    assert.equal(second.sql, direct.sql);
    assert.deepEqual(second.parameters, direct.parameters);
  });

  test("the build runs once per shape and backend, not per call", () => {
    const db = postgresCompiler();
    let builds = 0;
    const build = () => {
      builds++;
      return db.selectFrom("jobs").selectAll().where("id", "=", slot("id"));
    };
    for (let i = 0; i < 5; i++) prepared(db, "test count builds", build, { id: `j${i}` });
    assert.equal(builds, 1);
  });

  test("a placeholder that does not reach the statement as a parameter is refused", () => {
    const db = postgresCompiler();
    assert.throws(
      () =>
        prepared(
          db,
          "test inlined",
          () =>
            db
              .selectFrom("jobs")
              .selectAll()
              .where("id", "=", sql.lit(slot("id"))),
          { id: "j1" },
        ),
      /a placeholder is in its SQL/,
    );
    assert.throws(
      () =>
        prepared(
          db,
          "test missing",
          () => db.selectFrom("jobs").selectAll().where("id", "=", slot("id")),
          {},
        ),
      /no value for id/,
    );
  });

  test("a value the statement has no place for is refused", () => {
    const db = postgresCompiler();
    assert.throws(
      () =>
        prepared(db, "test extra", () => db.selectFrom("jobs").selectAll().where("id", "=", slot("id")), {
          id: "a",
          status: "x",
        }),
      /nowhere to put status/,
    );
  });

  test("a list: one placeholder per item, its values under the same names", () => {
    const db = postgresCompiler();
    const list = listSlots("status", ["queued", "pending"]);
    assert.deepEqual(list.values, { status0: "queued", status1: "pending" });
    const compiled = prepared(
      db,
      "test list 2",
      () => db.selectFrom("jobs").selectAll().where("status", "in", list.placeholders),
      list.values,
    );
    assert.match(compiled.sql, /"status" in \(\$1, \$2\)/);
    assert.deepEqual(compiled.parameters, ["queued", "pending"]);
  });

  test("rows: one placeholder per column and row, and a shape only for small batches", () => {
    const { placeholders, values } = rowSlots([
      { id: "a", n: 1 },
      { id: "b", n: 2 },
    ]);
    assert.equal(placeholders.length, 2);
    assert.deepEqual(values, { "id:0": "a", "n:0": 1, "id:1": "b", "n:1": 2 });
    assert.equal(
      rowsShape("insert x", [
        { id: "a", n: 1 },
        { id: "b", n: 2 },
      ]),
      "insert x 2 id,n,",
    );
    const many = Array.from({ length: 33 }, (_, n) => ({ n }));
    assert.equal(rowsShape("insert x", many), undefined);
  });

  test("rows: an undefined value leaves its column out, and the shape says so", () => {
    const full = [{ id: "a", n: 1 }];
    const partial = [{ id: "a", n: undefined }];
    assert.deepEqual(rowSlots(partial).values, { "id:0": "a" });
    assert.notEqual(rowsShape("insert x", full), rowsShape("insert x", partial));
    const mixed = [
      { id: "a", n: 1 },
      { id: "b", n: undefined },
    ];
    assert.equal(rowsShape("insert x", mixed), "insert x 2 id,n,|id,");
  });

  test("runPreparedRows on SQLite: each call's rows land in their own columns, an unset one takes its default", async () => {
    const store = await openStore({ sqliteFile: ":memory:" });
    try {
      await store.migrate();
      const db = store.db;
      const insert = (rows: { run_at: number; max_attempts: number; key?: string }[]) =>
        runPreparedRows(
          db,
          "test insert tasks",
          rows.map((row) => ({ task: "t", payload: "{}", created_at: 1, ...row })),
          (placeholders) =>
            db.insertInto("queue_tasks").values(placeholders).returning(["key", "run_at", "max_attempts"]),
        );
      // The same shape twice (its template then reused), a different count, and a row without a column.
      const first = await insert([
        { key: "a", run_at: 1, max_attempts: 3 },
        { key: "b", run_at: 2, max_attempts: 4 },
      ]);
      const second = await insert([
        { key: "c", run_at: 5, max_attempts: 6 },
        { key: "d", run_at: 7, max_attempts: 8 },
      ]);
      const third = await insert([{ run_at: 9, max_attempts: 10 }]);
      assert.deepEqual(first, [
        { key: "a", run_at: 1, max_attempts: 3 },
        { key: "b", run_at: 2, max_attempts: 4 },
      ]);
      assert.deepEqual(second, [
        { key: "c", run_at: 5, max_attempts: 6 },
        { key: "d", run_at: 7, max_attempts: 8 },
      ]);
      assert.deepEqual(third, [{ key: null, run_at: 9, max_attempts: 10 }]);
      // A batch past the prepared sizes is built from its rows: the same columns, the same defaults.
      const many = Array.from({ length: 100 }, (_, i) =>
        i % 3 === 0
          ? { run_at: 100 + i, max_attempts: i }
          : { key: `k${i}`, run_at: 100 + i, max_attempts: i },
      );
      assert.deepEqual(
        await insert(many),
        many.map((row) => ({ key: row.key ?? null, run_at: row.run_at, max_attempts: row.max_attempts })),
      );
    } finally {
      await store.close();
    }
  });

  test("on SQLite, through the store: rows written and read back by prepared statements", async () => {
    const store = await openStore({ sqliteFile: ":memory:" });
    try {
      await store.migrate();
      const db = store.db;
      const insert = (key: string) => {
        const { placeholders, values } = rowSlots([
          { task: "t", payload: "{}", run_at: 1, key, max_attempts: 3, created_at: 1 },
        ]);
        return db.executeQuery(
          prepared(
            db,
            "test insert task",
            () => db.insertInto("queue_tasks").values(placeholders).returning("key"),
            values,
          ),
        );
      };
      const a = await insert("key-a");
      const b = await insert("key-b");
      assert.deepEqual(a.rows, [{ key: "key-a" }]);
      assert.deepEqual(b.rows, [{ key: "key-b" }]);
      const keys = await db.selectFrom("queue_tasks").select("key").orderBy("key").execute();
      assert.deepEqual(
        keys.map((row) => row.key),
        ["key-a", "key-b"],
      );
    } finally {
      await store.close();
    }
  });
});
