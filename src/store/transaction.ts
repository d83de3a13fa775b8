import { type Deps, within } from "../deps.ts";

/**
 * Runs `fn` in a transaction: the caller's, when `deps.db` already is one (an Idempotency-Key
 * request runs its write inside one), or a new one. Kysely cannot nest transactions, and a service
 * should not have to know whether its caller opened one.
 */
export function inTransaction<T>(deps: Deps, fn: (deps: Deps) => Promise<T>): Promise<T> {
  if (deps.db.isTransaction) return fn(deps);
  return deps.db.transaction().execute((tx) => fn(within(deps, tx)));
}
