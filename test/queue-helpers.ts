import { sql } from "kysely";
import pino, { type Logger } from "pino";
import { type Clock, ManualClock, systemClock } from "../src/clock.ts";
import { type JobQueue, openQueue, workerSchemaFor } from "../src/engine/queue/index.ts";
import { SqliteQueue } from "../src/engine/queue/sqlite-queue.ts";
import type { Store } from "../src/store/store.ts";
import type { Backend } from "./backends.ts";
import { poll } from "./poll.ts";

export const silentLogger = pino({ level: "silent" });

export interface QueueOptions {
  clock?: Clock;
  logger?: Logger;
  concurrency?: number;
  /** stop() waits half of this for running tasks. */
  shutdownTimeoutMs?: number;
  /** PostgreSQL: the crashed-worker recovery's timers (graphile-queue.ts). */
  heartbeatMs?: number;
  deadAfterMs?: number;
  /** PostgreSQL: graphile-worker's poll interval; default 50 ms. */
  pollIntervalMs?: number;
}

export interface QueueFixture {
  readonly store: Store;
  /** SQLite: a ManualClock unless told otherwise; PostgreSQL: the system clock. */
  readonly clock: Clock;
  /** A queue on the fixture's database (stopped by destroy()). */
  open(options?: QueueOptions): Promise<JobQueue>;
  /**
   * Resolves once the work that is due has been done. SQLite: every queue opened here is idle.
   * PostgreSQL: no job is running and none is due (polled; fails after 5 s).
   */
  settled(): Promise<void>;
  /** How many tasks the queue holds (of this name, when given), in any state. */
  count(task?: string): Promise<number>;
  /** Between tests: stops the queues opened so far and empties the queue. */
  reset(): Promise<void>;
  /** PostgreSQL: graphile-worker's schema for this database. */
  readonly workerSchema: string;
  destroy(): Promise<void>;
}

/**
 * A fresh database of the backend, and queues on it. Shared by the tests of a file (a database with
 * graphile-worker's schema takes seconds to build); each test resets it.
 */
export async function queueFixture(backend: Backend, defaults: QueueOptions = {}): Promise<QueueFixture> {
  const { store, destroy: destroyStore } = await backend.open();
  const clock = defaults.clock ?? (backend.name === "sqlite" ? new ManualClock() : systemClock);
  const queues: JobQueue[] = [];
  const workerSchema = workerSchemaFor(store.postgres?.schema);
  const fixture: QueueFixture = {
    store,
    clock,
    workerSchema,
    async open(options = {}) {
      const queue = await openQueue({
        store,
        clock: options.clock ?? clock,
        config: {
          workerConcurrency: options.concurrency ?? defaults.concurrency ?? 4,
          shutdownTimeoutMs: options.shutdownTimeoutMs ?? defaults.shutdownTimeoutMs ?? 10_000,
          workerHeartbeatMs: options.heartbeatMs ?? defaults.heartbeatMs ?? 5_000,
          workerDeadAfterMs: options.deadAfterMs ?? defaults.deadAfterMs ?? 30_000,
        },
        logger: options.logger ?? silentLogger,
        // Tests wait for retries and future tasks in real time on PostgreSQL: poll often.
        pollIntervalMs: options.pollIntervalMs ?? 50,
      });
      queues.push(queue);
      return queue;
    },
    async settled() {
      if (store.backend === "sqlite") {
        for (const queue of queues) if (queue instanceof SqliteQueue) await queue.idle();
        return;
      }
      await pgQueueQuiet(store, workerSchema, 5_000);
    },
    count: (task) => countTasks(store, task),
    async reset() {
      await Promise.allSettled(queues.splice(0).map((queue) => queue.stop()));
      if (store.backend === "sqlite") await sql`delete from queue_tasks`.execute(store.db);
      else {
        // graphile-worker's own way to drop jobs (unlocked ones; every worker is stopped by now).
        await sql`select ${sql.id(workerSchema, "complete_jobs")}(array(select id from ${sql.id(workerSchema, "jobs")}))`.execute(
          store.db,
        );
      }
    },
    async destroy() {
      await Promise.allSettled(queues.map((queue) => queue.stop()));
      await destroyStore();
    },
  };
  // graphile-worker's schema is built when a queue first opens (a second or two): here, not in a test.
  if (store.backend === "postgres") await fixture.open();
  return fixture;
}

/** How many tasks the store's queue holds (of this name, when given), in any state. */
export async function countTasks(store: Store, task?: string): Promise<number> {
  const [table, name] =
    store.backend === "sqlite"
      ? [sql.id("queue_tasks"), sql.ref("task")]
      : [sql.id(workerSchemaFor(store.postgres?.schema), "jobs"), sql.ref("task_identifier")];
  const where = task === undefined ? sql`` : sql`where ${name} = ${task}`;
  const { rows } = await sql<{ n: number }>`select count(*) as n from ${table} ${where}`.execute(store.db);
  return Number(rows[0]?.n);
}

/** A promise opened by hand: what a handler waits on so a test can hold it mid-run. */
export function gate(): { open(): void; opened: Promise<void> } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { open, opened };
}

/**
 * Resolves once the app's queue has done all the work that is due, so that a test can show that
 * nothing (more) happens: move a ManualClock past the moment, drain, then look.
 * SQLite: the in-process worker is idle (a clock's advance() or a wake() has already set it to work,
 * so this waits for what they set off). PostgreSQL: what a ManualClock's timers set off has ended
 * (the tasks they add, the retries they make due: graphile-worker keeps real time, so the engine
 * does these itself), and no task runs and none is due; again, should a task have set off more.
 */
export async function drain(ctx: { app: { queue: JobQueue }; store: Store; clock: Clock }): Promise<void> {
  const { queue } = ctx.app;
  if (queue instanceof SqliteQueue) return queue.idle();
  const clock = ctx.clock instanceof ManualClock ? ctx.clock : undefined;
  const workerSchema = workerSchemaFor(ctx.store.postgres?.schema);
  for (;;) {
    const started = await clock?.settled();
    await pgQueueQuiet(ctx.store, workerSchema);
    if (clock === undefined || clock.started === started) return;
  }
}

/** Polls graphile-worker's table until no job is locked (running) and none is due. */
async function pgQueueQuiet(store: Store, workerSchema: string, limitMs?: number): Promise<void> {
  await poll(
    async () => {
      const { rows } = await sql<{ n: number }>`
        select count(*)::int as n from ${sql.id(workerSchema, "jobs")}
        where locked_at is not null or (run_at <= now() and attempts < max_attempts)`.execute(store.db);
      return rows[0]?.n;
    },
    (n) => n === 0,
    { what: "no task running or due", ...(limitMs !== undefined ? { limitMs } : {}) },
  );
}
