import type { Logger } from "pino";
import type { Clock } from "../../clock.ts";
import type { Config } from "../../config.ts";
import type { Store } from "../../store/store.ts";
import type { JobQueue } from "./port.ts";
import { SqliteQueue } from "./sqlite-queue.ts";

export type {
  FailedHandler,
  FailedTask,
  JobQueue,
  NewTask,
  StartOptions,
  TaskContext,
  TaskHandler,
} from "./port.ts";

export interface OpenQueueOptions {
  store: Store;
  clock: Clock;
  config: Pick<Config, "workerConcurrency" | "shutdownTimeoutMs"> &
    Partial<Pick<Config, "workerHeartbeatMs" | "workerDeadAfterMs">>;
  logger: Logger;
  /** PostgreSQL: graphile-worker's poll interval (see graphile-queue.ts); tests shorten it. */
  pollIntervalMs?: number;
}

/** The schema graphile-worker uses beside a store's: each test schema gets its own worker schema. */
export function workerSchemaFor(pgSchema: string | undefined): string {
  return pgSchema ? `${pgSchema}_worker` : "graphile_worker";
}

/**
 * The job queue of the store's backend: the SQLite table, or graphile-worker on PostgreSQL (whose
 * schema is installed here, so no task can be added before it exists). Run after `store.migrate()`.
 */
export async function openQueue({
  store,
  clock,
  config,
  logger,
  pollIntervalMs,
}: OpenQueueOptions): Promise<JobQueue> {
  // Running tasks get part of the shutdown budget; the rest is for requests and the database.
  const stopTimeoutMs = Math.floor(config.shutdownTimeoutMs / 2);
  const concurrency = config.workerConcurrency;
  if (store.backend === "sqlite") {
    return new SqliteQueue(store.db, { clock, logger, concurrency, stopTimeoutMs });
  }
  if (!store.postgres) throw new Error("a PostgreSQL store without its connection details");
  // Loaded only here: graphile-worker and pg take a few hundred milliseconds to load, which the
  // embedded mode (and every process that only names the worker schema) need not pay.
  const { openGraphileQueue } = await import("./graphile-queue.ts");
  return openGraphileQueue(store.db, {
    databaseUrl: store.postgres.url,
    heartbeatDb: store.postgres.openConnection(),
    schema: workerSchemaFor(store.postgres.schema),
    clock,
    logger,
    concurrency,
    stopTimeoutMs,
    ...(config.workerHeartbeatMs !== undefined ? { heartbeatMs: config.workerHeartbeatMs } : {}),
    ...(config.workerDeadAfterMs !== undefined ? { deadAfterMs: config.workerDeadAfterMs } : {}),
    ...(pollIntervalMs !== undefined ? { pollIntervalMs } : {}),
  });
}
