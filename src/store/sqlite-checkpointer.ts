import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import type SqliteDatabase from "better-sqlite3";

/**
 * Checkpoints the SQLite write-ahead log from a worker thread, off the event loop.
 *
 * By default SQLite checkpoints on the connection that commits, once the log passes 1,000 pages: it
 * copies them into the database file and fsyncs that file, on the event loop, in the middle of some
 * request. On a large table those pages are scattered and the fsync is slow: with 100,000 rows and
 * batches of 32 random updates per commit, one batch in 30 took 15–18 ms instead of 0.6 ms; in the
 * benchmark's PUT status over 1,000,000 workflows, p99 at half rate was 38–39 ms with it and 19–26 ms
 * with this worker (docs/benchmarks.md has the run).
 *
 * Here a second connection, in a worker thread, runs a PASSIVE checkpoint every `intervalMs` (less
 * often, up to `idleMaxMs`, while the log does not change): it
 * copies committed pages without waiting on, or blocking, the writer or any reader. The writer keeps
 * a backstop, a higher automatic threshold (`BACKSTOP_PAGES`). The log is only reset (written again
 * from its start) by a writer that finds every frame copied, which under a steady load rarely happens
 * between two commits; the backstop is what resets it, copying only what the worker has not yet
 * (still an fsync of the database file on the event loop, 30–40 ms on that table, but once per 4,000
 * pages rather than per 1,000). It also checkpoints alone should the worker ever stop. Checkpoints
 * never decide durability: a commit is durable once its log frames are fsync'd.
 */

const BACKSTOP_PAGES = 4000;
const DEFAULT_AUTOCHECKPOINT_PAGES = 1000;

// The worker is plain CommonJS given as source, so it runs the same from `src/` (through tsx) and
// from `dist/`; it loads the driver from the path this module resolves.
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driver);
const db = new Database(workerData.file, { fileMustExist: true });
db.pragma("synchronous = FULL");
const checkpoint = db.prepare("PRAGMA wal_checkpoint(PASSIVE)");
const stats = new Int32Array(workerData.stats);
let failed = false;
// Every intervalMs while the log grows; while it stays as it was, all of it copied, twice as long
// each time up to idleMaxMs: an idle service's thread wakes a few times a second, not forty.
let delay = workerData.intervalMs;
let lastLog = -1;
let timer;
const run = () => {
  try {
    const result = checkpoint.get();
    Atomics.store(stats, 1, result.log);
    Atomics.store(stats, 2, result.checkpointed);
    Atomics.add(stats, 0, 1);
    failed = false;
    const still = result.log === lastLog && result.checkpointed === result.log;
    delay = still ? Math.min(delay * 2, workerData.idleMaxMs) : workerData.intervalMs;
    lastLog = result.log;
  } catch (error) {
    // Say it once per run of failures; the writer's backstop goes on checkpointing meanwhile.
    if (!failed) parentPort.postMessage({ error: String(error && error.message || error) });
    failed = true;
    delay = workerData.intervalMs;
  }
  timer = setTimeout(run, delay);
};
timer = setTimeout(run, delay);
parentPort.on("message", (message) => {
  if (message !== "stop") return;
  clearTimeout(timer);
  db.close();
  parentPort.close();
});
`;

export interface CheckpointerOptions {
  intervalMs?: number;
  /** The longest wait between two looks while the log does not change (default 200 ms). */
  idleMaxMs?: number;
  /** The writer's own automatic checkpoint threshold while the worker runs, in pages. */
  backstopPages?: number;
  /** Told when the worker fails to checkpoint, or stops (then the writer checkpoints by itself). */
  onError?: (error: Error) => void;
}

export interface CheckpointStats {
  /** Checkpoints the worker has run. */
  runs: number;
  /** At the last one: frames in the log, and how many of them are in the database file. */
  logFrames: number;
  checkpointedFrames: number;
}

export class SqliteCheckpointer {
  readonly #worker: Worker;
  readonly #raw: SqliteDatabase.Database;
  readonly #stats: Int32Array;
  #stopped = false;

  private constructor(worker: Worker, raw: SqliteDatabase.Database, stats: Int32Array) {
    this.#worker = worker;
    this.#raw = raw;
    this.#stats = stats;
  }

  /** What the worker has done (shared memory: reading it costs no message). */
  get stats(): CheckpointStats {
    return {
      runs: Atomics.load(this.#stats, 0),
      logFrames: Atomics.load(this.#stats, 1),
      checkpointedFrames: Atomics.load(this.#stats, 2),
    };
  }

  /** Starts checkpointing `file`, whose writer is `raw` (a WAL-mode connection). */
  static start(
    file: string,
    raw: SqliteDatabase.Database,
    options: CheckpointerOptions = {},
  ): SqliteCheckpointer {
    const driver = createRequire(import.meta.url).resolve("better-sqlite3");
    const stats = new SharedArrayBuffer(3 * Int32Array.BYTES_PER_ELEMENT);
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        file,
        driver,
        stats,
        intervalMs: options.intervalMs ?? 25,
        // At most this long after writes resume, the worker looks again: at the trigger bench's rate
        // the log grows by some 2,000 pages in 200 ms, under the writer's backstop.
        idleMaxMs: options.idleMaxMs ?? 200,
      },
      // Only what the worker needs: no --import hooks, no inspector flags.
      execArgv: [],
    });
    raw.pragma(`wal_autocheckpoint = ${options.backstopPages ?? BACKSTOP_PAGES}`);
    const checkpointer = new SqliteCheckpointer(worker, raw, new Int32Array(stats));
    worker.on("message", (message: { error?: string }) => {
      if (message.error) options.onError?.(new Error(`WAL checkpoint failed: ${message.error}`));
    });
    const fallBack = (error: Error) => {
      if (checkpointer.#stopped) return;
      checkpointer.#stopped = true;
      checkpointer.#restoreWriterSchedule();
      options.onError?.(error);
    };
    worker.on("error", (error) => fallBack(error));
    worker.on("exit", (code) => {
      if (code !== 0) fallBack(new Error(`the WAL checkpoint worker stopped (exit code ${code})`));
    });
    // It must never be what keeps a process alive (a script that does not close the store). After the
    // listeners: adding a 'message' listener refs the worker again.
    worker.unref();
    return checkpointer;
  }

  /** Stops the worker and closes its connection (before the writer is closed). */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    // 'exit' alone (events.once would also settle on 'error', before the connection is closed).
    const exited = new Promise<void>((resolve) => this.#worker.once("exit", () => resolve()));
    this.#worker.postMessage("stop");
    const timer = setTimeout(() => void this.#worker.terminate(), 5000);
    try {
      await exited;
    } finally {
      clearTimeout(timer);
    }
    this.#restoreWriterSchedule();
  }

  /** The writer back on SQLite's own checkpoint schedule, once the worker is gone. */
  #restoreWriterSchedule(): void {
    if (this.#raw.open) this.#raw.pragma(`wal_autocheckpoint = ${DEFAULT_AUTOCHECKPOINT_PAGES}`);
  }
}
