import type { Kysely } from "kysely";
import type { Logger } from "pino";
import type { Clock } from "../../clock.ts";
import { runPrepared, runPreparedList, runPreparedRows, slot } from "../../store/prepared.ts";
import type { Database } from "../../store/schema.ts";
import { reportGiveUp } from "./give-up.ts";
import {
  checkNewTask,
  DEFAULT_MAX_ATTEMPTS,
  errorMessage,
  type FailedHandler,
  type FailedTask,
  type JobQueue,
  type NewTask,
  retryDelayMs,
  type StartOptions,
  type TaskHandler,
} from "./port.ts";

/**
 * The embedded job queue: the `queue_tasks` table in the service's SQLite file, and a worker inside
 * the process that runs them.
 *
 * - Every statement goes through the store's Kysely (and so its group-commit driver): a claim, like
 *   any write, resolves only once committed, so no task runs before the transaction that added it
 *   is on disk, and the worker's writes share fsyncs with the requests'.
 * - The worker claims due tasks (`run_at <= clock.now()`) in one UPDATE ... RETURNING, up to its free
 *   slots, runs them concurrently, deletes a task on success and reschedules it on failure.
 * - It looks for work when woken (`wake()`, a task finishing) and on one timer armed with
 *   `clock.at(next run_at)`: no polling, and a ManualClock's `advance()` makes due tasks run. A
 *   slower idle check (`idleCheckMs`) finds tasks nobody woke it for (another process on the file).
 * - A claim is a row update that counts the attempt, so it survives a crash; the embedded mode has one
 *   worker per file, so a worker that starts releases every claim it finds: those tasks were cut short
 *   by a process that died, and run again. Run at most one worker process per SQLite file.
 */

export interface SqliteQueueOptions {
  clock: Clock;
  logger: Logger;
  /** How many tasks run at once. */
  concurrency: number;
  /** How long (real time) stop() waits for running tasks; default 5 s. */
  stopTimeoutMs?: number;
  /** How often (by the clock) an idle worker looks for tasks it was not woken for; default 2 s. */
  idleCheckMs?: number;
}

interface Failure {
  error: unknown;
  payload: Record<string, unknown>;
}

interface ClaimedRow {
  id: number;
  task: string;
  payload: string;
  attempts: number;
  max_attempts: number;
}

// SQLite binds at most 32,766 parameters per statement; six per row.
const INSERT_CHUNK = 500;

export class SqliteQueue implements JobQueue {
  readonly runAtFollowsClock = true;
  readonly #db: Kysely<Database>;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #concurrency: number;
  readonly #stopTimeoutMs: number;
  readonly #idleCheckMs: number;
  #handlers: Record<string, TaskHandler> = {};
  #onFailed: FailedHandler | undefined;
  #started = false;
  #stopped = false;
  /** Whether the worker takes tasks: started with handlers, not stopping. */
  #active = false;
  /** Set when stop() gave up waiting: a late finisher leaves its row alone (the store may be closed). */
  #abandoned = false;
  /** Tasks whose handler runs now: what the concurrency limit counts. */
  readonly #handling = new Set<number>();
  /** Every task from its claim until its end is recorded: what stop() and idle() wait for. */
  readonly #running = new Map<number, Promise<void>>();
  #pumping: Promise<void> | undefined;
  /** A wake-up arrived while a claim was under way: claim again when it ends. */
  #again = false;
  /** ... and it came from a task that ended (see #pump). */
  #againJoinsBatch = false;
  #timer: { at: number; cancel: () => void } | undefined;
  #idleWaiters: (() => void)[] = [];

  constructor(db: Kysely<Database>, options: SqliteQueueOptions) {
    this.#db = db;
    this.#clock = options.clock;
    this.#logger = options.logger;
    this.#concurrency = options.concurrency;
    this.#stopTimeoutMs = options.stopTimeoutMs ?? 5_000;
    this.#idleCheckMs = options.idleCheckMs ?? 2_000;
  }

