import { EventEmitter, once } from "node:events";
import os from "node:os";
import {
  Logger as GraphileLogger,
  type JobHelpers,
  type LogFunctionFactory,
  type Runner,
  run,
  runMigrations,
  type TaskList,
  type WorkerEvents,
  type WorkerPool,
} from "graphile-worker";
import { type Kysely, sql } from "kysely";
import type { Logger } from "pino";
import { type Clock, systemClock } from "../../clock.ts";
import type { Database } from "../../store/schema.ts";
import { reportGiveUp } from "./give-up.ts";
import {
  checkNewTask,
  DEFAULT_MAX_ATTEMPTS,
  type FailedHandler,
  type JobQueue,
  type NewTask,
  retryDelayMs,
  type StartOptions,
  type TaskHandler,
} from "./port.ts";

/**
 * The job queue on PostgreSQL: graphile-worker 0.17, so any number of API and worker processes
 * share one database. Only graphile-worker's public API is used: its SQL functions (`add_jobs`,
 * `add_job`, `complete_jobs`, `reschedule_jobs`, `force_unlock_workers`), its public `jobs` view,
 * its runner, plugin hooks and events, and `WorkerPool.nudge`.
 *
 * - `add()` calls `add_jobs` (tasks without a key, in one call) and `add_job` (keyed tasks) as SQL
 *   inside OUR Kysely transaction: the job exists exactly when the caller's transaction commits, and
 *   their NOTIFY, delivered at that commit, wakes the listening pools (so `wake()` has nothing to do
 *   here). That NOTIFY has a price: PostgreSQL serialises the commits of notifying transactions, so
 *   it caps how many enqueueing transactions commit per second.
 * - Keys use `job_key_mode => 'unsafe_dedupe'`: while a job with the key exists (waiting, running or
 *   retrying), adding another does nothing. graphile-worker keeps permanently failed jobs (and their
 *   keys); we never leave one: a task's last failure is reported to `onFailed` and then the job
 *   completes, so it is deleted and its key is free, as on SQLite.
 * - `start()` runs graphile-worker's runner with our handlers, its own small pg pool from the same
 *   URL, and no signal handlers of its own (the process's shutdown calls `stop()`). It runs with
 *   graphile-worker's own batching: a local queue (one query fetches and locks a batch of jobs for
 *   the whole pool, and the idle pool polls once per `pollIntervalMs`, not once per worker) and
 *   batched completion and failure (`completeJobBatchDelay`, `failJobBatchDelay`). It restarts the
 *   runner when another schema's migration notice stopped it (see #afterRunnerEnded).
 * - Retries are graphile-worker's: it reschedules a failed job at run_at + e^min(attempts, 10)
 *   seconds, the formula `retryDelayMs` copies for SQLite.
 * - A job whose process died mid-run is handed back by the surviving workers within seconds (see
 *   "Crashed workers" below), not after graphile-worker's four-hour lock timeout. A clean `stop()`
 *   that runs out of time hands its running jobs back at once.
 *
 * Timers. An idle pool looks for jobs that became due by time (a future run_at, a retry) only every
 * `pollIntervalMs`. So that a delay or a digest window ends on time without polling often, the queue
 * keeps timers of its own: at each run_at of the tasks this process added, and, from one look at the
 * `jobs` view when it starts, at the earliest run_at waiting in the table (then the next, and so
 * on), it nudges its pool (`WorkerPool.nudge`), which fetches the jobs now due. Jobs another process
 * added for later are found by the pool's poll, within `pollIntervalMs`; when that process runs a
 * pool too, its own timer has them run on time.
 *
 * Time. graphile-worker decides what is due by comparing run_at with real time (PostgreSQL's
 * `now()`; `useNodeTime` would use Node's `new Date()` instead, still real time, and would make a
 * due-now job wait out any skew between the adding host and the worker's, so we keep the default).
 * A task due now is added with run_at = NULL (add_job uses the transaction's `now()`), so a worker
 * never finds it "in the future". With the system clock, a future `runAt` maps to run_at directly.
 *
 * Under a ManualClock there is no such mapping: `advance()` cannot move PostgreSQL's time. A future
 * `runAt` is then turned into the same delay in real time (so it never runs early), and
 * `runAtFollowsClock` is false. The engine must not rely on the queue for business timers there:
 * it keeps its timers as rows (docs/engine.md, "Delays and digests": timers are rows), arms
 * `clock.at(next due)` in the worker, and when it fires, enqueues the due work with runAt = now (or
 * a "due-check" task that claims the rows now due by the clock). With the system clock it may pass a
 * future runAt straight to the queue. No queue of our own is built on PostgreSQL.
 *
 * Crashed workers. graphile-worker locks a job for the pool that fetched it (jobs.locked_by = the
 * pool's id) and, when a process dies without unlocking (SIGKILL, OOM, power loss), leaves the job
 * locked for four hours. It cannot tell a dead pool from a slow one; it offers the means to act
 * once we can: `force_unlock_workers(lock holders)` (WorkerUtils.forceUnlockWorkers, "only for
 * workers that are no longer running"), the `pool:create` event and the `startWorker` plugin hook,
 * which runs for each worker before its first job. Graphile's paid Worker Pro does this recovery
 * with a heartbeat and a sweep; this is the same design, small, with those parts of the free API:
 *
 * - Registration: each pool has its row in `queue_workers` (migration 0006), named by the pool's
 *   id, which is what its jobs' locked_by says. It is written as the pool is created (graphile-worker's
 *   `pool:create` event, before the pool's first fetch is sent), each worker's `startWorker` waits
 *   for it, and a clean stop deletes it once the pool has stopped.
 * - Heartbeat: every `heartbeatMs` (real time) the process renews its workers' rows (heartbeat_at =
 *   the database's now(), so every host compares on one clock), on a connection of its own: in the
 *   tasks' pool (32 tasks to 10 connections by default) a beat waits behind them, and on a loaded
 *   machine long enough for a live worker to be presumed dead. In the same statement it looks for
 *   rows whose heartbeat is older than `deadAfterMs`. Only when there are some does it sweep: in one
 *   transaction it deletes them and calls force_unlock_workers for their pools (here inside our
 *   transaction, so the rows and the locks go together, and two sweepers never both take one
 *   worker: the delete's row locks decide). The unlocked jobs keep their counted attempt and are
 *   due at once, so any live worker takes them: the engine's tasks are safe to run twice. An idle
 *   process thus costs the database one statement a heartbeat and one fetch a poll.
 * - Trade-off: a live worker that cannot beat for `deadAfterMs` (event loop blocked, network split
 *   from the database) is presumed dead, and its tasks may run a second time while it still runs
 *   them: delivery stays at least once, and an in-app message is unique per job. Hence the default
 *   30 s, far above any pause we expect, and far below four hours.
 * - A job the dead pool held for its last attempt is given up (reported to `onFailed`, then
 *   removed), as SQLite does: unlocked, graphile-worker would keep it as permanently failed, never
 *   run nor reported. So a task that crashes its worker every time stops after its attempts. (A job
 *   the local queue held but had not started counts that attempt too: graphile-worker counts an
 *   attempt when it locks a job.)
 * - A pool that locked jobs before its workers' rows were written (a failed insert, or the first
 *   fetch winning the race with it) is registered by the next heartbeat; only a crash in between
 *   leaves those jobs to the four-hour lock.
 */

