import assert from "node:assert/strict";
import { test } from "node:test";
import { sql } from "kysely";
import postgres from "postgres";
import { forEachProcessBackend } from "../../test/processes.ts";
import { openStore } from "./store.ts";

// The durability promise (contract part 9: a 2xx survives a killed process and a power cut) rests
// on settings a crash test cannot see, since the OS cache survives a killed process: check them on
// the store the service actually opens. Each backend has its own setting, so each run checks its own.

forEachProcessBackend("durability settings", (suite) => {
  if (suite.backend === "sqlite") {
    test("SQLite runs in WAL mode at synchronous=NORMAL, each commit's log fdatasync'd before it is reported", async () => {
      const database = await suite.database();
      const store = await openStore(database.storeOptions);
      try {
        await store.migrate();
        const groupCommit = store.groupCommit;
        const raw = groupCommit?.raw;
        assert.ok(raw, "the SQLite store exposes its connection");
        assert.equal(raw.pragma("journal_mode", { simple: true }), "wal");
        // 1 = NORMAL: COMMIT writes the log and returns; the WalSync makes it durable.
        assert.equal(raw.pragma("synchronous", { simple: true }), 1);
        // 2 = MEMORY: a unit's statement journal never becomes a temporary file a commit creates.
        assert.equal(raw.pragma("temp_store", { simple: true }), 2);
        const walSync = groupCommit?.walSync;
        assert.ok(walSync, "a file store at NORMAL syncs its log itself");
        const before = walSync.stats.syncs;
        await sql`create table durability_probe (x integer)`.execute(store.db);
        await sql`insert into durability_probe values (1)`.execute(store.db);
        assert.ok(walSync.stats.syncs > before, "a write is answered only after an fdatasync of the log");
      } finally {
        await store.close();
      }
    });

    test("SQLITE_SYNC=full: synchronous=FULL, the fsync inside COMMIT", async () => {
      const database = await suite.database();
      const store = await openStore({ ...database.storeOptions, sqliteSync: "full" });
      try {
        await store.migrate();
        const raw = store.groupCommit?.raw;
        assert.ok(raw, "the SQLite store exposes its connection");
        assert.equal(raw.pragma("journal_mode", { simple: true }), "wal");
        // 2 = FULL: every commit waits for its fsync.
        assert.equal(raw.pragma("synchronous", { simple: true }), 2);
        assert.equal(store.groupCommit?.walSync, undefined);
      } finally {
        await store.close();
      }
    });
  }

  if (suite.backend === "postgres")
    test("PostgreSQL commits synchronously even where the database's default says otherwise", async () => {
      const database = await suite.database();
      const url = database.storeOptions.databaseUrl as string;
      const admin = postgres(url, { max: 1, onnotice: () => {} });
      try {
        const name = new URL(url).pathname.slice(1);
        await admin.unsafe(`alter database "${name}" set synchronous_commit = off`);
      } finally {
        await admin.end();
      }
      const store = await openStore({ databaseUrl: url, pgPoolSize: 2 });
      try {
        const { rows } = await sql<{
          value: string;
        }>`select current_setting('synchronous_commit') as value`.execute(store.db);
        assert.equal(rows[0]?.value, "on");
      } finally {
        await store.close();
      }
    });
});
