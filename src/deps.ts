import type { Kysely } from "kysely";
import type { Clock } from "./clock.ts";
import type { Database } from "./store/schema.ts";

/**
 * What a service needs from the world: the database (the root handle, or the transaction the caller
 * runs in) and the clock. Passed in, never imported, so a test can hand in a transaction or a clock
 * it moves by hand.
 */
export interface Deps {
  readonly db: Kysely<Database>;
  readonly clock: Clock;
}

/** The same dependencies on another handle of the database: a transaction's, mostly. */
export const onConnection = (deps: Deps, db: Kysely<Database>): Deps => ({ db, clock: deps.clock });

/**
 * Runs `fn` in a transaction: the caller's, when `deps.db` already is one (an Idempotency-Key
 * request runs its write inside one), or a new one. Kysely cannot nest transactions, and a service
 * should not have to know whether its caller opened one.
 */
export function inTransaction<T>(deps: Deps, fn: (deps: Deps) => Promise<T>): Promise<T> {
  if (deps.db.isTransaction) return fn(deps);
  return deps.db.transaction().execute((tx) => fn(onConnection(deps, tx)));
}