export interface GraphileQueueOptions {
  databaseUrl: string;
  /** The PostgreSQL schema graphile-worker lives in (created and migrated by `openGraphileQueue`). */
  schema: string;
  clock: Clock;
  logger: Logger;
  /** How many jobs run at once in this process. */
  concurrency: number;
  /**
   * How often the idle pool looks for jobs that became due by time and that no timer of this
   * process knows of (see "Timers"); jobs due when added are announced by NOTIFY and start at once.
   * Default 2 s.
   */
  pollIntervalMs?: number;
  /** How long (real time) stop() waits for running jobs before handing them back; default 5 s. */
  stopTimeoutMs?: number;
  /** How often (real time) the worker process beats and sweeps for dead workers; default 5 s. */
  heartbeatMs?: number;
  /** How long after its last heartbeat a worker is presumed dead; default 30 s. */
  deadAfterMs?: number;
  /**
   * A connection of the heartbeat's own (registrations, beats, sweeps), which the queue destroys
   * when it stops. Without it they share the pool with the tasks, and under load a beat waits
   * behind them: long enough, and a live worker is presumed dead. Default: the queue's `db`.
   */
  heartbeatDb?: Kysely<Database>;
}

export const DEFAULT_HEARTBEAT_MS = 5_000;
export const DEFAULT_DEAD_AFTER_MS = 30_000;
export const DEFAULT_POLL_INTERVAL_MS = 2_000;
/**
 * graphile-worker's batching: how long a completion or a failure waits for others to be written
 * with it (one statement for the lot). A SIGKILL in that moment hands the job back to run again,
 * which the engine's tasks allow.
 */
const COMPLETE_BATCH_DELAY_MS = 2;
/** How many of the table's next moments one look times (see #nextInTable). */
const TABLE_MOMENTS = 200;

/** How long after its backoff a failed task's pool is nudged: by then graphile-worker has written the retry. */
const RETRY_NUDGE_SLACK_MS = 100;

declare global {
  namespace GraphileConfig {
    interface Plugins {
      TidingsWorkerHeartbeat: true;
    }
  }
}