  async add(db: Kysely<Database>, tasks: NewTask[]): Promise<void> {
    if (tasks.length === 0) return;
    for (const task of tasks) checkNewTask(task);
    const now = this.#clock.now();
    const rows = tasks.map((task) => ({
      task: task.task,
      payload: JSON.stringify(task.payload),
      // Rounded up: a task never runs before the moment it asked for.
      run_at: Math.ceil(task.runAt ?? now),
      key: task.key ?? null,
      max_attempts: task.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
      created_at: now,
    }));
    for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
      await runPreparedRows(db, "add queue tasks", rows.slice(i, i + INSERT_CHUNK), (placeholders) =>
        db
          .insertInto("queue_tasks")
          .values(placeholders)
          // The key is unique while its task exists (waiting, running, retrying): a second one is dropped.
          .onConflict((oc) => oc.column("key").doNothing()),
      );
    }
  }

  wake(): void {
    this.#pump();
  }

  async start(handlers: Record<string, TaskHandler>, options: StartOptions = {}): Promise<void> {
    if (this.#started) throw new Error("a job queue starts once");
    this.#started = true;
    this.#handlers = { ...handlers };
    this.#onFailed = options.onFailed;
    if (Object.keys(handlers).length === 0) {
      this.#logger.info("job queue: no task handlers registered, so this worker takes no tasks");
      return;
    }
    const released = await this.#db
      .updateTable("queue_tasks")
      .set({ claimed_at: null })
      .where("claimed_at", "is not", null)
      .executeTakeFirst();
    const count = Number(released.numUpdatedRows);
    if (count > 0) {
      this.#logger.warn({ tasks: count }, "job queue: tasks cut short by a worker that died run again");
    }
    this.#active = true;
    this.#pump();
  }

  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#active = false;
    this.#timer?.cancel();
    this.#timer = undefined;
    // A claim under way may still start tasks: wait for it, then for every task it started.
    await this.#pumping;
    if (this.#running.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = await Promise.race([
      Promise.allSettled(this.#running.values()).then(() => false),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(true), this.#stopTimeoutMs);
      }),
    ]);
    clearTimeout(timer);
    if (timedOut) {
      this.#abandoned = true;
      this.#logger.warn(
        { tasks: this.#running.size },
        "job queue: stopped waiting for running tasks; they run again when a worker next starts",
      );
    }
  }

  /**
   * Resolves once no claim is under way and no task runs. For tests: after `clock.advance()` or
   * `wake()`, the worker is already at work, so this waits for what they set off.
   */
  idle(): Promise<void> {
    if (!this.#pumping && this.#running.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  #settle(): void {
    if (this.#pumping || this.#running.size > 0) return;
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  /**
   * Looks for due tasks now (or right after the look under way). `joinBatch`: a task just ended and
   * its end is being recorded, so claim in one write that joins that batch (one commit for both)
   * rather than look first.
   */
  #pump(joinBatch = false): void {
    if (!this.#active) return;
    if (this.#pumping) {
      this.#again = true;
      this.#againJoinsBatch ||= joinBatch;
      return;
    }
    this.#againJoinsBatch = false;
    this.#pumping = this.#claimRounds(joinBatch)
      .catch((err: unknown) => {
        this.#logger.error({ err }, "job queue: could not claim tasks; trying again shortly");
        this.#arm(this.#clock.now() + this.#idleCheckMs);
      })
      .finally(() => {
        this.#pumping = undefined;
        // Woken after the round's last look (a task ended, wake() was called): look again.
        if (this.#again) this.#pump(this.#againJoinsBatch);
        this.#settle();
      });
  }

  async #claimRounds(joinBatch: boolean): Promise<void> {
    for (let round = 0; ; round++) {
      this.#again = false;
      const free = this.#concurrency - this.#handling.size;
      // Every slot is busy: a task that ends pumps again.
      if (free <= 0) return;
      const now = this.#clock.now();
      const claimed = await this.#claim(now, free, joinBatch && round === 0);
      for (const row of claimed) this.#launch(row);
      if (claimed.length === free) continue;
      // Nothing more is due: sleep until the next task is.
      const [next] = await runPrepared<{ next: number | null }>(
        this.#db,
        "next queue task",
        () =>
          this.#db
            .selectFrom("queue_tasks")
            .select((eb) => eb.fn.min("run_at").as("next"))
            .where("claimed_at", "is", null),
        {},
      );
      const nextRunAt = next?.next ?? null;
      const at = Math.min(nextRunAt ?? Number.POSITIVE_INFINITY, now + this.#idleCheckMs);
      // Already reached (a task came due while this round ran, or a ManualClock moved on): go again
      // now rather than through a timer, so that idle() never sees a quiet worker with work due.
      if (at <= this.#clock.now()) continue;
      this.#arm(at);
      if (!this.#again) return;
    }
  }

  /**
   * Claims up to `free` due tasks, soonest first, counting the attempt. Both statements are prepared
   * (built and compiled once): a claim is made for every few tasks.
   */
  async #claim(now: number, free: number, joinBatch: boolean): Promise<ClaimedRow[]> {
    const db = this.#db;
    const due = () =>
      db
        .selectFrom("queue_tasks")
        .select("id")
        .where("claimed_at", "is", null)
        .where("run_at", "<=", slot("now"))
        .orderBy("run_at")
        .orderBy("id")
        .limit(slot("free"));
    const claim = (ids: ReturnType<typeof due> | readonly never[]) =>
      db
        .updateTable("queue_tasks")
        .set((eb) => ({ claimed_at: slot("now"), attempts: eb("attempts", "+", 1) }))
        .where("id", "in", ids)
        // One worker per file, but a look taken before another claim must still never claim twice.
        .where("claimed_at", "is", null)
        .returning(["id", "task", "payload", "attempts", "max_attempts"]);
    if (joinBatch)
      return runPrepared<ClaimedRow>(db, "claim due queue tasks", () => claim(due()), { now, free });
    // Look before claiming: a look that finds nothing stays a read, so an idle worker never takes
    // the write lock (nor keeps a batch open for it).
    const ids = (await runPrepared<{ id: number }>(db, "due queue tasks", due, { now, free })).map(
      (row) => row.id,
    );
    if (ids.length === 0) return [];
    return runPreparedList<ClaimedRow>(db, "claim queue tasks", ids, claim, { now });
  }

  #arm(at: number): void {
    if (!this.#active || this.#timer?.at === at) return;
    this.#timer?.cancel();
    const timer = {
      at,
      cancel: this.#clock.at(at, () => {
        if (this.#timer === timer) this.#timer = undefined;
        this.#pump();
      }),
    };
    this.#timer = timer;
  }

  #launch(row: ClaimedRow): void {
    this.#handling.add(row.id);
    const run = this.#handle(row)
      .then((failure) => {
        // The slot is free once the handler is done: claim the next task in the same batch as the
        // write that records this one's end, so one commit (one fsync) serves both.
        this.#handling.delete(row.id);
        this.#pump(true);
        return this.#record(row, failure);
      })
      .finally(() => {
        this.#handling.delete(row.id);
        this.#running.delete(row.id);
        this.#settle();
      });
    this.#running.set(row.id, run);
  }

  /** Runs the task's handler; resolves with what it threw, if it did. */
  async #handle(row: ClaimedRow): Promise<Failure | undefined> {
    let payload: Record<string, unknown> = {};
    try {
      payload = JSON.parse(row.payload) as Record<string, unknown>;
      if (row.attempts > row.max_attempts) {
        // Claimed again after its last attempt was cut short (the process died during it).
        throw new Error(`the worker stopped while the task ran its last attempt (${row.max_attempts})`);
      }
      const handler = Object.hasOwn(this.#handlers, row.task) ? this.#handlers[row.task] : undefined;
      if (!handler) throw new Error(`no handler for task "${row.task}"`);
      await handler(payload, {
        taskId: String(row.id),
        attempt: row.attempts,
        maxAttempts: row.max_attempts,
      });
      return undefined;
    } catch (error) {
      return { error, payload };
    }
  }

  /** Deletes a task that succeeded, reschedules one that failed, or gives it up. */
  async #record(row: ClaimedRow, failure: Failure | undefined): Promise<void> {
    if (this.#abandoned) return;
    try {
      if (!failure) {
        const db = this.#db;
        await runPrepared(
          db,
          "delete queue task",
          () => db.deleteFrom("queue_tasks").where("id", "=", slot("id")),
          { id: row.id },
        );
      } else if (row.attempts >= row.max_attempts) {
        await this.#giveUp(row, failure.payload, failure.error);
      } else {
        await this.#retry(row, failure.error);
      }
    } catch (err) {
      this.#logger.error(
        { err, taskId: String(row.id), task: row.task },
        "job queue: could not record how a task ended; it stays claimed and runs again when a worker next starts",
      );
    }
  }

  async #retry(row: ClaimedRow, error: unknown): Promise<void> {
    const runAt = this.#clock.now() + retryDelayMs(row.attempts);
    await this.#db
      .updateTable("queue_tasks")
      .set({ claimed_at: null, run_at: runAt, last_error: errorMessage(error) })
      .where("id", "=", row.id)
      .execute();
    this.#logger.warn(
      {
        err: error,
        taskId: String(row.id),
        task: row.task,
        attempt: row.attempts,
        maxAttempts: row.max_attempts,
        retryAt: new Date(runAt).toISOString(),
      },
      "job queue: task failed; it runs again later",
    );
  }

  async #giveUp(row: ClaimedRow, payload: Record<string, unknown>, error: unknown): Promise<void> {
    const failed: FailedTask = {
      taskId: String(row.id),
      task: row.task,
      payload,
      attempts: Math.min(row.attempts, row.max_attempts),
      maxAttempts: row.max_attempts,
    };
    await reportGiveUp(this.#logger, this.#onFailed, failed, error);
    await this.#db.deleteFrom("queue_tasks").where("id", "=", row.id).execute();
  }
}
