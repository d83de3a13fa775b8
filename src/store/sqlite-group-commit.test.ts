// SQLite only: group commit is the SQLite driver's own (one writer, one fsync per batch).
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import SqliteDatabase from "better-sqlite3";
import { type ColumnType, type Generated, Kysely, sql } from "kysely";
import { poll } from "../../test/poll.ts";
import { GroupCommitSqlite, GroupCommitSqliteDialect, WalSync } from "./sqlite-group-commit.ts";

interface Db {
  items: { id: Generated<number>; name: string; flag: ColumnType<number, boolean, boolean> };
  children: { id: number; parent_id: number };
}

describe("SQLite group commit", () => {
  let dir: string;
  let file: string;
  let groupCommit: GroupCommitSqlite;
  let db: Kysely<Db>;
  /** A second, independent connection: it sees only what was committed. */
  let observer: SqliteDatabase.Database;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "tidings-gc-"));
    file = path.join(dir, "test.db");
    const raw = new SqliteDatabase(file);
    raw.pragma("journal_mode = WAL");
    raw.pragma("synchronous = FULL");
    raw.pragma("foreign_keys = ON");
    raw.exec(`
      create table items (id integer primary key, name text not null unique, flag integer not null default 0);
      create table children (id integer primary key,
        parent_id integer not null references items(id) deferrable initially deferred);
    `);
    groupCommit = new GroupCommitSqlite(raw);
    db = new Kysely<Db>({ dialect: new GroupCommitSqliteDialect(groupCommit) });
    observer = new SqliteDatabase(file, { readonly: true });
  });

  after(async () => {
    observer.close();
    await db.destroy();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const committedCount = (where = "1 = 1") =>
    (observer.prepare(`select count(*) as n from items where ${where}`).get() as { n: number }).n;

  test("rows come back as plain objects keyed by column, a column named __proto__ included", async () => {
    const { rows } = await sql<Record<string, unknown>>`
      select 1 as "__proto__", 'x' as "a b", 2 as dup, 3 as dup, null as none, x'00ff' as bytes`.execute(db);
    assert.equal(rows.length, 1);
    const row = rows[0] as Record<string, unknown>;
    assert.equal(Object.getPrototypeOf(row), Object.prototype);
    assert.deepEqual(Object.keys(row), ["__proto__", "a b", "dup", "none", "bytes"]);
    assert.equal(Object.getOwnPropertyDescriptor(row, "__proto__")?.value, 1);
    // Two columns of one name: the last one's value, as better-sqlite3's own row objects have it.
    assert.equal(row.dup, 3);
    assert.equal(row.none, null);
    assert.deepEqual(row.bytes, Buffer.from([0, 255]));
    // Many rows, each its own object.
    const many = await sql<{
      n: number;
    }>`with recursive r(n) as (select 1 union all select n + 1 from r where n < 5)
      select n from r`.execute(db);
    assert.deepEqual(
      many.rows.map((r) => r.n),
      [1, 2, 3, 4, 5],
    );
  });

  test("concurrent writes share commits, and each is visible to another connection once acknowledged", async () => {
    const commitsBefore = groupCommit.stats.commits;
    const writes = Array.from({ length: 200 }, (_, i) =>
      db
        .insertInto("items")
        .values({ name: `a${i}`, flag: true })
        .returning("id")
        .executeTakeFirstOrThrow()
        .then(({ id }) => {
          // Acknowledged: it must already be committed, so an independent connection sees it.
          const seen = observer.prepare("select name from items where id = ?").get(id) as
            | { name: string }
            | undefined;
          assert.equal(seen?.name, `a${i}`);
        }),
    );
    await Promise.all(writes);
    const commits = groupCommit.stats.commits - commitsBefore;
    assert.ok(commits >= 1 && commits < 200, `200 writes took ${commits} commits`);
    assert.equal(committedCount("name like 'a%'"), 200);
    // Booleans are bound as 1/0.
    assert.equal(committedCount("name like 'a%' and flag = 1"), 200);
  });

  test("a failing statement or a rolled-back transaction undoes only itself", async () => {
    const results = await Promise.allSettled([
      db.insertInto("items").values({ name: "b1", flag: false }).execute(),
      // Duplicate name: this statement fails alone.
      db.insertInto("items").values({ name: "b1", flag: false }).execute(),
      db.transaction().execute(async (trx) => {
        await trx.insertInto("items").values({ name: "b2", flag: false }).execute();
        await trx.insertInto("items").values({ name: "b3", flag: false }).execute();
        throw new Error("changed my mind");
      }),
      db.transaction().execute(async (trx) => {
        await trx.insertInto("items").values({ name: "b4", flag: false }).execute();
      }),
      db.insertInto("items").values({ name: "b5", flag: false }).execute(),
    ]);
    assert.deepEqual(
      results.map((r) => r.status),
      ["fulfilled", "rejected", "rejected", "fulfilled", "fulfilled"],
    );
    const names = (
      observer.prepare("select name from items where name like 'b%' order by name").all() as {
        name: string;
      }[]
    ).map((r) => r.name);
    assert.deepEqual(names, ["b1", "b4", "b5"]);
  });

  test("when the COMMIT itself fails, every unit of the batch is told, and none of it is kept", async () => {
    const results = await Promise.allSettled([
      db.insertInto("items").values({ name: "c1", flag: false }).execute(),
      // A deferred foreign key is checked at COMMIT: this makes the whole batch's COMMIT fail.
      db.insertInto("children").values({ id: 1, parent_id: 999_999 }).execute(),
      db.insertInto("items").values({ name: "c2", flag: false }).execute(),
    ]);
    assert.deepEqual(
      results.map((r) => r.status),
      ["rejected", "rejected", "rejected"],
    );
    assert.equal(committedCount("name like 'c%'"), 0);
    // And the connection is usable afterwards.
    await db.insertInto("items").values({ name: "c3", flag: false }).execute();
    assert.equal(committedCount("name = 'c3'"), 1);
  });

  test("reads see committed data and a transaction's own writes", async () => {
    const inside = await db.transaction().execute(async (trx) => {
      await trx.insertInto("items").values({ name: "d1", flag: false }).execute();
      const row = await trx.selectFrom("items").select("name").where("name", "=", "d1").executeTakeFirst();
      return row?.name;
    });
    assert.equal(inside, "d1");
    const count = await sql<{ n: number }>`select count(*) as n from items where name = 'd1'`.execute(db);
    assert.equal(count.rows[0]?.n, 1);
  });

  test("db.connection() runs several statements as one unit", async () => {
    await db.connection().execute(async (conn) => {
      await conn.insertInto("items").values({ name: "e1", flag: false }).execute();
      await conn.insertInto("items").values({ name: "e2", flag: false }).execute();
    });
    assert.equal(committedCount("name in ('e1', 'e2')"), 2);
  });

  test("every acknowledged write survives closing and reopening the file", async () => {
    await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        db
          .insertInto("items")
          .values({ name: `f${i}`, flag: false })
          .execute(),
      ),
    );
    const reopened = new SqliteDatabase(file, { readonly: true });
    try {
      const n = (
        reopened.prepare("select count(*) as n from items where name like 'f%'").get() as { n: number }
      ).n;
      assert.equal(n, 50);
      assert.equal(
        (reopened.pragma("integrity_check") as { integrity_check: string }[])[0]?.integrity_check,
        "ok",
      );
    } finally {
      reopened.close();
    }
  });
});