/** Installs or upgrades graphile-worker's schema (once, whoever else starts now), then opens the queue. */
export async function openGraphileQueue(
  db: Kysely<Database>,
  options: GraphileQueueOptions,
): Promise<GraphileQueue> {
  // graphile-worker notices a concurrent migration only after its first statement, and two
  // processes creating the schema at once can collide: one migrates at a time, the rest wait.
  const migrated = db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(hashtext(${`tidings:queue:${options.schema}`}))`.execute(trx);
    await runMigrations({
      connectionString: options.databaseUrl,
      schema: options.schema,
      maxPoolSize: 1,
      logger: graphileLogger(options.logger),
    });
    return schemaRevision(trx, options.schema);
  });
  const revision = await migrated.catch(async (err: unknown) => {
    await options.heartbeatDb?.destroy();
    throw err;
  });
  return new GraphileQueue(db, options, revision);
}

/** The last graphile-worker migration applied to the schema. */
async function schemaRevision(db: Kysely<Database>, schema: string): Promise<number> {
  const { rows } = await sql<{ revision: number | null }>`
    select max(id) as revision from ${sql.id(schema, "migrations")}`.execute(db);
  return Number(rows[0]?.revision ?? 0);
}

export class GraphileQueue implements JobQueue {
  readonly runAtFollowsClock: boolean;
  readonly #db: Kysely<Database>;
  /** Where registrations, beats and sweeps run (see GraphileQueueOptions.heartbeatDb). */
  readonly #beatDb: Kysely<Database>;
  readonly #options: GraphileQueueOptions;
  readonly #logger: Logger;
  /** The schema's migration revision when this queue opened (see #afterRunnerEnded). */
  readonly #revision: number;
  #taskList: TaskList = {};
  /** Set while the end of a runner is looked into (see #afterRunnerEnded). */
  #recovering: Promise<void> | undefined;
  #onFailed: FailedHandler | undefined;
  #runner: Runner | undefined;
  /** The current runner's pool: what a timer nudges. */
  #pool: WorkerPool | undefined;
  /** Settles once the current runner's end has been handled. */
  #runnerEnded: Promise<void> = Promise.resolve();
  /** The pools whose jobs are running one of our tasks now (what locked_by says), by job id. */
  readonly #running = new Map<string, string>();
  #started = false;
  #stopped = false;
  /** This process's pools, by id: the rows its heartbeat renews. */
  readonly #workers = new Set<string>();
  /** Each pool's registration (its row's first write), awaited before its workers' first jobs. */
  readonly #registering = new Map<string, Promise<void>>();
  /** Who runs them, as the rows and the logs say: host:pid. */
  readonly #owner = `${os.hostname()}:${process.pid}`;
  #beatTimer: NodeJS.Timeout | undefined;
  #beating: Promise<void> | undefined;
  #beatStopped = false;
  /** The last of this process's writes to queue_workers (see #inTurn). */
  #writes: Promise<unknown> = Promise.resolve();
  /** When tasks fall due (real epoch ms), earliest first; see "Timers" above. */
  readonly #due = new MinHeap();
  /** Due moments learnt from the table rather than from add(): after each, the table is asked for the next. */
  readonly #dueInTable = new Set<number>();
  /** The one timer set, for the earliest due moment. */
  #wake: { at: number; timer: NodeJS.Timeout } | undefined;

  constructor(db: Kysely<Database>, options: GraphileQueueOptions, revision: number) {
    this.#db = db;
    this.#beatDb = options.heartbeatDb ?? db;
    this.#revision = revision;
    this.#options = options;
    this.#logger = options.logger;
    this.runAtFollowsClock = options.clock === systemClock;
  }

  async add(db: Kysely<Database>, tasks: NewTask[]): Promise<void> {
    if (tasks.length === 0) return;
    for (const task of tasks) checkNewTask(task);
    const now = this.#options.clock.now();
    const specs = tasks.map((task) => ({
      identifier: task.task,
      payload: task.payload,
      run_at: task.runAt !== undefined && task.runAt > now ? this.#realRunAt(task.runAt, now) : null,
      max_attempts: task.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
      job_key: task.key ?? null,
    }));
    // Sent as text: a parameter the server types as json would be encoded by the driver again.
    const rows = (list: typeof specs) => sql`
      json_to_recordset(${JSON.stringify(list)}::text::json)
        as s(identifier text, payload json, run_at timestamptz, max_attempts smallint, job_key text)`;
    const schema = this.#options.schema;
    // Tasks without a key: one add_jobs call for the lot (add_job costs a function call each).
    const plain = specs.filter((spec) => spec.job_key === null);
    if (plain.length > 0) {
      await sql`
        select count(*) from ${sql.id(schema, "add_jobs")}(array(
          select row(s.identifier, s.payload, null, s.run_at, s.max_attempts, null, null, null)::${sql.id(schema, "job_spec")}
          from ${rows(plain)}
        ))`.execute(db);
    }
    // Keyed tasks: add_job, the one entry point with 'unsafe_dedupe' (add_jobs only replaces).
    const keyed = specs.filter((spec) => spec.job_key !== null);
    if (keyed.length > 0) {
      await sql`
        select count(${sql.id(schema, "add_job")}(
          identifier => s.identifier,
          payload => s.payload,
          run_at => s.run_at,
          max_attempts => s.max_attempts,
          job_key => s.job_key,
          job_key_mode => 'unsafe_dedupe'
        )) from ${rows(keyed)}`.execute(db);
    }
    // Timed once added (a rolled-back task's timer only nudges the pool for nothing).
    for (const spec of specs) if (spec.run_at !== null) this.#dueAt(Date.parse(spec.run_at));
  }

  /** The real instant at which graphile-worker should run a task due at `runAt` by our clock. */
  #realRunAt(runAt: number, now: number): string {
    if (this.#options.clock === systemClock) return new Date(runAt).toISOString();
    // Not business time: graphile-worker runs on real time, so the clock's delay is laid onto it.
    return new Date(Date.now() + (runAt - now)).toISOString();
  }

  wake(): void {
    // add_job's NOTIFY already wakes every listening pool when the transaction commits.
  }

  async start(handlers: Record<string, TaskHandler>, options: StartOptions = {}): Promise<void> {
    if (this.#started) throw new Error("a job queue starts once");
    this.#started = true;
    this.#onFailed = options.onFailed;
    const entries = Object.entries(handlers);
    if (entries.length === 0) {
      // graphile-worker would log "No tasks found" at every poll: take no jobs at all instead.
      this.#logger.info("job queue: no task handlers registered, so this worker takes no tasks");
      return;
    }
    for (const [name, handler] of entries) {
      this.#taskList[name] = (payload, helpers) => this.#run(name, handler, payload, helpers);
    }
    await this.#startRunner();
    this.#beat();
    // Jobs that fall due while no process of ours was there to time them (overdue ones the pool's
    // first fetch has taken already).
    void this.#nextInTable();
  }

  /** The graphile-worker plugin that holds each worker's first job until its pool's row is written. */
  #heartbeatPlugin(): GraphileConfig.Plugin {
    return {
      name: "TidingsWorkerHeartbeat",
      version: "1.0.0",
      description: "registers each pool in queue_workers, for the sweep that unlocks dead pools' jobs",
      worker: {
        hooks: {
          startWorker: async (_context, event) => {
            await this.#registering.get(event.worker.workerPool.id);
          },
        },
      },
    };
  }

  /** Writes a pool's row; called as graphile-worker creates the pool (see "Registration"). */
  #register(poolId: string): void {
    const registered = this.#inTurn(() => {
      this.#workers.add(poolId);
      return this.#renew([poolId]);
    }).catch((err: unknown) => {
      // The pool goes on; the next beat registers it.
      this.#logger.warn({ err }, "job queue: could not register a worker; the next heartbeat will");
    });
    this.#registering.set(poolId, registered);
  }

  /** Deletes a pool's row once the pool has stopped: it holds no job any more. */
  async #deregister(poolId: string): Promise<void> {
    this.#registering.delete(poolId);
    try {
      await this.#inTurn(async () => {
        this.#workers.delete(poolId);
        await this.#beatDb.deleteFrom("queue_workers").where("worker_id", "=", poolId).execute();
      });
    } catch (err) {
      // A stale row is swept later; unlocking a stopped pool's (no) jobs does nothing.
      this.#logger.debug({ err }, "job queue: could not deregister a stopped worker");
    }
  }

  /**
   * Runs this process's writes to queue_workers one after another, each reading #workers when its
   * turn comes: a heartbeat that read a worker's id before the worker stopped could otherwise
   * write its row back after the deregistration deleted it (a stale row, later "presumed dead").
   */
  #inTurn<T>(write: () => Promise<T>): Promise<T> {
    const turn = this.#writes.then(write, write);
    this.#writes = turn.catch(() => {});
    return turn;
  }

  /** Inserts or renews these workers' rows, heartbeat_at = the database's now(). */
  async #renew(rowIds: readonly string[]): Promise<void> {
    if (rowIds.length === 0) return;
    await this.#beatDb
      .insertInto("queue_workers")
      .values(rowIds.map((worker_id) => ({ worker_id, owner: this.#owner })))
      .onConflict((oc) => oc.column("worker_id").doUpdateSet({ heartbeat_at: sql`now()` }))
      .execute();
  }

  /** Beats now, then every heartbeatMs (after the previous beat ended) until stop() ends. */
  #beat(): void {
    const every = this.#options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS;
    this.#beating = this.#heartbeat().finally(() => {
      this.#beating = undefined;
      if (this.#beatStopped) return;
      this.#beatTimer = setTimeout(() => this.#beat(), every);
      this.#beatTimer.unref();
    });
  }

  /**
   * One beat, one statement: renews our workers' rows and counts the others' stale ones; only when
   * there are some, sweeps them (hands back the jobs of workers that stopped beating).
   */
  async #heartbeat(): Promise<void> {
    const deadAfterMs = this.#options.deadAfterMs ?? DEFAULT_DEAD_AFTER_MS;
    try {
      const { ours, stale } = await this.#inTurn(async () => {
        const ids = [...this.#workers];
        // Pool ids are graphile-worker's "pool-<hex>": safe inside an array literal.
        const list = `{${ids.join(",")}}`;
        const { rows } = await sql<{ stale: number }>`
          with renewed as (
            insert into queue_workers (worker_id, owner)
            select id, ${this.#owner} from unnest(${list}::text[]) as id
            on conflict (worker_id) do update set heartbeat_at = now()
          )
          select count(*)::int as stale from queue_workers
          where heartbeat_at < now() - make_interval(secs => ${deadAfterMs / 1000})
            and worker_id <> all(${list}::text[])`.execute(this.#beatDb);
        return { ours: ids, stale: Number(rows[0]?.stale ?? 0) };
      });
      if (stale > 0) await this.#sweep(ours);
    } catch (err) {
      this.#logger.warn({ err }, "job queue: heartbeat failed; trying again at the next one");
    }
  }

  /**
   * Deletes the rows of pools whose last heartbeat is older than deadAfterMs and hands their locked
   * jobs back (force_unlock_workers), in one transaction.
   */
  async #sweep(ours: readonly string[]): Promise<void> {
    const deadAfterMs = this.#options.deadAfterMs ?? DEFAULT_DEAD_AFTER_MS;
    const schema = this.#options.schema;
    const swept = await this.#beatDb.transaction().execute(async (trx) => {
      let stale = trx
        .deleteFrom("queue_workers")
        .where("heartbeat_at", "<", sql<Date>`now() - make_interval(secs => ${deadAfterMs / 1000})`);
      if (ours.length > 0) stale = stale.where("worker_id", "not in", ours);
      const dead = await stale.returning(["worker_id", "owner"]).execute();
      if (dead.length === 0) return undefined;
      const ids = `{${dead.map((row) => row.worker_id).join(",")}}`;
      const { rows: held } = await sql<HeldJob>`
        select id::text as id, task_identifier as task, attempts, max_attempts
        from ${sql.id(schema, "jobs")} where locked_by = any(${ids}::text[])`.execute(trx);
      await sql`select ${sql.id(schema, "force_unlock_workers")}(${ids}::text[])`.execute(trx);
      // A job whose last attempt the crash cut short would stay behind as permanently failed, never
      // run nor reported (its engine job stuck in `running`): it is given up now, as on SQLite, and
      // removed (complete_jobs, which hands back the payload the public jobs view leaves out). A
      // task that crashes its worker every time thus stops after its attempts, too. Inside the
      // transaction: if it rolls back, the next sweep does this again (the hook is idempotent: a
      // job already `failed` is left alone).
      const spent = held.filter((job) => job.attempts >= job.max_attempts);
      if (spent.length > 0) {
        const { rows: removed } = await sql<{ id: string; payload: string }>`
          select id::text as id, payload::text as payload
          from ${sql.id(schema, "complete_jobs")}(${`{${spent.map((job) => job.id).join(",")}}`}::bigint[])`.execute(
          trx,
        );
        const payloads = new Map(removed.map((row) => [row.id, row.payload]));
        for (const job of spent) {
          const payload = payloads.get(job.id);
          if (payload === undefined) continue;
          await reportGiveUp(
            this.#logger,
            this.#onFailed,
            {
              taskId: job.id,
              task: job.task,
              payload: JSON.parse(payload) as Record<string, unknown>,
              attempts: job.attempts,
              maxAttempts: job.max_attempts,
            },
            new Error(`the worker died while the task ran its last attempt (${job.max_attempts})`),
          );
        }
      }
      return {
        processes: [...new Set(dead.map((row) => row.owner))],
        workers: dead.length,
        tasks: held.length,
        ...(spent.length > 0 ? { givenUp: spent.length } : {}),
      };
    });
    if (swept) {
      this.#logger.warn(
        { ...swept, deadAfterMs },
        "job queue: workers without a heartbeat are presumed dead; the tasks they held run again",
      );
      // Handed back, they are due now, with no notice of it: this pool takes them at once.
      if (swept.tasks > 0) this.#pool?.nudge(swept.tasks);
    }
  }

  /** Remembers that a task falls due at `at` (real epoch ms), and times the earliest. */
  #dueAt(at: number, inTable = false): void {
    if (this.#stopped || !this.#started) return;
    if (at <= Date.now()) {
      this.#pool?.nudge(1);
      return;
    }
    if (inTable) this.#dueInTable.add(at);
    this.#due.push(at);
    this.#arm();
  }

  /** Sets the one timer for the earliest due moment (unless it is set for it already). */
  #arm(): void {
    const at = this.#due.peek();
    if (at === undefined || this.#stopped || this.#wake?.at === at) return;
    if (this.#wake) clearTimeout(this.#wake.timer);
    // A millisecond late: run_at keeps microseconds, our moments milliseconds.
    const timer = setTimeout(() => this.#fire(timer), Math.max(0, at + 1 - Date.now()));
    timer.unref();
    this.#wake = { at, timer };
  }

  /** The timer went off: nudge the pool for what is due now, and time the next moment. */
  #fire(timer: NodeJS.Timeout): void {
    if (this.#wake?.timer !== timer) return;
    this.#wake = undefined;
    const now = Date.now();
    let due = 0;
    let askTable = false;
    for (let at = this.#due.peek(); at !== undefined && at < now; at = this.#due.peek()) {
      this.#due.pop();
      due++;
      if (this.#dueInTable.delete(at)) askTable = true;
    }
    if (due > 0) this.#pool?.nudge(due);
    if (askTable) void this.#nextInTable();
    this.#arm();
  }

  /**
   * Times the earliest jobs in the table that are not due yet (up to TABLE_MOMENTS of them): one
   * look at graphile-worker's public jobs view when the queue starts, and another when the last
   * moment it found has come. One look per moment made a chain of round trips that fell behind
   * timers set closer together than a round trip under load.
   */
  async #nextInTable(): Promise<void> {
    if (this.#stopped) return;
    try {
      const { rows } = await sql<{ wait_ms: number | string }>`
        select extract(epoch from (run_at - now())) * 1000 as wait_ms
        from ${sql.id(this.#options.schema, "jobs")}
        where locked_at is null and attempts < max_attempts and run_at > now()
        order by run_at
        limit ${TABLE_MOMENTS}`.execute(this.#db);
      const now = Date.now();
      for (const [i, row] of rows.entries())
        this.#dueAt(now + Math.ceil(Number(row.wait_ms)), i === rows.length - 1);
    } catch (err) {
      // The pool's poll still finds the jobs; a stopped store at shutdown lands here too.
      if (!this.#stopped) this.#logger.warn({ err }, "job queue: could not look for jobs coming due");
    }
  }

  /** Starts graphile-worker's runner; resolves once it listens for new jobs (or after 5 s). */
  async #startRunner(): Promise<void> {
    const { concurrency } = this.#options;
    const events = new EventEmitter() as WorkerEvents;
    const listening = once(events, "pool:listen:success", { signal: AbortSignal.timeout(5_000) }).catch(
      () => {
        this.#logger.warn("job queue: graphile-worker does not listen for new jobs yet; it polls meanwhile");
      },
    );
    let poolId: string | undefined;
    // Synchronous, as the pool is created: the row's write is under way before the pool's first
    // fetch is sent (and that fetch waits for graphile-worker's new pool to connect).
    events.on("pool:create", ({ workerPool }) => {
      this.#pool = workerPool;
      poolId = workerPool.id;
      this.#register(poolId);
    });
    const runner = await run(
      {
        connectionString: this.#options.databaseUrl,
        schema: this.#options.schema,
        concurrency,
        // graphile-worker holds a connection only to fetch and to complete jobs (our handlers use
        // the store's pool), so a few serve any concurrency: one for LISTEN and the rest for those.
        // A pool per concurrent job made every PostgreSQL process of the test suite open a dozen
        // connections at start, and parallel suites ran PostgreSQL out of them.
        maxPoolSize: Math.min(concurrency + 1, 5),
        pollInterval: this.#options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS,
        noHandleSignals: true,
        logger: graphileLogger(this.#logger),
        preset: {
          plugins: [this.#heartbeatPlugin()],
          worker: {
            // One fetch locks a batch for the whole pool; as many as run at once, and as many
            // waiting, so a worker that finishes finds its next job at hand.
            localQueue: { size: concurrency * 2 },
            completeJobBatchDelay: COMPLETE_BATCH_DELAY_MS,
            failJobBatchDelay: COMPLETE_BATCH_DELAY_MS,
          },
        },
        taskList: this.#taskList,
        events,
      },
      undefined,
      // No cron items: without this the runner would look for a crontab file in the working directory.
      [],
    );
    this.#runner = runner;
    this.#runnerEnded = runner.promise
      .catch((err: unknown) => {
        this.#logger.error({ err }, "job queue: the graphile-worker runner stopped with an error");
      })
      .finally(() => {
        const unasked = this.#runner === runner;
        if (unasked) {
          this.#runner = undefined;
          this.#pool = undefined;
          // A pool that stopped by itself has let go of its jobs: its row goes.
          if (poolId !== undefined) void this.#deregister(poolId);
        }
        if (!unasked && process.exitCode !== 57) return;
        this.#recovering = this.#afterRunnerEnded(unasked).finally(() => {
          this.#recovering = undefined;
        });
      });
    await listening;
  }

  /**
   * graphile-worker stops every worker pool that hears a "breaking migration" notice, and sets
   * process.exitCode to 57; the notice is database-wide and names no schema, so installing the
   * queue's schema for another Tidings (another test file's schema, another deployment in the
   * database) stops ours too. When our own schema is still at the revision we opened with, the
   * notice was not about us: clear the exit code and, when the runner stopped without being asked,
   * start it again. When the schema moved on, a newer graphile-worker migrated it, and this one
   * rightly stays stopped.
   */
  async #afterRunnerEnded(unasked: boolean): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        const revision = await schemaRevision(this.#db, this.#options.schema);
        if (revision !== this.#revision) {
          this.#logger.error(
            { revision, ours: this.#revision },
            "job queue: a newer graphile-worker migrated the queue's schema; this worker stays stopped",
          );
          return;
        }
        // Not through its API: graphile-worker 0.17 sets exit code 57 on any schema's notice, with no option to keep it from doing so.
        if (process.exitCode === 57) process.exitCode = undefined;
        if (!unasked || this.#stopped) return;
        this.#logger.warn(
          "job queue: graphile-worker stopped on another schema's migration notice; restarting it",
        );
        await this.#startRunner();
        return;
      } catch (err) {
        if (!unasked || this.#stopped) {
          this.#logger.debug({ err }, "job queue: could not check graphile-worker's schema revision");
          return;
        }
        const delay = Math.min(30_000, 500 * 2 ** attempt);
        this.#logger.error({ err, retryInMs: delay }, "job queue: could not restart graphile-worker");
        await new Promise((resolve) => setTimeout(resolve, delay).unref());
      }
    }
  }

  async #run(name: string, handler: TaskHandler, payload: unknown, helpers: JobHelpers): Promise<void> {
    const { job } = helpers;
    const taskId = String(job.id);
    const data = (payload ?? {}) as Record<string, unknown>;
    if (job.locked_by) this.#running.set(taskId, job.locked_by);
    try {
      await handler(data, { taskId, attempt: job.attempts, maxAttempts: job.max_attempts });
    } catch (error) {
      if (job.attempts < job.max_attempts) {
        this.#logger.warn(
          {
            err: error,
            taskId,
            task: name,
            attempt: job.attempts,
            maxAttempts: job.max_attempts,
            retryInMs: retryDelayMs(job.attempts),
          },
          "job queue: task failed; it runs again later",
        );
        if (!this.runAtFollowsClock) this.#retryByClock(taskId, job.attempts);
        else this.#dueAt(Date.now() + retryDelayMs(job.attempts) + RETRY_NUDGE_SLACK_MS);
        throw error;
      }
      await reportGiveUp(
        this.#logger,
        this.#onFailed,
        { taskId, task: name, payload: data, attempts: job.attempts, maxAttempts: job.max_attempts },
        error,
      );
      // Returning normally: graphile-worker deletes the job, which frees its key.
    } finally {
      this.#running.delete(taskId);
    }
  }

  /**
   * Under a clock that is not real time (a test's ManualClock), graphile-worker would retry a failed
   * job after e^attempts seconds of real time, which that clock cannot move: so when the clock
   * reaches the retry's moment, the job is made due now, as SQLite's queue does by itself. (With the
   * system clock graphile-worker's own backoff is the same schedule.)
   */
  #retryByClock(taskId: string, attempts: number): void {
    const due = this.#options.clock.now() + retryDelayMs(attempts);
    // Returned: a ManualClock keeps the promise, so that a test can wait for the retry to be made due.
    this.#options.clock.at(due, () => this.#makeDue(taskId, attempts));
  }

  /**
   * Makes the failed job due now (graphile-worker's reschedule_jobs) and nudges the pool. A job whose
   * failure is not written yet is looked at again: graphile-worker writes a failure after the
   * handler has thrown and tells no one when (its failJob is not awaited and emits no event), so
   * under a ManualClock, whose moments come at once, only its jobs view can say.
   */
  async #makeDue(taskId: string, attempts: number): Promise<void> {
    const schema = this.#options.schema;
    const jobs = sql.id(schema, "jobs");
    for (let tries = 0; !this.#stopped; tries++) {
      try {
        const { rows } = await sql<{ moved: number; locked: boolean }>`
          with due as (
            select id from ${sql.id(schema, "reschedule_jobs")}(
              array(select id from ${jobs} where id = ${taskId}::bigint and attempts = ${attempts} and locked_at is null),
              run_at => now()
            )
          )
          select
            (select count(*)::int from due) as moved,
            exists (
              select 1 from ${jobs} where id = ${taskId}::bigint and attempts = ${attempts} and locked_at is not null
            ) as locked`.execute(this.#db);
        if (rows[0]?.moved) this.#pool?.nudge(1);
        // Looked at again (ManualClock only): graphile-worker signals no written failure, so its jobs view is asked.
        if (!rows[0]?.locked || tries >= 250) return;
      } catch (err) {
        if (!this.#stopped) this.#logger.warn({ err, taskId }, "job queue: could not make a retry due");
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 20).unref());
    }
  }

  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    if (this.#wake) clearTimeout(this.#wake.timer);
    this.#wake = undefined;
    await this.#recovering;
    try {
      await this.#stopRunner();
    } finally {
      // Beating went on while running tasks finished, so that no one presumed this process dead.
      await this.#stopBeating();
      if (this.#beatDb !== this.#db) {
        // The last deregistration, if one is under way, ends first.
        await this.#writes;
        await this.#beatDb.destroy();
      }
    }
  }

  async #stopBeating(): Promise<void> {
    this.#beatStopped = true;
    clearTimeout(this.#beatTimer);
    // A row is left only by a pool still running a task when stop() gave up on it: it goes stale
    // and another process's sweep unlocks its jobs, even if handing them back below failed.
    await this.#beating;
  }

  async #stopRunner(): Promise<void> {
    const runner = this.#runner;
    if (!runner) return;
    const pool = this.#pool;
    this.#runner = undefined;
    this.#pool = undefined;
    const graceful = runner.stop().catch((err: unknown) => {
      this.#logger.error({ err }, "job queue: graphile-worker did not stop cleanly");
    });
    if (await finishesWithin(graceful, this.#options.stopTimeoutMs ?? 5_000)) {
      await this.#runnerEnded;
      await this.#recovering;
      // Stopped cleanly: every job it held is completed or handed back.
      if (pool) await this.#deregister(pool.id);
      return;
    }
    // Hand the running jobs back now (graphile-worker's force_unlock_workers: unlocked, their
    // attempt counted), so another worker takes them at once instead of after the four-hour lock
    // timeout. The runner goes on waiting for the handlers in the background; should one finish
    // after all, graphile-worker completes its job then. (The pool's forcefulShutdown would do
    // the same, but races the graceful shutdown already under way, which ends the pool under it.)
    const holders = [...new Set(this.#running.values())];
    this.#logger.warn(
      { tasks: this.#running.size },
      "job queue: stopped waiting for running tasks; they are handed back to run again",
    );
    if (holders.length === 0) return;
    try {
      await sql`select ${sql.id(this.#options.schema, "force_unlock_workers")}(${`{${holders.join(",")}}`}::text[])`.execute(
        this.#db,
      );
    } catch (err) {
      this.#logger.error(
        { err },
        "job queue: could not hand running tasks back; another worker's sweep will",
      );
    }
  }
}

/** A binary min-heap of numbers: the due moments, earliest first, however many are added. */
class MinHeap {
  readonly #items: number[] = [];

  peek(): number | undefined {
    return this.#items[0];
  }

  push(value: number): void {
    const items = this.#items;
    let i = items.push(value) - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if ((items[parent] as number) <= value) break;
      items[i] = items[parent] as number;
      i = parent;
    }
    items[i] = value;
  }

  pop(): number | undefined {
    const items = this.#items;
    const top = items[0];
    const last = items.pop();
    if (items.length === 0 || last === undefined) return top;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= items.length) break;
      const right = left + 1;
      const child = right < items.length && (items[right] as number) < (items[left] as number) ? right : left;
      if ((items[child] as number) >= last) break;
      items[i] = items[child] as number;
      i = child;
    }
    items[i] = last;
    return top;
  }
}

