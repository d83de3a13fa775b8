import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import type { FastifyInstance } from "fastify";
import type { Kysely } from "kysely";
import type { Database } from "../store/schema.ts";
import { purgeExpiredKeys } from "./repository.ts";

/**
 * Expired keys are deleted on a timer in each process rather than on the request path: no request
 * pays for the cleanup, and correctness never depends on it (an expired key is taken over when it is
 * used again, see idempotency.ts), so it only has to keep the table from growing. Several processes
 * purging one PostgreSQL at once is harmless: the deletes are idempotent and small.
 */
export const PURGE_INTERVAL_MS = 10 * 60 * 1000;
const PURGE_BATCH = 1000;

/** Deletes every key expired by `now`, a batch per statement; returns how many. */
export async function purgeExpiredIdempotencyKeys(db: Kysely<Database>, now: Date): Promise<number> {
  const at = now.toISOString();
  let total = 0;
  for (;;) {
    const deleted = await purgeExpiredKeys(db, at, PURGE_BATCH);
    total += deleted;
    if (deleted < PURGE_BATCH) return total;
    // Let requests waiting for the connection in between batches.
    await yieldToEventLoop();
  }
}

/** Purges once when the app is ready, then every `intervalMs`; stops (and waits) on close. */
export function registerIdempotencyKeyPurge(
  app: FastifyInstance,
  db: Kysely<Database>,
  intervalMs = PURGE_INTERVAL_MS,
): void {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  const run = () => {
    if (running) return;
    running = purgeExpiredIdempotencyKeys(db, new Date(app.clock.now()))
      .then((deleted) => {
        if (deleted > 0) app.log.info({ deleted }, "purged expired idempotency keys");
      })
      .catch((error: unknown) => app.log.warn({ err: error }, "could not purge expired idempotency keys"))
      .finally(() => {
        running = undefined;
      });
  };
  app.addHook("onReady", async () => {
    timer = setInterval(run, intervalMs);
    timer.unref();
    run();
  });
  app.addHook("onClose", async () => {
    clearInterval(timer);
    await running;
  });
}
