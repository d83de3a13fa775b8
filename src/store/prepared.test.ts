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
import { backends } from "../../test/backends.ts";
import {
  listSlots,
  prepared,
  rowSlots,
  rowsShape,
  runPreparedList,
  runPreparedRows,
  slot,
} from "./prepared.ts";
import type { Database } from "./schema.ts";
import { openStore } from "./store.ts";
import { readBool, readTimestamp } from "./values.ts";

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

  test("on PostgreSQL, rows go as one JSON parameter: one statement whatever their count", async () => {
    const sent: { sql: string; parameters: readonly unknown[] }[] = [];
    const db = new Kysely<Database>({
      dialect: {
        createAdapter: () => new PostgresAdapter(),
        createDriver: () => ({
          init: async () => {},
          acquireConnection: async () => ({
            executeQuery: async (compiled: { sql: string; parameters: readonly unknown[] }) => {
              sent.push({ sql: compiled.sql, parameters: compiled.parameters });
              return { rows: [] };
            },
            streamQuery: () => {
              throw new Error("not used");
            },
          }),
          beginTransaction: async () => {},
          commitTransaction: async () => {},
          rollbackTransaction: async () => {},
          releaseConnection: async () => {},
          destroy: async () => {},
        }),
        createIntrospector: (db) => new PostgresIntrospector(db),
        createQueryCompiler: () => new PostgresQueryCompiler(),
      },
    });
    const insert = (rows: { environment_id: string; minute: number; recipients: number }[]) =>
      runPreparedRows(db, "test json rows", rows, (placeholders) =>
        db
          .insertInto("quota_recipients")
          .values(placeholders)
          .onConflict((conflict) => conflict.column("environment_id").doUpdateSet({ recipients: 7 }))
          .returning("environment_id"),
      );
    const rowsOf = (count: number) =>
      Array.from({ length: count }, (_, i) => ({ environment_id: `e${i}`, minute: i, recipients: i }));
    await insert(rowsOf(1));
    await insert(rowsOf(40));
    assert.equal(sent.length, 2);
    assert.equal(sent[0]?.sql, sent[1]?.sql);
    assert.equal(
      sent[0]?.sql,
      'insert into "quota_recipients" ("environment_id", "minute", "recipients") select "environment_id", "minute", "recipients" from json_populate_recordset(null::"quota_recipients", $1::text::json) on conflict ("environment_id") do update set "recipients" = $2 returning "environment_id"',
    );
    assert.deepEqual(sent[0]?.parameters, ['[{"environment_id":"e0","minute":0,"recipients":0}]', 7]);
    assert.deepEqual(JSON.parse(sent[1]?.parameters[0] as string), rowsOf(40));
    // A build that does not put each row's placeholders in its VALUES as they come keeps a statement
    // per row count.
    sent.length = 0;
    await runPreparedRows(db, "test renamed rows", [{ id: "a", n: 1 }], (placeholders) =>
      db
        .insertInto("quota_recipients")
        .values(placeholders.map(({ id, n }) => ({ environment_id: id, minute: n, recipients: n }))),
    );
    assert.equal(
      sent[0]?.sql,
      'insert into "quota_recipients" ("environment_id", "minute", "recipients") values ($1, $2, $3)',
    );
    assert.deepEqual(sent[0]?.parameters, ["a", 1, 1]);
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

for (const backend of backends) {
  describe(`runPreparedRows through the store [${backend.name}]`, () => {
    test("any number of rows in one statement: each value in its row and column, defaults, conflicts, returning", async () => {
      const opened = await backend.open();
      try {
        const db = opened.store.db;
        type Detail = {
          id: string;
          status: string;
          detail: string;
          raw?: string;
          is_retry?: boolean;
          created_at: string;
        };
        const insert = (rows: Detail[]) =>
          runPreparedRows(
            db,
            "test insert details",
            rows.map((row) => ({
              organization_id: "o",
              environment_id: "e",
              job_id: "j",
              notification_id: "n",
              subscriber_ref: "s",
              ...row,
            })),
            (placeholders) =>
              db
                .insertInto("execution_details")
                .values(placeholders as never)
                .onConflict((conflict) => conflict.column("id").doNothing())
                .returning(["id", "detail", "raw", "is_retry", "created_at"]),
          );
        const read = (
          rows: { id: string; detail: string; raw: string; is_retry: unknown; created_at: unknown }[],
        ) =>
          rows.map((row) => ({
            id: row.id,
            detail: row.detail,
            raw: row.raw,
            is_retry: readBool(row.is_retry as boolean),
            created_at: readTimestamp(row.created_at as string),
          }));
        const at = (n: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString();
        // Text that must arrive as it was: quotes, backslashes, JSON, other scripts, an empty string.
        const awkward = ['it\'s "quoted"', "back\\slash \\u0041", '{"a":[1,{"b":null}]}', "ünï 日本 🎉", ""];
        const rowsOf = (from: number, count: number): Detail[] =>
          Array.from({ length: count }, (_, i) => ({
            id: `d${from + i}`,
            status: "Success",
            detail: awkward[(from + i) % awkward.length] as string,
            raw: `raw ${from + i}`,
            is_retry: (from + i) % 2 === 0,
            created_at: at(from + i),
          }));
        const expected = (rows: Detail[]) =>
          rows.map((row) => ({
            id: row.id,
            detail: row.detail,
            raw: row.raw ?? "",
            is_retry: row.is_retry ?? false,
            created_at: row.created_at,
          }));
        // One row, two, the same two-row shape again, and many more than a prepared batch holds.
        for (const rows of [rowsOf(0, 1), rowsOf(1, 2), rowsOf(3, 2), rowsOf(5, 300)])
          assert.deepEqual(read(await insert(rows)), expected(rows));
        // Rows without the defaulted columns take their defaults.
        const bare = [
          { id: "bare1", status: "Pending", detail: "x", created_at: at(400) },
          { id: "bare2", status: "Pending", detail: "y", created_at: at(401) },
        ];
        assert.deepEqual(read(await insert(bare)), expected(bare));
        // Rows setting different columns in one batch (PostgreSQL only: SQLite has no DEFAULT in a
        // VALUES list, and Kysely writes NULL in its place, so a batch's rows set the same columns there).
        const mixed =
          backend.name === "postgres"
            ? [
                { id: "mixed1", status: "Pending", detail: "x", created_at: at(402) },
                {
                  id: "mixed2",
                  status: "Pending",
                  detail: "y",
                  raw: "r",
                  is_retry: true,
                  created_at: at(403),
                },
              ]
            : [];
        if (mixed.length > 0) assert.deepEqual(read(await insert(mixed)), expected(mixed));
        // A conflicting id is skipped, the rest inserted and returned.
        const again = [...rowsOf(0, 1), ...rowsOf(900, 1)];
        assert.deepEqual(read(await insert(again)), expected(rowsOf(900, 1)));
        const stored = await db
          .selectFrom("execution_details")
          .select(["id", "detail", "raw", "is_retry", "created_at"])
          .orderBy("id")
          .execute();
        const all = [...rowsOf(0, 305), ...bare, ...mixed, ...rowsOf(900, 1)];
        assert.deepEqual(
          read(stored),
          expected(all).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)),
        );
        // A lone surrogate is not text: both backends store U+FFFD in its place (PostgreSQL's JSON
        // refused the escape JSON.stringify writes for it; SQLite stored its three bytes, not UTF-8);
        // a pair, and text that only looks like an escape, as they are.
        const [odd] = await insert([
          {
            id: "surrogates",
            status: "Pending",
            detail: "lone \ud800 high, lone \udc00 low, a pair \ud83c\udf89, an escape's text \\ud800",
            created_at: at(500),
          },
        ]);
        assert.equal(
          odd?.detail,
          "lone \ufffd high, lone \ufffd low, a pair \ud83c\udf89, an escape's text \\ud800",
        );
      } finally {
        await opened.destroy();
      }
    });

    /** `fn` with a fresh store of this backend, destroyed afterwards. */
    const withDb = async (
      fn: (db: Awaited<ReturnType<typeof backend.open>>["store"]["db"]) => Promise<void>,
    ) => {
      const opened = await backend.open();
      try {
        await fn(opened.store.db);
      } finally {
        await opened.destroy();
      }
    };

    /** An execution detail of no particular job, for the statements below to write and move. */
    const detailRow = (id: string, detail: string) => ({
      id,
      organization_id: "o",
      environment_id: "e",
      job_id: "j",
      notification_id: "n",
      subscriber_ref: "s",
      status: "Pending",
      detail,
      raw: "",
      is_retry: false,
      created_at: new Date(Date.UTC(2026, 0, 1)).toISOString(),
    });

    test("a list of any length: each call matches exactly its items, eight statements up to 128 items", () =>
      withDb(async (db) => {
        await db
          .insertInto("execution_details")
          .values(
            Array.from({ length: 300 }, (_, i) => detailRow(`d${String(i).padStart(3, "0")}`, `detail ${i}`)),
          )
          .execute();
        let builds = 0;
        const move = async (ids: string[], to: string) => {
          const rows = await runPreparedList<{ id: string }>(
            db,
            "test move details",
            ids,
            (list) => {
              builds++;
              return db
                .updateTable("execution_details")
                .set({ status: slot("to") })
                .where("id", "in", list)
                .where("organization_id", "=", "o")
                .returning("id");
            },
            { to },
          );
          return rows.map((row) => row.id).sort();
        };
        const id = (i: number) => `d${String(i).padStart(3, "0")}`;
        // Every length from 1 to 130, over ids that move a status each time: only the named rows move,
        // each once, whatever the list was padded with.
        for (let length = 1; length <= 130; length++) {
          const ids = Array.from({ length }, (_, i) => id((length * 7 + i) % 300));
          const moved = await move(ids, `S${length}`);
          assert.deepEqual(moved, [...new Set(ids)].sort(), `length ${length}`);
          const statuses = await db
            .selectFrom("execution_details")
            .select(["id", "status"])
            .where("status", "=", `S${length}`)
            .execute();
          assert.deepEqual(statuses.map((row) => row.id).sort(), [...new Set(ids)].sort());
        }
        // Lengths 1..128 built once per power of two (1, 2, 4, ..., 128); 129 and 130 each their own.
        assert.equal(builds, 8 + 2);
        await assert.rejects(move([], "x"), /an empty list/);
      }));

    test("many rows in a transaction: written together, or none of them when one fails", () =>
      withDb(async (db) => {
        const rowsOf = (from: number, count: number) =>
          Array.from({ length: count }, (_, i) =>
            detailRow(`t${String(from + i).padStart(4, "0")}`, `row ${from + i}`),
          );
        // Without ON CONFLICT: a row whose id is taken fails the whole INSERT.
        const insert = (trx: typeof db, rows: ReturnType<typeof rowsOf>) =>
          runPreparedRows(trx, "test insert many details", rows, (placeholders) =>
            trx
              .insertInto("execution_details")
              .values(placeholders as never)
              .returning("id"),
          );
        await db.transaction().execute(async (trx) => {
          const written = await insert(trx, rowsOf(0, 100));
          assert.deepEqual(
            written.map((row) => row.id),
            rowsOf(0, 100).map((row) => row.id),
          );
        });
        // 100 new rows, the 71st of which is taken: none of them is written. On SQLite the
        // transaction goes on after the failed statement (on PostgreSQL a failed statement ends it).
        const clash = [...rowsOf(1000, 70), ...rowsOf(5, 1), ...rowsOf(1071, 29)];
        const goesOn = backend.name === "sqlite";
        const outcome = db.transaction().execute(async (trx) => {
          await assert.rejects(insert(trx, clash));
          if (goesOn) assert.equal((await insert(trx, rowsOf(2000, 40))).length, 40);
        });
        if (goesOn) await outcome;
        else await assert.rejects(outcome);
        const stored = await db.selectFrom("execution_details").select("id").orderBy("id").execute();
        assert.deepEqual(
          stored.map((row) => row.id),
          [...rowsOf(0, 100), ...(goesOn ? rowsOf(2000, 40) : [])].map((row) => row.id),
        );
      }));
  });
}
