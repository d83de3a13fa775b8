// The PostgreSQL queue (graphile-worker): retries and give-up, due times in real time, several
// workers sharing one database, and a stop that runs out of time.
import assert from "node:assert/strict";
import { after, afterEach, before, describe, test } from "node:test";
import { sql } from "kysely";
import pino from "pino";
import { backends, postgresSkipped } from "../../../test/backends.ts";
import { poll } from "../../../test/poll.ts";
import { gate, type QueueFixture, queueFixture } from "../../../test/queue-helpers.ts";
import { ManualClock } from "../../clock.ts";
import type { FailedTask, JobQueue, NewTask } from "./port.ts";

const postgres = backends.find((b) => b.name === "postgres");

describe("PostgreSQL job queue (graphile-worker)", { skip: postgres ? false : postgresSkipped }, () => {
  let fx: QueueFixture;
  before(async () => {
    if (postgres) fx = await queueFixture(postgres);
  });
  afterEach(() => fx?.reset());
  after(() => fx?.destroy());

  const add = (queue: JobQueue, tasks: NewTask[]) =>
    fx.store.db.transaction().execute((trx) => queue.add(trx, tasks));

  interface JobRow {
    id: string;
    attempts: number;
    max_attempts: number;
    locked_at: Date | null;
    last_error: string | null;
    /** Seconds from now until run_at, by the database's clock. */
    due_in: number;
  }
  const jobs = async (task: string) =>
    (
      await sql<JobRow>`
        select id, attempts, max_attempts, locked_at, last_error,
          extract(epoch from run_at - now())::float8 as due_in
        from ${sql.id(fx.workerSchema, "jobs")} where task_identifier = ${task}`.execute(fx.store.db)
    ).rows;

  /** What moving time on is for graphile-worker: its own reschedule_jobs, to now. */
  const makeDueNow = (ids: string[]) =>
    sql`select ${sql.id(fx.workerSchema, "reschedule_jobs")}(${`{${ids.join(",")}}`}::bigint[], run_at => now())`.execute(
      fx.store.db,
    );

  test("a failing task is retried after graphile-worker's backoff (first within 5 s), then given up, reported and removed", async () => {
    const queue = await fx.open();
    const attempts: number[] = [];
    const failed: { task: FailedTask; error: unknown }[] = [];
    await queue.start(
      {
        flaky: async (_payload, context) => {
          attempts.push(context.attempt);
          throw new Error(`attempt ${context.attempt} failed`);
        },
      },
      { onFailed: async (task, error) => void failed.push({ task, error }) },
    );
    await add(queue, [{ task: "flaky", payload: { job: "j1" }, maxAttempts: 3 }]);

    for (const attempt of [1, 2]) {
      const [row] = await poll(
        () => jobs("flaky"),
        ([job]) => job?.attempts === attempt && job.locked_at === null,
        { what: `attempt ${attempt} to fail and be rescheduled` },
      );
      assert.equal(row?.last_error, `attempt ${attempt} failed`);
      // e^attempt seconds: 2.7 s after the first failure, 7.4 s after the second, counted from the
      // failure (the clock's moment), read here a little later; half a second either way is the
      // reading's slack on a loaded machine, not the backoff's.
      const expected = Math.exp(attempt);
      assert.ok(
        row && row.due_in > expected - 1 && row.due_in <= expected + 0.5,
        `retry ${attempt} due in ${row?.due_in} s, expected about ${expected.toFixed(1)} s`,
      );
      assert.equal(attempts.length, attempt, "retried before its time");
      await makeDueNow([row?.id ?? ""]);
    }
    await poll(
      () => failed.length,
      (n) => n > 0,
      { what: "the task to be given up" },
    );
    await fx.settled();
    assert.deepEqual(attempts, [1, 2, 3]);
    assert.equal(failed.length, 1);
    assert.deepEqual(
      { ...failed[0]?.task, taskId: "" },
      {
        taskId: "",
        task: "flaky",
        payload: { job: "j1" },
        attempts: 3,
        maxAttempts: 3,
      },
    );
    assert.match(String(failed[0]?.error), /attempt 3 failed/);
    assert.equal(await fx.count("flaky"), 0, "graphile-worker keeps no permanently failed job of ours");
  });

  test("a task due later does not run early and starts soon after its time (real time: 400 ms)", async () => {
    const queue = await fx.open();
    let startedAt = 0;
    await queue.start({
      remind: async () => {
        startedAt = Date.now();
      },
    });
    const due = Date.now() + 400;
    await add(queue, [{ task: "remind", payload: {}, runAt: due }]);
    await poll(
      () => startedAt,
      (at) => at > 0,
      { what: "the task to run", limitMs: 3_000 },
    );
    // Not early: the database's clock decides; on one host it agrees with Node's to well under 5 ms.
    assert.ok(startedAt >= due - 5, `started ${due - startedAt} ms early`);
    // With a 50 ms poll it is rarely 100 ms late. The bound is loose because another test file
    // installing its worker schema now makes graphile-worker stop and restart ours (see
    // graphile-queue.ts), which has cost up to half a second.
    assert.ok(startedAt - due < 1_000, `started ${startedAt - due} ms late`);
  });

  test("under a ManualClock, a future task's delay is laid onto real time, and advancing the clock does not run it", async () => {
    const clock = new ManualClock();
    const queue = await fx.open({ clock });
    assert.equal(queue.runAtFollowsClock, false);
    let ran = false;
    await queue.start({
      timer: async () => {
        ran = true;
      },
    });
    await add(queue, [{ task: "timer", payload: {}, runAt: clock.now() + 60_000 }]);
    clock.advance(120_000);
    assert.equal(ran, false);
    // Still a minute away in real time, which decides for graphile-worker: nothing can take it
    // before then, and nothing has (no attempt counted, not locked).
    const [row] = await jobs("timer");
    assert.ok(row && row.due_in > 59 && row.due_in <= 60, `due in ${row?.due_in} s of real time`);
    assert.equal(row.attempts, 0);
    assert.equal(row.locked_at, null);
  });

  test("many tasks on graphile-worker's few connections start without a warning (its pool only fetches and completes)", async () => {
    const lines: string[] = [];
    const logger = pino({ level: "warn" }, { write: (line: string) => void lines.push(line) });
    const queue = await fx.open({ logger, concurrency: 32 });
    await queue.start({ later: async () => {} });
    await queue.stop();
    assert.deepEqual(lines, []);
  });

  test("another schema's migration notice stops graphile-worker; ours starts again and keeps the exit code clean", async () => {
    const lines: string[] = [];
    const logger = pino({ level: "warn" }, { write: (line: string) => void lines.push(line) });
    const queue = await fx.open({ logger });
    const ran: unknown[] = [];
    // start() resolves as graphile-worker sends its LISTEN, not once the server has run it. Its
    // connections are named (node-postgres reads PGAPPNAME when it opens one) so that the test can
    // see when the server has: a notice sent before then would reach no one.
    const listener = `tidings-test-${process.pid}-${Date.now()}`;
    const appName = process.env.PGAPPNAME;
    process.env.PGAPPNAME = listener;
    try {
      await queue.start({ later: async (payload) => void ran.push(payload.n) });
    } finally {
      if (appName === undefined) delete process.env.PGAPPNAME;
      else process.env.PGAPPNAME = appName;
    }
    await poll(
      async () =>
        (
          await sql<{ n: number }>`
            select count(*)::int as n from pg_stat_activity
            where application_name = ${listener} and state = 'idle' and query like 'LISTEN %'`.execute(
            fx.store.db,
          )
        ).rows[0]?.n,
      (n) => n === 1,
      { what: "graphile-worker to listen" },
    );
    // What graphile-worker sends when it installs a schema, any schema of the database.
    await sql`select pg_notify('worker:migrate', ${JSON.stringify({ migrationNumber: 11, breaking: true })})`.execute(
      fx.store.db,
    );
    await poll(() => lines.some((line) => line.includes("restarting it")), Boolean, {
      what: "the worker to restart",
    });
    assert.notEqual(
      process.exitCode,
      57,
      "graphile-worker's exit code for a breaking migration was left set",
    );
    await add(queue, [{ task: "later", payload: { n: 1 } }]);
    await poll(
      () => ran.length,
      (n) => n === 1,
      { what: "a task added after the restart to run" },
    );
    await fx.settled();
    assert.deepEqual(ran, [1]);
  });

  test("two workers with pools of their own run 1,000 tasks, none twice", async () => {
    const first = await fx.open({ concurrency: 8 });
    const second = await fx.open({ concurrency: 8 });
    const runs = new Map<number, number>();
    const byWorker = [0, 0];
    const handler = (worker: 0 | 1) => async (payload: Record<string, unknown>) => {
      const n = payload.n as number;
      runs.set(n, (runs.get(n) ?? 0) + 1);
      byWorker[worker] = (byWorker[worker] ?? 0) + 1;
    };
    await first.start({ fan: handler(0) });
    await second.start({ fan: handler(1) });
    await add(
      first,
      Array.from({ length: 1000 }, (_, n) => ({ task: "fan", payload: { n } })),
    );
    await poll(
      () => runs.size,
      (n) => n === 1000,
      { what: "every task to run", limitMs: 10_000 },
    );
    await fx.settled();
    const twice = [...runs].filter(([, count]) => count !== 1);
    assert.deepEqual(twice, [], "tasks run more than once");
    assert.equal(runs.size, 1000);
    assert.ok((byWorker[0] ?? 0) > 0 && (byWorker[1] ?? 0) > 0, `work split ${byWorker.join("/")}`);
    assert.equal(await fx.count("fan"), 0);
  });

  test("a task locked by a worker whose heartbeat went stale (its process died) runs again; a live worker's stays locked", async (t) => {
    // Leave nothing locked for the next test, pass or fail: the "live" worker below is ours to end.
    t.after(async () => {
      await sql`select ${sql.id(fx.workerSchema, "force_unlock_workers")}('{worker-alive0000000}'::text[])`.execute(
        fx.store.db,
      );
      await sql`select ${sql.id(fx.workerSchema, "complete_jobs")}(array(
        select id from ${sql.id(fx.workerSchema, "jobs")} where task_identifier = 'busy'))`.execute(
        fx.store.db,
      );
      await sql`delete from queue_workers`.execute(fx.store.db);
    });
    const lines: string[] = [];
    const logger = pino({ level: "warn" }, { write: (line: string) => void lines.push(line) });
    // What a SIGKILL leaves: a job locked by a worker nobody runs, its heartbeat row going stale.
    // (Simulated in graphile-worker's own table: a test cannot kill its own process.)
    const lockAs = async (task: string, workerId: string, attempts = 1) => {
      const setup = await fx.open();
      await add(setup, [{ task, payload: { n: task }, maxAttempts: 2 }]);
      await sql`update ${sql.id(fx.workerSchema, "_private_jobs")} set locked_by = ${workerId},
        locked_at = now(), attempts = ${attempts}
        where task_id = (select id from ${sql.id(fx.workerSchema, "_private_tasks")}
          where identifier = ${task})`.execute(fx.store.db);
    };
    const beat = (workerId: string, ago: string) =>
      sql`insert into queue_workers (worker_id, owner, heartbeat_at)
        values (${workerId}, 'elsewhere:1', now() - ${ago}::interval)`.execute(fx.store.db);
    await beat("worker-dead00000000", "10 seconds");
    await lockAs("orphan", "worker-dead00000000");
    // Its last attempt (2 of 2) was under way: given up, not run again.
    await lockAs("spent", "worker-dead00000000", 2);
    // Another process's worker, alive: its heartbeat is fresh for the whole test.
    await beat("worker-alive0000000", "-1 hour");
    await lockAs("busy", "worker-alive0000000");

    const queue = await fx.open({ concurrency: 3, heartbeatMs: 100, deadAfterMs: 1_000, logger });
    const ran: string[] = [];
    const failed: FailedTask[] = [];
    const began = Date.now();
    await queue.start(
      {
        orphan: async () => void ran.push("orphan"),
        spent: async () => void ran.push("spent"),
        busy: async () => void ran.push("busy"),
      },
      { onFailed: async (task) => void failed.push(task) },
    );
    await poll(
      () => ran,
      (r) => r.includes("orphan"),
      { what: "the dead worker's task to run again", limitMs: 3_000 },
    );
    const tookMs = Date.now() - began;
    await poll(
      () => jobs("orphan"),
      (rows) => rows.length === 0,
      { what: "the handed-back task to complete" },
    );
    const [busy] = await jobs("busy");
    assert.ok(busy?.locked_at, "a live worker's task is not touched");
    assert.deepEqual(ran, ["orphan"]);
    assert.deepEqual(
      failed.map(({ task, payload, attempts, maxAttempts }) => ({ task, payload, attempts, maxAttempts })),
      [{ task: "spent", payload: { n: "spent" }, attempts: 2, maxAttempts: 2 }],
      "the task cut short on its last attempt is given up, not run",
    );
    assert.deepEqual(await jobs("spent"), [], "and removed");
    const swept = lines.map((line) => JSON.parse(line)).find((line) => line.msg.includes("presumed dead"));
    assert.deepEqual(
      { processes: swept?.processes, workers: swept?.workers, tasks: swept?.tasks, givenUp: swept?.givenUp },
      { processes: ["elsewhere:1"], workers: 1, tasks: 2, givenUp: 1 },
    );

    // This queue registered, beating: one row for its pool of three workers (graphile-worker 0.17
    // locks jobs by pool, so the pool's id is what its row must name); a clean stop removes it.
    const rows = async () =>
      (
        await sql<{ worker_id: string; age: number }>`
          select worker_id, extract(epoch from now() - heartbeat_at)::float8 as age from queue_workers
          where worker_id not like 'worker-alive%'`.execute(fx.store.db)
      ).rows;
    const registered = await rows();
    assert.deepEqual(
      registered.map((row) => row.worker_id.startsWith("pool-")),
      [true],
      "one row, the pool's",
    );
    assert.ok(
      registered.every((row) => row.age < 1),
      `heartbeats fresh: ${registered.map((r) => r.age)}`,
    );
    await queue.stop();
    assert.deepEqual(await rows(), [], "a clean stop deregisters its workers");
    console.log(`a dead worker's task ran again ${tookMs} ms after a live worker started`);
  });

  test("a task running longer than deadAfterMs stays with its live worker: its heartbeat keeps it", async () => {
    const timers = { heartbeatMs: 100, deadAfterMs: 400 };
    const first = await fx.open(timers);
    const second = await fx.open(timers);
    const slow = gate();
    const runs: string[] = [];
    await first.start({
      slow: async () => {
        runs.push("first");
        await slow.opened;
      },
    });
    await add(first, [{ task: "slow", payload: {} }]);
    await poll(
      () => runs.length,
      (n) => n === 1,
      { what: "the first worker to take the task" },
    );
    await second.start({ slow: async () => void runs.push("second") });
    // The task runs for four times deadAfterMs, with the second worker sweeping all along: the long
    // run is the condition under test (the outcome is read from the runs afterwards), not a wait.
    await new Promise((resolve) => setTimeout(resolve, 1_600));
    slow.open();
    await fx.settled();
    assert.deepEqual(runs, ["first"], "the task ran once, on its own worker");
  });

  test("a worker whose tasks hold every connection of the store's pool still beats: its heartbeat has a connection of its own", async (t) => {
    // The size of the fixture store's pool (test/backends.ts).
    const poolSize = 10;
    const queue = await fx.open({ concurrency: poolSize + 2, heartbeatMs: 100, deadAfterMs: 1_000 });
    const release = gate();
    let holding = 0;
    // Each task keeps a transaction of the store's pool open until released: ten hold the whole
    // pool, and the last two wait for a connection, as a beat sharing the pool would.
    await queue.start({
      hold: async () => {
        await fx.store.db.transaction().execute(async (trx) => {
          await sql`select 1`.execute(trx);
          holding++;
          await release.opened;
        });
      },
    });
    const side = fx.store.postgres?.openConnection();
    assert.ok(side);
    t.after(() => side.destroy());
    // Released however the test ends: the queue's stop after it waits for these tasks.
    let renewed: number;
    let before: number;
    try {
      await add(
        queue,
        Array.from({ length: poolSize + 2 }, () => ({ task: "hold", payload: {} })),
      );
      await poll(
        () => holding,
        (n) => n === poolSize,
        { what: "the tasks to hold every connection of the pool" },
      );
      // Read on a connection of the test's own: the store's pool has none free.
      const lastBeat = async () => {
        const { rows } = await sql<{ at: Date | null }>`
          select max(heartbeat_at) as at from queue_workers
          where owner like ${`%:${process.pid}`}`.execute(side);
        return rows[0]?.at?.getTime() ?? 0;
      };
      before = await lastBeat();
      assert.ok(before > 0, "the queue's pool is registered");
      renewed = await poll(lastBeat, (at) => at >= before + 300, {
        what: "the heartbeat to be renewed while the pool is held",
        limitMs: 3_000,
      });
      assert.equal(holding, poolSize, "and the pool is still held");
    } finally {
      release.open();
    }
    await fx.settled();
    assert.equal(holding, poolSize + 2, "every task ran once");
    console.log(`the heartbeat moved ${renewed - before} ms on while the store's pool was held`);
  });

  test("stop() waits only so long, then hands the running task back to run again", async () => {
    const queue = await fx.open({ shutdownTimeoutMs: 400 });
    const stuck = gate();
    let entered = false;
    await queue.start({
      hang: async () => {
        entered = true;
        await stuck.opened;
      },
    });
    await add(queue, [{ task: "hang", payload: {} }]);
    await poll(() => entered, Boolean, { what: "the task to start" });
    const began = performance.now();
    await queue.stop();
    const waited = performance.now() - began;
    assert.ok(waited >= 190 && waited < 900, `stop() took ${waited.toFixed(0)} ms for a 200 ms bound`);
    const [row] = await jobs("hang");
    assert.ok(row, "the unfinished task is kept");
    assert.equal(row.locked_at, null, "and no longer locked: another worker may take it");
    assert.equal(row.attempts, 1);

    // Due at once: the next worker takes it without waiting for graphile-worker's lock timeout.
    const next = await fx.open();
    let ranAgain = 0;
    await next.start({ hang: async () => void ranAgain++ });
    await poll(
      () => ranAgain,
      (n) => n === 1,
      { what: "the handed-back task to run again" },
    );
    await fx.settled();
    // The abandoned handler ends at last; that changes nothing.
    stuck.open();
    assert.equal(await fx.count("hang"), 0);
  });
});
