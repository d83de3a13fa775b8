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
 * The job queue on PostgreSQL: graphile-worker 0.16, so any number of API and worker processes
 * share one database.
 *
 * - `add()` calls graphile-worker's `add_jobs` (tasks without a key, in one call) and `add_job` (keyed
 *   tasks) as SQL inside OUR Kysely transaction: the job exists exactly when the caller's transaction
 *   commits, and their NOTIFY, delivered at that commit, wakes the listening workers (so `wake()`
 *   has nothing to do here). That NOTIFY has a price: PostgreSQL serialises the commits of
 *   notifying transactions, so it caps how many enqueueing transactions commit per second.
 * - Keys use `job_key_mode => 'unsafe_dedupe'`: while a job with the key exists (waiting, running or
 *   retrying), adding another does nothing. graphile-worker keeps permanently failed jobs (and their
 *   keys); we never leave one: a task's last failure is reported to `onFailed` and then the job
 *   completes, so it is deleted and its key is free, as on SQLite.
 * - `start()` runs graphile-worker's runner with our handlers, its own small pg pool from the same
 *   URL, and no signal handlers of its own (the process's shutdown calls `stop()`). It restarts the
 *   runner when another schema's migration notice stopped it (see #afterRunnerEnded).
 * - Retries are graphile-worker's: it reschedules a failed job at run_at + e^min(attempts, 10)
 *   seconds, the formula `retryDelayMs` copies for SQLite.
 * - A job whose process died mid-run is handed back by the surviving workers within seconds (see
 *   "Crashed workers" below), not after graphile-worker's four-hour lock timeout. A clean `stop()`
 *   that runs out of time hands its running jobs back at once.
 *
 * Timers. An idle graphile-worker looks for jobs that became due by time only every `pollInterval`.
 * So that a delay or a digest window ends on time without polling often, the queue keeps one timer
 * of its own: at the earliest run_at it knows of (tasks it added, and at start the earliest in the
 * table), it sends graphile-worker's own `jobs:insert` notice, which wakes the idle workers of every
 * process at once, and sets the timer for the next run_at in the table. A worker also looks at the
 * table every `scanIntervalMs` (1 s), so that when the process that added a job dies before it is
 * due, the others' timers are set for it all the same.
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
 * Crashed workers. graphile-worker locks a job for the worker that runs it (jobs.locked_by = the
 * worker's id) and, when a process dies without unlocking (SIGKILL, OOM, power loss), leaves the job
 * locked for four hours. It cannot tell a dead worker from a slow one; it offers the means to act
 * once we can: `force_unlock_workers(worker ids)` (WorkerUtils.forceUnlockWorkers, "only for workers
 * that are no longer running"), and the `startWorker`/`stopWorker` plugin hooks, which run for each
 * worker before its first job and after its last. Graphile's paid Worker Pro does this recovery with
 * a heartbeat and a sweep; this is the same design, small, with those two parts of the free API:
 *
 * - Registration: `startWorker` inserts the worker's id into `queue_workers` (migration 0006) before
 *   the worker can lock any job, and `stopWorker` deletes it once the worker has stopped cleanly.
 * - Heartbeat: every `heartbeatMs` (real time) the process renews its workers' rows (heartbeat_at =
 *   the database's now(), so every host compares on one clock) and, in the same beat, sweeps: in one
 *   transaction it deletes the rows whose heartbeat is older than `deadAfterMs` and calls
 *   force_unlock_workers for their ids (the SQL function WorkerUtils.forceUnlockWorkers calls, here
 *   inside our transaction, so the rows and the locks go together, and two sweepers never both take
 *   one worker: the delete's row locks decide). The unlocked jobs keep their counted attempt and are
 *   due at once, so any live worker takes them: the engine's tasks are safe to run twice.
 * - Trade-off: a live worker that cannot beat for `deadAfterMs` (event loop blocked, network split
 *   from the database) is presumed dead, and its tasks may run a second time while it still runs
 *   them: delivery stays at least once, and an in-app message is unique per job. Hence the default
 *   30 s, far above any pause we expect, and far below four hours.
 * - A job the dead worker was running for its last attempt is given up (reported to `onFailed`, then
 *   removed), as SQLite does: unlocked, graphile-worker would keep it as permanently failed, never
 *   run nor reported. So a task that crashes its worker every time stops after its attempts.
 * - A worker that locked a job although its registration failed (the database refused the insert)
 *   is registered by the next heartbeat; only a crash in between leaves a job to the four-hour lock.
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
   * How often each idle worker looks for jobs that became due by time (a future runAt, a retry);
   * jobs due when added are announced by NOTIFY and start at once. Default 250 ms.
   */
  pollIntervalMs?: number;
  /** How long (real time) stop() waits for running jobs before handing them back; default 5 s. */
  stopTimeoutMs?: number;
  /** How often (real time) the worker process beats and sweeps for dead workers; default 5 s. */
  heartbeatMs?: number;
  /** How long after its last heartbeat a worker is presumed dead; default 30 s. */
  deadAfterMs?: number;
  /** How often a worker looks for the next job coming due (see "Timers"); default 1 s. */
  scanIntervalMs?: number;
}

export const DEFAULT_HEARTBEAT_MS = 5_000;
export const DEFAULT_DEAD_AFTER_MS = 30_000;

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
  const revision = await db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(hashtext(${`tidings:queue:${options.schema}`}))`.execute(trx);
    await runMigrations({
      connectionString: options.databaseUrl,
      schema: options.schema,
      maxPoolSize: 1,
      logger: graphileLogger(options.logger),
    });
    return schemaRevision(trx, options.schema);
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
  readonly #options: GraphileQueueOptions;
  readonly #logger: Logger;
  /** The schema's migration revision when this queue opened (see #afterRunnerEnded). */
  readonly #revision: number;
  #taskList: TaskList = {};
  /** Set while the end of a runner is looked into (see #afterRunnerEnded). */
  #recovering: Promise<void> | undefined;
  #onFailed: FailedHandler | undefined;
  #runner: Runner | undefined;
  /** Settles once the current runner's end has been handled. */
  #runnerEnded: Promise<void> = Promise.resolve();
  /** The graphile-worker workers running one of our tasks now, by job id. */
  readonly #running = new Map<string, string>();
  #started = false;
  #stopped = false;
  /** This process's graphile-worker workers, by id: the rows its heartbeat renews. */
  readonly #workers = new Set<string>();
  /** Who runs them, as the rows and the logs say: host:pid. */
  readonly #owner = `${os.hostname()}:${process.pid}`;
  #beatTimer: NodeJS.Timeout | undefined;
  #beating: Promise<void> | undefined;
  #beatStopped = false;
  /** The last of this process's writes to queue_workers (see #inTurn). */
  #writes: Promise<unknown> = Promise.resolve();
  /** The wake-up timer (see "Timers" above): when it fires, real epoch ms. */
  #wake: { at: number; timer: NodeJS.Timeout } | undefined;
  #scan: NodeJS.Timeout | undefined;

  constructor(db: Kysely<Database>, options: GraphileQueueOptions, revision: number) {
    this.#db = db;
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
    for (const spec of specs) if (spec.run_at !== null) this.#wakeAt(Date.parse(spec.run_at));
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
  }

  /** The real instant at which graphile-worker should run a task due at `runAt` by our clock. */
  #realRunAt(runAt: number, now: number): string {
    if (this.#options.clock === systemClock) return new Date(runAt).toISOString();
    // Not business time: graphile-worker runs on real time, so the clock's delay is laid onto it.
    return new Date(Date.now() + (runAt - now)).toISOString();
  }

  wake(): void {
    // add_job's NOTIFY already wakes every listening worker when the transaction commits.
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
    // Jobs that fell due, or fall due, while no process of ours was there to time them.
    void this.#nudge();
    this.#scan = setInterval(() => void this.#nudge(), this.#options.scanIntervalMs ?? 1_000);
    this.#scan.unref();
  }

  /** The graphile-worker plugin that registers each worker before its first job (see the top). */
  #heartbeatPlugin(): GraphileConfig.Plugin {
    return {
      name: "TidingsWorkerHeartbeat",
      version: "1.0.0",
      description: "registers each worker in queue_workers, for the sweep that unlocks dead workers' jobs",
      worker: {
        hooks: {
          startWorker: async (_context, event) => {
            await this.#register(event.worker.workerId);
          },
          stopWorker: async (_context, event) => {
            await this.#deregister(event.worker.workerId);
          },
        },
      },
    };
  }

  async #register(workerId: string): Promise<void> {
    try {
      await this.#inTurn(() => {
        this.#workers.add(workerId);
        return this.#renew([workerId]);
      });
    } catch (err) {
      // The worker goes on (graphile-worker does not retry this hook); the next beat registers it.
      this.#logger.warn({ err }, "job queue: could not register a worker; the next heartbeat will");
    }
  }

  async #deregister(workerId: string): Promise<void> {
    try {
      await this.#inTurn(async () => {
        this.#workers.delete(workerId);
        await this.#db.deleteFrom("queue_workers").where("worker_id", "=", workerId).execute();
      });
    } catch (err) {
      // A stale row is swept later; unlocking a stopped worker's (no) jobs does nothing.
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
  async #renew(workerIds: readonly string[]): Promise<void> {
    if (workerIds.length === 0) return;
    await this.#db
      .insertInto("queue_workers")
      .values(workerIds.map((worker_id) => ({ worker_id, owner: this.#owner })))
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

  /** One beat: renew our workers' rows, then hand back the jobs of workers that stopped beating. */
  async #heartbeat(): Promise<void> {
    try {
      const ours = await this.#inTurn(async () => {
        const ids = [...this.#workers];
        await this.#renew(ids);
        return ids;
      });
      await this.#sweep(ours);
    } catch (err) {
      this.#logger.warn({ err }, "job queue: heartbeat failed; trying again at the next one");
    }
  }

  /**
   * Deletes the rows of workers whose last heartbeat is older than deadAfterMs and hands their
   * locked jobs back (force_unlock_workers), in one transaction.
   */
  async #sweep(ours: readonly string[]): Promise<void> {
    const deadAfterMs = this.#options.deadAfterMs ?? DEFAULT_DEAD_AFTER_MS;
    const schema = this.#options.schema;
    const swept = await this.#db.transaction().execute(async (trx) => {
      let stale = trx
        .deleteFrom("queue_workers")
        .where("heartbeat_at", "<", sql<Date>`now() - make_interval(secs => ${deadAfterMs / 1000})`);
      if (ours.length > 0) stale = stale.where("worker_id", "not in", ours);
      const dead = await stale.returning(["worker_id", "owner"]).execute();
      if (dead.length === 0) return undefined;
      // Worker ids are graphile-worker's "worker-<hex>": safe inside an array literal.
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
    }
  }

  /** Sets the wake-up timer for `at` (real epoch ms), unless it is set for an earlier moment. */
  #wakeAt(at: number): void {
    if (this.#stopped || (this.#wake && this.#wake.at <= at)) return;
    if (this.#wake) clearTimeout(this.#wake.timer);
    const timer = setTimeout(
      () => {
        if (this.#wake?.timer === timer) this.#wake = undefined;
        void this.#nudge();
      },
      Math.max(0, at - Date.now()),
    );
    timer.unref();
    this.#wake = { at, timer };
  }

  /**
   * In one statement: wakes as many idle workers (in every process) as jobs are due now, with
   * graphile-worker's own notice, and learns when the next job falls due, for the next wake-up.
   * graphile-worker's index on (priority, run_at) of available jobs answers both; our jobs all have
   * the default priority, 0.
   */
  async #nudge(): Promise<void> {
    if (this.#stopped) return;
    const jobs = sql.id(this.#options.schema, "_private_jobs");
    try {
      const { rows } = await sql<{ due: number; wait_ms: number | string | null }>`
        with due as (
          select count(*)::int as n from (
            select 1 from ${jobs}
            where is_available and priority = 0 and run_at <= now()
            limit ${NUDGE_LIMIT}
          ) as d
        ), next as (
          select run_at from ${jobs}
          where is_available and priority = 0 and run_at > now()
          order by priority, run_at
          limit 1
        )
        select
          due.n as due,
          (select extract(epoch from (next.run_at - now())) * 1000 from next) as wait_ms,
          case when due.n > 0
            then pg_notify('jobs:insert', json_build_object('r', random(), 'count', due.n)::text)
          end as notified
        from due`.execute(this.#db);
      const wait = rows[0]?.wait_ms;
      if (wait !== null && wait !== undefined) this.#wakeAt(Date.now() + Math.ceil(Number(wait)));
    } catch (err) {
      // The poll still finds the jobs; a stopped store at shutdown lands here too.
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
    const runner = await run(
      {
        connectionString: this.#options.databaseUrl,
        schema: this.#options.schema,
        concurrency,
        // graphile-worker holds a connection only to fetch and to complete a job (our handlers use
        // the store's pool), so a few serve any concurrency: one for LISTEN and four for the rest.
        // A pool per concurrent job made every PostgreSQL process of the test suite open a dozen
        // connections at start, and parallel suites ran PostgreSQL out of them.
        maxPoolSize: Math.min(concurrency + 1, 5),
        pollInterval: this.#options.pollIntervalMs ?? 250,
        noHandleSignals: true,
        logger: graphileLogger(this.#logger),
        preset: { plugins: [this.#heartbeatPlugin()] },
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
        if (unasked) this.#runner = undefined;
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

  /** Sets the failed job's run_at to now; a job whose failure is not recorded yet is looked at again. */
  async #makeDue(taskId: string, attempts: number): Promise<void> {
    const jobs = sql.id(this.#options.schema, "_private_jobs");
    for (let tries = 0; !this.#stopped; tries++) {
      try {
        const { rows } = await sql<{ locked: boolean }>`
          with due as (
            update ${jobs} set run_at = now()
            where id = ${taskId}::bigint and attempts = ${attempts} and locked_at is null
            returning id
          )
          select exists (
            select 1 from ${jobs} where id = ${taskId}::bigint and attempts = ${attempts} and locked_at is not null
          ) as locked`.execute(this.#db);
        // graphile-worker records the failure right after the handler throws: wait for it, briefly.
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
    clearInterval(this.#scan);
    await this.#recovering;
    try {
      await this.#stopRunner();
    } finally {
      // Beating went on while running tasks finished, so that no one presumed this process dead.
      await this.#stopBeating();
    }
  }

  async #stopBeating(): Promise<void> {
    this.#beatStopped = true;
    clearTimeout(this.#beatTimer);
    // Rows are left only by workers still running a task when stop() gave up on them (their
    // stopWorker has not come): they go stale and another process's sweep unlocks their jobs, even
    // if handing them back below failed.
    await this.#beating;
  }

  async #stopRunner(): Promise<void> {
    const runner = this.#runner;
    if (!runner) return;
    this.#runner = undefined;
    const graceful = runner.stop().catch((err: unknown) => {
      this.#logger.error({ err }, "job queue: graphile-worker did not stop cleanly");
    });
    if (await finishesWithin(graceful, this.#options.stopTimeoutMs ?? 5_000)) {
      await this.#runnerEnded;
      await this.#recovering;
      return;
    }
    // Hand the running jobs back now (graphile-worker's force_unlock_workers: unlocked, their
    // attempt counted), so another worker takes them at once instead of after the four-hour lock
    // timeout. The runner goes on waiting for the handlers in the background; should one finish
    // after all, graphile-worker completes its job then. (The pool's forcefulShutdown would do
    // the same, but races the graceful shutdown already under way, which ends the pool under it.)
    const workers = [...new Set(this.#running.values())];
    this.#logger.warn(
      { tasks: this.#running.size },
      "job queue: stopped waiting for running tasks; they are handed back to run again",
    );
    if (workers.length === 0) return;
    try {
      await sql`select ${sql.id(this.#options.schema, "force_unlock_workers")}(${`{${workers.join(",")}}`}::text[])`.execute(
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

/** A job a dead worker held, as the sweep reads it. */
interface HeldJob {
  id: string;
  task: string;
  attempts: number;
  max_attempts: number;
}

/** At most this many idle workers are woken by one wake-up (each process wakes its own idle ones). */
const NUDGE_LIMIT = 1000;

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
        logger.warn(err ? { err } : {}, `graphile-worker: ${message}`);
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
