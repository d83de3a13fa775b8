import type { Kysely } from "kysely";
import type { Clock } from "./clock.ts";
import type { Database } from "./store/schema.ts";
import type { SecretBox } from "./store/secret-box.ts";

/**
 * What a service needs from the world: the database (the root handle, or the transaction the caller
 * runs in), the clock, and the box that seals secrets at rest. Passed in, never imported, so a test
 * can hand in a transaction or a clock it moves by hand.
 */
export interface Deps {
  readonly db: Kysely<Database>;
  readonly clock: Clock;
  /**
   * Seals and opens the secrets kept in the database (TIDINGS_SECRET_KEY): a subscriber's chat
   * webhooks and device tokens. Absent where nothing reads or writes them (the CLI, a bare app):
   * what needs it then answers 503.
   */
  readonly secrets?: SecretBox | undefined;
}

/** The box that seals secrets; without one (an app built without a key) they cannot be written: 503. */
export function secretsOf(deps: Deps): SecretBox {
  if (deps.secrets) return deps.secrets;
  // A server set up without a key (only a bare buildApp can be): a 503 whose log line says why.
  throw Object.assign(
    new Error("secrets cannot be kept: this app was built without a key to seal them (TIDINGS_SECRET_KEY)"),
    { statusCode: 503 },
  );
}

/** The same dependencies on another handle of the database: a transaction's, mostly. */
export const onConnection = (deps: Deps, db: Kysely<Database>): Deps => ({ ...deps, db });

/**
 * Runs `fn` in a transaction: the caller's, when `deps.db` already is one (an Idempotency-Key
 * request runs its write inside one), or a new one. Kysely cannot nest transactions, and a service
 * should not have to know whether its caller opened one.
 */
export function inTransaction<T>(deps: Deps, fn: (deps: Deps) => Promise<T>): Promise<T> {
  if (deps.db.isTransaction) return fn(deps);
  return deps.db.transaction().execute((tx) => fn(onConnection(deps, tx)));
}
