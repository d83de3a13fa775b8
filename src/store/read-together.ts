import type { Kysely } from "kysely";
import type { Database } from "./schema.ts";

/**
 * Identical reads that arrive in the same turn of the event loop, made once: the first schedules its
 * statement for the end of the turn, and every read with the same key asked before it is sent
 * shares its answer. None joins a statement already sent: each answer is as fresh as a statement of
 * its own sent when it was asked (a key revoked before a request arrived is never let through by a
 * read sent earlier). Reads inside a transaction are not shared (they see its writes). Used where
 * many requests ask the same thing at once: the trigger route's workflow lookup (which also proves
 * the API key live), once a trigger, the same for every trigger of an app.
 *
 * Written here rather than with DataLoader: DataLoader batches different keys into one call and
 * caches answers for the loader's life; what is wanted is only identical reads made once, and
 * nothing kept once answered.
 */
const waiting = new WeakMap<Kysely<Database>, Map<string, Promise<unknown>>>();

export function readTogether<T>(db: Kysely<Database>, key: string, read: () => Promise<T>): Promise<T> {
  if (db.isTransaction) return read();
  let byKey = waiting.get(db);
  if (!byKey) {
    byKey = new Map();
    waiting.set(db, byKey);
  }
  const asked = byKey.get(key);
  if (asked) return asked as Promise<T>;
  const reads = byKey;
  const answer = new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
    // Sent now: a read asked from here on makes its own.
    reads.delete(key);
    return read();
  });
  reads.set(key, answer);
  return answer;
}
