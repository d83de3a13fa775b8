// SQLite only: the checkpointer copies SQLite's WAL into its file, machinery PostgreSQL does not have.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { pathToFileURL } from "node:url";
import SqliteDatabase from "better-sqlite3";
import { poll } from "../../test/poll.ts";
import { SqliteCheckpointer } from "./sqlite-checkpointer.ts";

describe("SQLite background checkpoints", () => {
  let dir: string;

  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "tidings-ckpt-"));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  function openWriter(name: string) {
    const file = path.join(dir, name);
    const raw = new SqliteDatabase(file);
    raw.pragma("journal_mode = WAL");
    raw.pragma("synchronous = FULL");
    raw.exec("create table items (id integer primary key, body text not null)");
    return { file, raw };
  }

  test("with nothing written the worker looks less and less often, and as often as before once writes resume", async () => {
    const { file, raw } = openWriter("idle.db");
    const checkpointer = SqliteCheckpointer.start(file, raw, { intervalMs: 10, idleMaxMs: 400 });
    try {
      // Idle: the waits double from 10 ms to 400 ms, so the looks of a second at rest are a handful
      // (at a fixed 10 ms they would be a hundred).
      await poll(
        () => checkpointer.stats.runs,
        (runs) => runs >= 8,
        { what: "the worker's first looks" },
      );
      const idleFrom = checkpointer.stats.runs;
      await new Promise((resolve) => setTimeout(resolve, 1200));
      const idleLooks = checkpointer.stats.runs - idleFrom;
      assert.ok(idleLooks <= 6, `${idleLooks} looks in 1.2 s at rest`);
      // Writes: the worker is back at its interval and copies them.
      const insert = raw.prepare("insert into items (body) values (?)");
      for (let i = 0; i < 50; i++) insert.run("x".repeat(2000));
      await poll(
        () => ({ ...checkpointer.stats }),
        (s) => s.logFrames > 0 && s.checkpointedFrames === s.logFrames,
        { what: "the worker to copy the new frames" },
      );
    } finally {
      await checkpointer.stop();
      if (raw.open) raw.close();
    }
  });

  test("the worker copies committed pages into the database file while the writer only appends", async () => {
    const { file, raw } = openWriter("steady.db");
    const checkpointer = SqliteCheckpointer.start(file, raw, { intervalMs: 20 });
    try {
      // The writer hands checkpoints to the worker, keeping its own only as a backstop.
      assert.equal(raw.pragma("wal_autocheckpoint", { simple: true }), 4000);
      const insert = raw.prepare("insert into items (body) values (?)");
      for (let i = 0; i < 400; i++) insert.run("x".repeat(2000));
      // Each insert was a commit of its own: hundreds of frames, under the writer's backstop, so no
      // checkpoint ran on the writer and whatever reached the database file, the worker put there.
      // A run counted now may have begun mid-way through the writes: wait for two more. (Not a frame
      // count: should the worker catch up while the writer pauses, the log restarts from frame 1.)
      const runsBefore = checkpointer.stats.runs;
      await poll(
        () => ({ ...checkpointer.stats }),
        (s) => s.runs >= runsBefore + 2 && s.checkpointedFrames === s.logFrames,
        { what: "the worker to checkpoint every frame written" },
      );
      // The database file alone (a copy, without its log) holds every row.
      const copy = path.join(dir, "steady-copy.db");
      fs.copyFileSync(file, copy);
      const reader = new SqliteDatabase(copy, { readonly: true });
      try {
        assert.equal((reader.prepare("select count(*) as n from items").get() as { n: number }).n, 400);
      } finally {
        reader.close();
      }
    } finally {
      await checkpointer.stop();
      if (raw.open) raw.close();
    }
  });

  test("stop() closes the worker's connection: the writer closes last and leaves no log behind", async () => {
    const { file, raw } = openWriter("stop.db");
    const checkpointer = SqliteCheckpointer.start(file, raw, { intervalMs: 20 });
    raw.prepare("insert into items (body) values (?)").run("hello");
    await poll(
      () => checkpointer.stats.runs,
      (runs) => runs > 0,
      { what: "the worker to run" },
    );
    await checkpointer.stop();
    assert.equal(
      raw.pragma("wal_autocheckpoint", { simple: true }),
      1000,
      "the writer is back on SQLite's schedule",
    );
    raw.close();
    assert.equal(fs.existsSync(`${file}-wal`), false, "the last connection to close removed the log");
  });

  test("the worker never keeps a process alive: one that does not close its store still exits", () => {
    const script = path.join(dir, "forgetful.mts");
    const store = pathToFileURL(path.join(import.meta.dirname, "store.ts")).href;
    fs.writeFileSync(
      script,
      `import { openStore } from ${JSON.stringify(store)};
const store = await openStore({ dataDir: ${JSON.stringify(path.join(dir, "forgetful"))} });
await store.migrate();
if (!store.checkpointer) throw new Error("no checkpointer");
console.log("migrated");\n`,
    );
    const child = spawnSync(process.execPath, ["--import", "tsx", script], {
      encoding: "utf8",
      timeout: 30_000,
    });
    assert.equal(child.error, undefined, "the process ended by itself");
    assert.equal(child.status, 0, child.stderr);
    assert.match(child.stdout, /migrated/);
  });

  test("a worker that cannot work is reported, and the writer checkpoints by itself again", async () => {
    const { raw } = openWriter("fallback.db");
    const errors: Error[] = [];
    const checkpointer = SqliteCheckpointer.start(path.join(dir, "missing", "nothing.db"), raw, {
      intervalMs: 20,
      onError: (error) => errors.push(error),
    });
    try {
      await poll(
        () => errors,
        (found) => found.length > 0,
        { what: "the failure to be reported" },
      );
      assert.equal(raw.pragma("wal_autocheckpoint", { simple: true }), 1000);
    } finally {
      await checkpointer.stop();
      raw.close();
    }
  });
});