describe("SQLite group commit at synchronous=NORMAL, the log synced off the event loop", () => {
  let dir: string;
  let file: string;
  let groupCommit: GroupCommitSqlite;
  let walSync: WalSync;
  let db: Kysely<Db>;
  /** The syncs asked for and not yet let through: each resolves (or fails) its fdatasync. */
  const held: { fd: number; release(): void; fail(error: Error): void }[] = [];
  /** Whether syncs are held (the test lets each through) or run at once on the real file. */
  let holding = false;

  const fdatasync = (fd: number) =>
    new Promise<void>((resolve, reject) => {
      const real = () => fs.fdatasync(fd, (error) => (error ? reject(error) : resolve()));
      if (!holding) return real();
      held.push({ fd, release: real, fail: reject });
    });

  const settled = <T>(promise: Promise<T>) => {
    const state = { done: false, failed: undefined as unknown };
    promise.then(
      () => {
        state.done = true;
      },
      (error: unknown) => {
        state.failed = error;
      },
    );
    return state;
  };

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "tidings-walsync-"));
    file = path.join(dir, "test.db");
    const raw = new SqliteDatabase(file);
    raw.pragma("journal_mode = WAL");
    raw.pragma("synchronous = NORMAL");
    raw.exec(`
      create table items (id integer primary key, name text not null unique, flag integer not null default 0);
      create table children (id integer primary key, parent_id integer not null);
    `);
    walSync = new WalSync(file, { fdatasync });
    groupCommit = new GroupCommitSqlite(raw, walSync);
    db = new Kysely<Db>({ dialect: new GroupCommitSqliteDialect(groupCommit) });
  });

  after(async () => {
    holding = false;
    for (const sync of held.splice(0)) sync.release();
    await db.destroy().catch(() => {});
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test("a write is acknowledged only after an fdatasync of the log that began after its COMMIT", async () => {
    holding = true;
    const commitsBefore = groupCommit.stats.commits;
    const write = settled(db.insertInto("items").values({ name: "w1", flag: false }).execute());
    await poll(
      () => held.length,
      (n) => n === 1,
      { what: "the sync of the first commit" },
    );
    assert.equal(groupCommit.stats.commits, commitsBefore + 1, "committed at once, at NORMAL");
    const walFd = held[0]?.fd ?? -1;
    assert.equal(fs.fstatSync(walFd).ino, fs.statSync(`${file}-wal`).ino, "it syncs the log file");
    // The sync is held a while (a slow disk: the condition under test, not a wait for an outcome);
    // an acknowledgement that did not wait for it would have come meanwhile.
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(write.done, false, "not acknowledged while its sync is under way");
    held.shift()?.release();
    await poll(() => write.done, Boolean, { what: "the write's acknowledgement" });
    assert.equal(write.failed, undefined);
    holding = false;
  });

  test("writes that arrive during a sync wait in one open batch: one COMMIT and one sync for them all", async () => {
    holding = true;
    const first = settled(db.insertInto("items").values({ name: "g0", flag: false }).execute());
    await poll(
      () => held.length,
      (n) => n === 1,
      { what: "the first sync" },
    );
    const commitsBefore = groupCommit.stats.commits;
    const syncsBefore = walSync.stats.syncs;
    // Arriving over several turns of the event loop while the first sync is held.
    const later: ReturnType<typeof settled>[] = [];
    for (let i = 1; i <= 20; i++) {
      later.push(
        settled(
          db
            .insertInto("items")
            .values({ name: `g${i}`, flag: false })
            .execute(),
        ),
      );
      await new Promise((resolve) => setImmediate(resolve));
    }
    assert.equal(groupCommit.stats.commits, commitsBefore, "nothing committed while the log syncs");
    held.shift()?.release();
    await poll(() => first.done, Boolean, { what: "the first write" });
    await poll(
      () => held.length,
      (n) => n === 1,
      { what: "the gathered batch's sync" },
    );
    assert.equal(groupCommit.stats.commits, commitsBefore + 1, "the twenty writes share one COMMIT");
    assert.equal(walSync.stats.syncs, syncsBefore + 1, "and one sync");
    assert.ok(later.every((w) => !w.done));
    held.shift()?.release();
    await poll(() => later.every((w) => w.done), Boolean, { what: "the gathered writes" });
    holding = false;
  });

  test("a read that would see a commit not yet on disk waits for its sync", async () => {
    holding = true;
    const write = settled(db.insertInto("items").values({ name: "r1", flag: true }).execute());
    await poll(
      () => held.length,
      (n) => n === 1,
      { what: "the write's sync" },
    );
    // Committed, so a read finds the row: it must not answer before that row is on disk.
    const read = db.selectFrom("items").select("name").where("name", "=", "r1").executeTakeFirst();
    const reading = settled(read);
    // The sync is held a while (a slow disk: the condition under test, not a wait for an outcome);
    // a read that did not wait for it would have answered meanwhile.
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(reading.done, false, "the read waits for the sync");
    held.shift()?.release();
    assert.deepEqual(await read, { name: "r1" });
    await poll(() => write.done, Boolean, { what: "the write" });
    // Nothing unsynced: a read answers at once, with no sync of its own.
    const syncs = walSync.stats.syncs;
    assert.deepEqual(
      await db.selectFrom("items").select("name").where("name", "=", "r1").executeTakeFirst(),
      { name: "r1" },
    );
    assert.equal(walSync.stats.syncs, syncs);
    holding = false;
  });

  test("a write that changes no row answers after its batch's COMMIT, with no sync asked for or waited for", async () => {
    holding = true;
    const syncs = walSync.stats.syncs;
    const updated = await db
      .updateTable("items")
      .set({ flag: true })
      .where("name", "=", "none")
      .executeTakeFirst();
    assert.equal(updated.numUpdatedRows, 0n);
    const deleted = await db.deleteFrom("items").where("name", "=", "none").returning("id").execute();
    assert.deepEqual(deleted, []);
    // A statement as text (a prepared template's) is judged the same way.
    const raw = await sql`update items set flag = 1 where name = ${"none"}`.execute(db);
    assert.equal(raw.numAffectedRows, 0n);
    // Let the empty batches commit: they ask for no sync either.
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(held.length, 0, "no sync asked for");
    assert.equal(walSync.stats.syncs, syncs);
    holding = false;
  });

  test("a write that changes no row but may have seen another's write waits for that write's sync", async () => {
    holding = true;
    // Another unit's write in the same batch, not yet committed when the update runs.
    const write = settled(db.insertInto("items").values({ name: "seen1", flag: false }).execute());
    const sameBatch = settled(
      db.updateTable("items").set({ flag: true }).where("name", "=", "none").executeTakeFirst(),
    );
    await poll(
      () => held.length,
      (n) => n === 1,
      { what: "the write's sync" },
    );
    // Committed but not yet on disk when this one runs.
    const afterCommit = settled(
      db.updateTable("items").set({ flag: true }).where("name", "=", "none").executeTakeFirst(),
    );
    // The sync is held a while (a slow disk: the condition under test, not a wait for an outcome);
    // an update that did not wait for it would have answered meanwhile.
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(sameBatch.done, false, "the update in the write's batch waits for its sync");
    assert.equal(afterCommit.done, false, "the update after its commit waits for its sync");
    held.shift()?.release();
    await poll(() => write.done && sameBatch.done && afterCommit.done, Boolean, { what: "all three" });
    assert.equal(sameBatch.failed ?? afterCommit.failed, undefined);
    holding = false;
  });

  test("a failed sync refuses its writes and every later one, for good", async () => {
    holding = true;
    const write = settled(db.insertInto("items").values({ name: "x1", flag: false }).execute());
    await poll(
      () => held.length,
      (n) => n === 1,
      { what: "the write's sync" },
    );
    held.shift()?.fail(Object.assign(new Error("EIO: i/o error, fdatasync"), { code: "EIO" }));
    await poll(
      () => write.failed,
      (failed) => failed !== undefined,
      { what: "the write's refusal" },
    );
    assert.match(String(write.failed), /could not be synced to disk: EIO/);
    assert.ok(walSync.failure);
    holding = false;
    await assert.rejects(
      db.insertInto("items").values({ name: "x2", flag: false }).execute(),
      /could not be synced to disk/,
    );
    await assert.rejects(db.selectFrom("items").select("name").execute(), /could not be synced to disk/);
  });
});
