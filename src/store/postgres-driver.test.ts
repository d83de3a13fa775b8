// Our Kysely driver on the `postgres` package: a transaction never waits for ever on a pool whose
// connection attempt failed (a loaded test run once hung there for good: each transaction's
// connection came from the driver's reserve(), whose waiter could be dropped when a connection
// attempt timed out), and the transaction's own semantics: commit, rollback, settings, failures.
import assert from "node:assert/strict";
import net from "node:net";
import { after, before, describe, test } from "node:test";
import { sql } from "kysely";
import { migratedPostgresDatabase, postgresUrl } from "../../test/backends.ts";
import { openStore, type Store } from "./store.ts";

/** A hang's safety net: how long the transactions may take before they count as stuck. */
const SETTLE_LIMIT_MS = 60_000;

describe("the PostgreSQL driver", { skip: postgresUrl ? false : "no PostgreSQL for this run" }, () => {
  const postgresServer = new URL(postgresUrl ?? "postgres://127.0.0.1:5432/");
  let database: Awaited<ReturnType<typeof migratedPostgresDatabase>> | undefined;
  const stores: Store[] = [];
  const open = async (pgPoolSize: number) => {
    if (!database) throw new Error("no database");
    const store = await openStore({ databaseUrl: database.databaseUrl, pgPoolSize });
    stores.push(store);
    return store;
  };
  before(async () => {
    database = await migratedPostgresDatabase(postgresUrl as string);
    const store = await open(1);
    await sql`create table driver_rows (id integer primary key, label text not null)`.execute(store.db);
  });
  after(async () => {
    for (const store of stores) await store.close();
    await database?.drop();
  });

  test("a connection attempt that times out while a transaction waits for a connection leaves no transaction waiting for ever", async () => {
    // A server that leaves the pool's first connection attempt unanswered (a loaded machine, a
    // network that drops a SYN) and passes every later one through. The old driver hung here:
    // the waiting transaction's place in the pool's queue went to the retried connection and was
    // dropped when it opened (postgres 3.4.9's reserve()).
    let attempts = 0;
    const held: net.Socket[] = [];
    const server = net.createServer((socket) => {
      socket.on("error", () => {});
      if (attempts++ === 0) {
        held.push(socket);
        return;
      }
      const upstream = net.connect(Number(postgresServer.port || 5432), postgresServer.hostname);
      upstream.on("error", () => socket.destroy());
      socket.on("error", () => upstream.destroy());
      socket.pipe(upstream).pipe(socket);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const through = new URL(database?.databaseUrl as string);
      through.hostname = "127.0.0.1";
      through.port = String((server.address() as net.AddressInfo).port);
      const store = await openStore({ databaseUrl: through.toString(), pgPoolSize: 2 });
      stores.push(store);
      const settled = (work: Promise<unknown>) =>
        work.then(
          () => "committed",
          (error: { code?: string }) => error.code ?? String(error),
        );
      // One transaction outlasts the driver's 5 s connect timeout on the connection that answers;
      // the other is queued behind it while the first attempt times out.
      const long = store.db.transaction().execute((trx) => sql`select pg_sleep(6)`.execute(trx));
      const short = store.db.transaction().execute((trx) => sql`select 1`.execute(trx));
      let timer: NodeJS.Timeout | undefined;
      const stuck = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`still waiting after ${SETTLE_LIMIT_MS} ms`)),
          SETTLE_LIMIT_MS,
        );
      });
      let outcomes: string[];
      try {
        outcomes = await Promise.race([Promise.all([settled(long), settled(short)]), stuck]);
      } finally {
        clearTimeout(timer);
      }
      // Each either committed or failed with the timeout (a statement bound to the attempt that
      // timed out fails with it, a 503 in the service); neither is left waiting.
      for (const outcome of outcomes) assert.match(outcome, /^(committed|CONNECT_TIMEOUT)$/);
      assert.ok(outcomes.includes("committed"), String(outcomes));
      // And the pool goes on.
      assert.equal(
        await settled(store.db.transaction().execute((trx) => sql`select 1`.execute(trx))),
        "committed",
      );
    } finally {
      for (const socket of held) socket.destroy();
      server.close();
    }
  });

  test("a transaction that throws is rolled back with the error it threw, and the pool goes on", async () => {
    const store = await open(1);
    const failure = new Error("changed my mind");
    await assert.rejects(
      store.db.transaction().execute(async (trx) => {
        await sql`insert into driver_rows (id, label) values (1, 'rolled back')`.execute(trx);
        throw failure;
      }),
      (error) => error === failure,
    );
    const { rows } = await sql`select * from driver_rows where id = 1`.execute(store.db);
    assert.deepEqual(rows, []);
    // With a pool of one, a connection the rollback kept would leave this waiting.
    await store.db.transaction().execute(async (trx) => {
      await sql`insert into driver_rows (id, label) values (2, 'kept')`.execute(trx);
    });
    assert.equal((await sql`select * from driver_rows where id = 2`.execute(store.db)).rows.length, 1);
  });

  test("a statement that fails fails the transaction, which writes nothing", async () => {
    const store = await open(1);
    await assert.rejects(
      store.db.transaction().execute(async (trx) => {
        await sql`insert into driver_rows (id, label) values (3, 'first')`.execute(trx);
        await sql`insert into driver_rows (id, label) values (3, 'again')`.execute(trx);
      }),
      (error: { code?: string }) => error.code === "23505",
    );
    assert.deepEqual((await sql`select * from driver_rows where id = 3`.execute(store.db)).rows, []);
  });

  test("the isolation level and access mode Kysely asks for are the transaction's", async () => {
    const store = await open(1);
    const seen = await store.db
      .transaction()
      .setIsolationLevel("repeatable read")
      .setAccessMode("read only")
      .execute(async (trx) => {
        const level = await sql<{ v: string }>`select current_setting('transaction_isolation') as v`.execute(
          trx,
        );
        const readOnly = await sql<{
          v: string;
        }>`select current_setting('transaction_read_only') as v`.execute(trx);
        return [level.rows[0]?.v, readOnly.rows[0]?.v];
      });
    assert.deepEqual(seen, ["repeatable read", "on"]);
  });

  test("a transaction's statements all run on its one connection, and what it wrote is seen only after it commits", async () => {
    const store = await open(2);
    await store.db.transaction().execute(async (trx) => {
      const pids = new Set<number>();
      for (let i = 0; i < 5; i++) {
        pids.add(
          (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx)).rows[0]?.pid as number,
        );
      }
      assert.equal(pids.size, 1);
      await sql`insert into driver_rows (id, label) values (4, 'inside')`.execute(trx);
      const outside = await sql`select * from driver_rows where id = 4`.execute(store.db);
      assert.deepEqual(outside.rows, [], "not seen from another connection before the commit");
    });
    assert.equal((await sql`select * from driver_rows where id = 4`.execute(store.db)).rows.length, 1);
  });

  test("warm opens the whole pool before any work: the connections that serve the first statements were started before them", async () => {
    const size = 3;
    const store = await open(size);
    await store.warm();
    const { rows: marks } = await sql<{ at: Date }>`select clock_timestamp() as at`.execute(store.db);
    const mark = (marks[0] as { at: Date }).at;
    // As many statements at once as the pool holds, each kept busy a moment so that none can
    // take another's connection: each finds one idle, opened by warm (or opens one, after mark).
    const served = await Promise.all(
      Array.from({ length: size }, () =>
        sql<{ pid: number; started: Date }>`
          select pg_backend_pid() as pid, backend_start as started, pg_sleep(0.05)::text as slept
          from pg_stat_activity where pid = pg_backend_pid()`.execute(store.db),
      ),
    );
    const rows = served.map((result) => result.rows[0] as { pid: number; started: Date });
    assert.equal(new Set(rows.map((row) => row.pid)).size, size, "one connection each");
    for (const row of rows) assert.ok(row.started < mark, `connection ${row.pid} started after warm`);
  });
});
