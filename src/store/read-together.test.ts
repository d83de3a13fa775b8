import assert from "node:assert/strict";
import { test } from "node:test";
import { sql } from "kysely";
import { readTogether } from "./read-together.ts";
import { openStore } from "./store.ts";

// Identical reads asked in one turn of the event loop are made once; a read asked once the statement
// is sent makes its own, and sees what was written meanwhile; reads inside a transaction are not shared.
test("readTogether: identical reads of one turn share one statement, later ones and transactions do not", async () => {
  const store = await openStore({ sqliteFile: ":memory:" });
  try {
    const { db } = store;
    await sql`create table counter (n integer not null)`.execute(db);
    await sql`insert into counter values (1)`.execute(db);
    let statements = 0;
    const read = (key: string) =>
      readTogether(db, key, async () => {
        statements++;
        const { rows } = await sql<{ n: number }>`select n from counter`.execute(db);
        return rows[0]?.n;
      });

    const together = await Promise.all([read("a"), read("a"), read("a"), read("b")]);
    assert.deepEqual(together, [1, 1, 1, 1]);
    assert.equal(statements, 2, "one statement for the three reads of a, one for b");

    // The first read's statement is sent at the end of its turn; a read asked after that makes its
    // own, after the update, and answers what the update wrote.
    const first = read("a");
    await new Promise((resolve) => setImmediate(resolve));
    await sql`update counter set n = 2`.execute(db);
    const second = read("a");
    assert.deepEqual(await Promise.all([first, second]), [1, 2]);
    assert.equal(statements, 4);

    await db.transaction().execute(async (trx) => {
      const inside = () =>
        readTogether(trx, "a", async () => {
          statements++;
          return 0;
        });
      await Promise.all([inside(), inside()]);
    });
    assert.equal(statements, 6, "each read of a transaction is its own");
  } finally {
    await store.close();
  }
});
