// Pipelined work in a transaction, on both backends: results in the order the pieces are listed,
// the transaction whole (committed together, or rolled back together when a piece fails, with that
// piece's own error), and the transaction usable after it. That it saves round trips on PostgreSQL is
// measured by `npm run bench` (the trigger scenario), not asserted here.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { type Kysely, sql } from "kysely";
import { describeEachBackend, type OpenedDatabase } from "../../test/backends.ts";
import { pipelined } from "./pipeline.ts";
import type { Database } from "./schema.ts";

describeEachBackend("pipelined work", (backend) => {
  let opened: OpenedDatabase;
  let db: Kysely<Database>;
  before(async () => {
    opened = await backend.open();
    db = opened.store.db;
    await sql`create table pipe_rows (id integer primary key, label text not null)`.execute(db);
    await sql`create table pipe_children (id integer primary key, row_id integer not null references pipe_rows (id))`.execute(
      db,
    );
  });
  after(() => opened?.destroy());

  const insert = (on: Kysely<Database>, id: number, label: string) =>
    sql`insert into pipe_rows (id, label) values (${id}, ${label})`.execute(on);
  const labels = async (on: Kysely<Database>) =>
    (await sql<{ label: string }>`select label from pipe_rows order by id`.execute(on)).rows.map(
      (r) => r.label,
    );

  test("the pieces' results come back in their order, and the transaction commits them with what came before and after", async () => {
    await sql`delete from pipe_children`.execute(db);
    await sql`delete from pipe_rows`.execute(db);
    const [first, second, third] = await db.transaction().execute(async (trx) => {
      await insert(trx, 1, "before");
      const results = await pipelined(trx, [
        async (p) => {
          await insert(p, 2, "a");
          return "one";
        },
        // A piece of several statements, each after the previous one's answer: it sees its own
        // write, and the write of the piece listed (and sent) before it.
        async (p) => {
          await insert(p, 3, "b");
          return labels(p);
        },
        async (p) => (await sql<{ n: number }>`select 40 + 2 as n`.execute(p)).rows[0]?.n,
      ]);
      await insert(trx, 4, "after");
      return results;
    });
    assert.equal(first, "one");
    assert.deepEqual(second, ["before", "a", "b"]);
    assert.equal(Number(third), 42);
    assert.deepEqual(await labels(db), ["before", "a", "b", "after"]);
  });

  test("a failing piece rolls the whole transaction back, and its own error is the one thrown", async () => {
    await sql`delete from pipe_children`.execute(db);
    await sql`delete from pipe_rows`.execute(db);
    await insert(db, 10, "kept");
    let started = 0;
    let settled = 0;
    const counted = (piece: (p: Kysely<Database>) => Promise<unknown>) => (p: Kysely<Database>) => {
      started++;
      return piece(p).finally(() => settled++);
    };
    await assert.rejects(
      db.transaction().execute(async (trx) => {
        await insert(trx, 11, "lost");
        await pipelined(trx, [
          counted((p) => insert(p, 12, "lost too")),
          // A duplicate key: on PostgreSQL it aborts the transaction and the piece after it fails
          // for that reason; the duplicate is what must be reported.
          counted((p) => insert(p, 10, "duplicate")),
          counted((p) => sql`select 1`.execute(p)),
        ]);
        await insert(trx, 13, "never");
      }),
      (error: Error) => {
        assert.match(error.message, /unique|duplicate/i);
        // Every piece started had settled before the error came out: none was left running on
        // the connection when the transaction rolled back (on PostgreSQL all three start at once;
        // on SQLite they run in turn, and the third never starts).
        assert.ok(started >= 2);
        assert.equal(settled, started);
        return true;
      },
    );
    assert.deepEqual(await labels(db), ["kept"]);
    // The connection is fine afterwards.
    await db.transaction().execute((trx) => insert(trx, 14, "next"));
    assert.deepEqual(await labels(db), ["kept", "next"]);
  });

  test("the pieces' first statements run in the order listed, however long a piece takes to reach its first", async () => {
    await sql`delete from pipe_children`.execute(db);
    await sql`delete from pipe_rows`.execute(db);
    await db.transaction().execute((trx) =>
      pipelined(trx, [
        async (p) => {
          // Work before the first statement (a piece that reads, maps, awaits): without the turn
          // taking, the child's insert below would reach the connection first.
          for (let i = 0; i < 20; i++) await Promise.resolve();
          await insert(p, 20, "parent");
        },
        (p) => sql`insert into pipe_children (id, row_id) values (1, 20)`.execute(p),
      ]),
    );
    const children = await sql<{ row_id: number }>`select row_id from pipe_children`.execute(db);
    assert.deepEqual(
      children.rows.map((r) => Number(r.row_id)),
      [20],
    );
  });

  test("outside a transaction it refuses: pieces on separate pool connections would have no order", async () => {
    await assert.rejects(pipelined(db, [async () => 1]), /inside a transaction/);
  });
});
