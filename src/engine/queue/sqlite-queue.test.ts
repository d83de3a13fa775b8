// The embedded queue: business time from the injected clock, retries and give-up, and what a worker
// that starts after a crash does with the tasks the dead one had claimed.
import assert from "node:assert/strict";
import path from "node:path";
import { after, afterEach, before, describe, test } from "node:test";
import { backends } from "../../../test/backends.ts";
import { poll } from "../../../test/poll.ts";
import { gate, type QueueFixture, queueFixture, silentLogger } from "../../../test/queue-helpers.ts";
import { type ManualClock, systemClock } from "../../clock.ts";
import { openStore } from "../../store/store.ts";
import type { FailedTask } from "./port.ts";
import { retryDelayMs } from "./port.ts";
import { SqliteQueue } from "./sqlite-queue.ts";

const sqlite = backends.find((b) => b.name === "sqlite");
if (!sqlite) throw new Error("the SQLite backend is always there");

describe("SQLite job queue", () => {
  let fx: QueueFixture;
  let clock: ManualClock;
  before(async () => {
    fx = await queueFixture(sqlite);
    clock = fx.clock as ManualClock;
  });
  afterEach(() => fx.reset());
  after(() => fx?.destroy());

  const addTasks = (queue: SqliteQueue, tasks: Parameters<SqliteQueue["add"]>[1]) =>
    fx.store.db.transaction().execute((trx) => queue.add(trx, tasks));

  const openSqlite = async (options?: Parameters<QueueFixture["open"]>[0]) => {
    const queue = await fx.open(options);
    assert.ok(queue instanceof SqliteQueue);
    return queue;
  };

  test("a task due later does not run before its time, and runs when the clock reaches it", async () => {
    const queue = await openSqlite();
    const ranAt: number[] = [];
    await queue.start({ remind: async () => void ranAt.push(clock.now()) });
    const due = clock.now() + 10 * 60_000;
    await addTasks(queue, [{ task: "remind", payload: {}, runAt: due }]);
    queue.wake();
    await queue.idle();

    clock.advance(10 * 60_000 - 1);
    await queue.idle();
    assert.deepEqual(ranAt, [], "ran before it was due");
    clock.advance(1);
    await queue.idle();
    assert.deepEqual(ranAt, [due]);
    assert.equal(await fx.count(), 0);
  });

  test("a failing task is retried with backoff (first within 5 s, five runs in 2 minutes), then given up and reported", async () => {
    const queue = await openSqlite();
    const runs: { at: number; attempt: number; maxAttempts: number; taskId: string }[] = [];
    const failed: { task: FailedTask; error: unknown }[] = [];
    await queue.start(
      {
        flaky: async (_payload, context) => {
          runs.push({ at: clock.now(), ...context });
          throw new Error(`attempt ${context.attempt} failed`);
        },
      },
      { onFailed: async (task, error) => void failed.push({ task, error }) },
    );
    const start = clock.now();
    await addTasks(queue, [{ task: "flaky", payload: { job: "j1" } }]);
    queue.wake();
    await queue.idle();
    assert.equal(runs.length, 1);

    // Each retry comes exactly when the backoff says, not a millisecond before.
    for (let attempt = 1; attempt < 8; attempt++) {
      const last = runs.at(-1)?.at ?? 0;
      clock.set(last + retryDelayMs(attempt) - 1);
      await queue.idle();
      assert.equal(runs.length, attempt, `attempt ${attempt + 1} ran early`);
      clock.advance(1);
      await queue.idle();
      assert.equal(runs.length, attempt + 1, `attempt ${attempt + 1} did not run when due`);
    }
    assert.deepEqual(
      runs.map((r) => r.attempt),
      [1, 2, 3, 4, 5, 6, 7, 8],
    );
    assert.ok(runs.every((r) => r.maxAttempts === 8 && r.taskId === runs[0]?.taskId));
    assert.ok((runs[1]?.at ?? 0) - start <= 5_000, "the first retry comes within 5 s");
    assert.ok((runs[4]?.at ?? Number.POSITIVE_INFINITY) - start <= 120_000, "five runs within two minutes");

    assert.equal(failed.length, 1, "given up once, after the eighth attempt");
    assert.deepEqual(failed[0]?.task, {
      taskId: runs[0]?.taskId,
      task: "flaky",
      payload: { job: "j1" },
      attempts: 8,
      maxAttempts: 8,
    });
    assert.match(String(failed[0]?.error), /attempt 8 failed/);
    assert.equal(await fx.count(), 0, "a given-up task is removed");
    clock.advance(24 * 3_600_000);
    await queue.idle();
    assert.equal(runs.length, 8, "nothing runs after the give-up");
  });

  test("a task whose handler is unknown fails like a throwing one; a failing give-up hook still removes it", async () => {
    const queue = await openSqlite();
    const failed: string[] = [];
    await queue.start(
      { known: async () => {} },
      {
        onFailed: async (_task, error) => {
          failed.push(String(error));
          throw new Error("the hook itself failed");
        },
      },
    );
    await addTasks(queue, [{ task: "unknown", payload: {}, maxAttempts: 1 }]);
    queue.wake();
    await queue.idle();
    assert.deepEqual(failed, ['Error: no handler for task "unknown"']);
    assert.equal(await fx.count(), 0);
  });

  test("add() refuses a malformed task before it reaches the database", async () => {
    const queue = await openSqlite();
    await assert.rejects(addTasks(queue, [{ task: "", payload: {} }]), TypeError);
    await assert.rejects(addTasks(queue, [{ task: "t", payload: {}, maxAttempts: 0 }]), RangeError);
    await assert.rejects(addTasks(queue, [{ task: "t", payload: {}, runAt: Number.NaN }]), RangeError);
    await assert.rejects(addTasks(queue, [{ task: "t", payload: {}, key: "" }]), RangeError);
    assert.equal(await fx.count(), 0);
  });

  test("runs at most `concurrency` tasks at once, and all of them", async () => {
    const queue = await openSqlite({ concurrency: 3 });
    let running = 0;
    let most = 0;
    let done = 0;
    await queue.start({
      work: async () => {
        running++;
        most = Math.max(most, running);
        await new Promise((resolve) => setImmediate(resolve));
        running--;
        done++;
      },
    });
    await addTasks(
      queue,
      Array.from({ length: 20 }, (_, n) => ({ task: "work", payload: { n } })),
    );
    queue.wake();
    await queue.idle();
    assert.equal(done, 20);
    assert.equal(most, 3);
  });

  test("with the system clock, a due task starts within 100 ms of its time", async () => {
    const queue = await openSqlite({ clock: systemClock });
    let startedAt = 0;
    await queue.start({
      soon: async () => {
        startedAt = systemClock.now();
      },
    });
    const due = systemClock.now() + 200;
    await fx.store.db
      .transaction()
      .execute((trx) => queue.add(trx, [{ task: "soon", payload: {}, runAt: due }]));
    queue.wake();
    await poll(
      () => startedAt,
      (at) => at > 0,
      { what: "the task to run", limitMs: 2_000 },
    );
    assert.ok(startedAt >= due, `started ${due - startedAt} ms early`);
    assert.ok(startedAt - due < 100, `started ${startedAt - due} ms late`);
  });

  test("a task cut short by a process that died runs again when a worker next starts", async () => {
    // The first worker claims the task and never finishes it: its process is as good as dead.
    const first = await openSqlite();
    const stuck = gate();
    let claimedBy = "";
    await first.start({
      deliver: async (_payload, context) => {
        claimedBy = `first, attempt ${context.attempt}`;
        await stuck.opened;
      },
    });
    await addTasks(first, [{ task: "deliver", payload: { message: "m1" } }]);
    first.wake();
    await poll(
      () => claimedBy,
      (by) => by !== "",
      { what: "the first worker to claim the task" },
    );

    // A new process opens the same file (its own connection) and starts its worker.
    const file = fx.store.groupCommit?.raw.name;
    assert.ok(file);
    const restarted = await openStore({ dataDir: path.dirname(file), sqliteFile: path.basename(file) });
    try {
      const second = new SqliteQueue(restarted.db, { clock, logger: silentLogger, concurrency: 2 });
      const ran: string[] = [];
      await second.start({
        deliver: async (payload, context) => void ran.push(`${payload.message}, attempt ${context.attempt}`),
      });
      await second.idle();
      assert.equal(claimedBy, "first, attempt 1");
      assert.deepEqual(ran, ["m1, attempt 2"], "the dead worker's task ran again, counted as a new attempt");
      assert.equal(await fx.count(), 0);
      await second.stop();
    } finally {
      stuck.open();
      await first.stop();
      await restarted.close();
    }
  });

  test("a task whose last attempt was cut short is given up at the next start, not run again", async () => {
    const first = await openSqlite();
    const stuck = gate();
    let entered = false;
    await first.start({
      once: async () => {
        entered = true;
        await stuck.opened;
      },
    });
    await addTasks(first, [{ task: "once", payload: { job: "j9" }, maxAttempts: 1 }]);
    first.wake();
    await poll(() => entered, Boolean, { what: "the first worker to claim the task" });

    const file = fx.store.groupCommit?.raw.name;
    assert.ok(file);
    const restarted = await openStore({ dataDir: path.dirname(file), sqliteFile: path.basename(file) });
    try {
      const second = new SqliteQueue(restarted.db, { clock, logger: silentLogger, concurrency: 2 });
      let ranAgain = false;
      const failed: { task: FailedTask; error: unknown }[] = [];
      await second.start(
        {
          once: async () => {
            ranAgain = true;
          },
        },
        { onFailed: async (task, error) => void failed.push({ task, error }) },
      );
      await second.idle();
      assert.equal(ranAgain, false);
      assert.equal(failed.length, 1);
      assert.equal(failed[0]?.task.attempts, 1);
      assert.deepEqual(failed[0]?.task.payload, { job: "j9" });
      assert.match(String(failed[0]?.error), /stopped while the task ran its last attempt/);
      assert.equal(await fx.count(), 0);
      await second.stop();
    } finally {
      stuck.open();
      await first.stop();
      await restarted.close();
    }
  });

  test("stop() waits for running tasks only so long; what it leaves runs again at the next start", async () => {
    const queue = await openSqlite({ shutdownTimeoutMs: 400 });
    const stuck = gate();
    let entered = false;
    await queue.start({
      hang: async () => {
        entered = true;
        await stuck.opened;
      },
    });
    await addTasks(queue, [{ task: "hang", payload: {} }]);
    queue.wake();
    await poll(() => entered, Boolean, { what: "the task to start" });
    const began = performance.now();
    await queue.stop();
    const waited = performance.now() - began;
    assert.ok(waited >= 190 && waited < 600, `stop() waited ${waited.toFixed(0)} ms for a 200 ms bound`);
    assert.equal(await fx.count("hang"), 1, "the unfinished task is kept");
    // The abandoned handler ends later: it must not touch the task any more.
    stuck.open();
    await new Promise((resolve) => setImmediate(resolve));

    const next = await openSqlite();
    let ranAgain = 0;
    await next.start({ hang: async () => void ranAgain++ });
    await next.idle();
    assert.equal(ranAgain, 1);
    assert.equal(await fx.count(), 0);
  });
});
