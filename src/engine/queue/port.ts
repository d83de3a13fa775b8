import type { Kysely } from "kysely";
import type { Database } from "../../store/schema.ts";

/**
 * The job-queue port: what the engine asks of a queue, whichever backend holds it. Two adapters
 * implement it: a table in the SQLite file (sqlite-queue.ts) and graphile-worker on PostgreSQL
 * (graphile-queue.ts). Both give the same guarantees:
 *
 * - A task is added inside the caller's transaction, so it exists exactly when that commits.
 * - Delivery is at least once: a task whose process died mid-run runs again.
 * - A handler that throws is retried with exponential backoff (`retryDelayMs`) until `maxAttempts`
 *   runs have failed; then the task is given up, reported to `onFailed`, and removed.
 */

export interface NewTask {
  /** Handler name. */
  task: string;
  /** JSON. */
  payload: Record<string, unknown>;
  /** Epoch ms by the injected Clock; default: now. */
  runAt?: number;
  /**
   * Dedup: while a task with this key is pending (waiting, running, or waiting for a retry), adding
   * another with the same key does nothing. Once it is done or given up, the key is free again.
   */
  key?: string;
  /** Default 8. */
  maxAttempts?: number;
}

export interface TaskContext {
  taskId: string;
  /** 1 on the first run; counts runs cut short by a crash too. */
  attempt: number;
  maxAttempts: number;
}

export type TaskHandler = (payload: Record<string, unknown>, context: TaskContext) => Promise<void>;

/** A task given up after its last attempt failed. */
export interface FailedTask {
  taskId: string;
  task: string;
  payload: Record<string, unknown>;
  attempts: number;
  maxAttempts: number;
}

/**
 * Told when a task is given up (so the engine can mark its job `failed`). When it throws, the
 * failure is logged and the task is removed all the same: a task is never retried for its hook.
 */
export type FailedHandler = (task: FailedTask, error: unknown) => Promise<void>;

/** Added to the port (optional): how the worker reports tasks it gave up. */
export interface StartOptions {
  /** Default: the give-up is logged at error level. */
  onFailed?: FailedHandler;
}

export interface JobQueue {
  /**
   * Added to the port: whether `runAt` is compared with the injected clock. True for SQLite. On
   * PostgreSQL, graphile-worker compares run_at with real time, so this is true only with the
   * system clock: under a ManualClock, `advance()` does not make a future task due there, and the
   * engine must keep its timers itself (see graphile-queue.ts).
   */
  readonly runAtFollowsClock: boolean;
  /** Adds tasks inside the caller's transaction (`db` is that transaction): they exist exactly when it commits. */
  add(db: Kysely<Database>, tasks: NewTask[]): Promise<void>;
  /** Called after the caller's transaction committed: look for work now rather than at the next timer. */
  wake(): void;
  /**
   * Starts running tasks in this process (the worker role). `options` was added to the port for
   * the give-up hook.
   */
  start(handlers: Record<string, TaskHandler>, options?: StartOptions): Promise<void>;
  /** Stops taking tasks, waits for running ones to finish (bounded), releases everything. */
  stop(): Promise<void>;
}

export const DEFAULT_MAX_ATTEMPTS = 8;

/**
 * How long after its `attempt`-th failed run a task runs again: e^min(attempt, 10) seconds, the
 * formula graphile-worker applies in SQL, so both backends retry alike. Runs start at 0 s, 2.7 s,
 * 10 s, 30 s, 85 s (five within two minutes), 233 s, 636 s, 1733 s; never more than 6.1 h apart.
 */
export function retryDelayMs(attempt: number): number {
  return Math.round(Math.exp(Math.min(Math.max(attempt, 0), 10)) * 1000);
}

// graphile-worker's limits (task identifier, job key, smallint attempts), kept on both backends so
// a task that SQLite accepts is one PostgreSQL accepts too.
const MAX_TASK_NAME = 128;
const MAX_KEY = 512;
const MAX_ATTEMPTS_LIMIT = 32_767;

/** Rejects a malformed task before it reaches the database: a programming error, not bad input. */
export function checkNewTask(task: NewTask): void {
  if (typeof task.task !== "string" || task.task.length === 0 || task.task.length > MAX_TASK_NAME) {
    throw new TypeError(
      `a task name is a string of 1 to ${MAX_TASK_NAME} characters, got ${String(task.task)}`,
    );
  }
  if (task.payload === null || typeof task.payload !== "object" || Array.isArray(task.payload)) {
    throw new TypeError(`the payload of task "${task.task}" must be a JSON object`);
  }
  if (task.runAt !== undefined && !Number.isFinite(task.runAt)) {
    throw new RangeError(`runAt of task "${task.task}" must be epoch milliseconds, got ${task.runAt}`);
  }
  if (task.key !== undefined && (task.key.length === 0 || task.key.length > MAX_KEY)) {
    throw new RangeError(`the key of task "${task.task}" must be 1 to ${MAX_KEY} characters`);
  }
  const max = task.maxAttempts;
  if (max !== undefined && !(Number.isInteger(max) && max >= 1 && max <= MAX_ATTEMPTS_LIMIT)) {
    throw new RangeError(`maxAttempts of task "${task.task}" must be 1 to ${MAX_ATTEMPTS_LIMIT}, got ${max}`);
  }
}

/** The message stored with a failed attempt. */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  return String(error);
}