/** A job a dead worker held, as the sweep reads it. */
interface HeldJob {
  id: string;
  task: string;
  attempts: number;
  max_attempts: number;
}

/** Whether `promise` settles within `ms` of real time. */
async function finishesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const finished = await Promise.race([
    promise.then(() => true),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), ms);
    }),
  ]);
  clearTimeout(timer);
  return finished;
}

/**
 * graphile-worker's log lines, through our logger. Its per-job lines go to debug (we log failures
 * ourselves, with the task's name and attempt); its metadata (which holds the payload) is dropped.
 */
function graphileLogger(logger: Logger): GraphileLogger {
  const factory: LogFunctionFactory = () => (level, message, meta) => {
    const err = meta?.error ?? meta?.fatalError;
    switch (String(level)) {
      case "error":
        if (meta?.failure) logger.debug(message);
        else logger.error(err ? { err } : {}, `graphile-worker: ${message}`);
        return;
      case "warning":
        // Its pool only fetches and completes jobs (our tasks use the store's pool), so fewer
        // connections than tasks is this design, not a misconfiguration: not an operator's warning.
        if (meta !== undefined && "max" in meta && "concurrency" in meta)
          logger.debug(`graphile-worker: ${message}`);
        else logger.warn(err ? { err } : {}, `graphile-worker: ${message}`);
        return;
      case "info":
        logger.debug(`graphile-worker: ${message}`);
        return;
      default:
        logger.trace(`graphile-worker: ${message}`);
    }
  };
  return new GraphileLogger(factory);
}
