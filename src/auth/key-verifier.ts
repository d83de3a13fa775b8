import type { KeyOwner } from "../tenancy/domain.ts";

/** Finds the live (unrevoked) key with this SHA-256 hash: one database round trip. */
export type KeyLookup = (hash: string) => Promise<KeyOwner | undefined>;

/**
 * How API keys are verified.
 *
 * Every request may pay a database round trip for its key (`lookup`), and most routes do. A
 * key-guarded route may instead take the owner this process verified before (`remembered`), with
 * no extra round trip, because its own statement re-checks the key:
 *
 * - The guard is evaluated by the database inside the operation's own statement, in that
 *   statement's snapshot. A revocation committed before the request, by this process or any other
 *   (the CLI on SQLite; any process sharing PostgreSQL), makes the statement match nothing: the
 *   next request is refused, strictly, with no invalidation message that could arrive late. That is
 *   why neither LISTEN/NOTIFY nor SQLite's data_version is used: both tell us about a revocation
 *   some time after it committed, not before the next statement.
 * - A guarded request that ends in a 4xx (its statement matched nothing, or it never ran) is
 *   confirmed with a real lookup before it is answered, so a revoked key gets its 401, never a 404
 *   or a 400. Only errors pay the round trip.
 *
 * Nothing depends on a route remembering to re-check; forgetting does not compile:
 *
 * - A route is key-guarded only through `keyGuardedRoute` (guarded-route.ts), whose mark is a
 *   symbol nothing else can set. Its handler is not given the request's `tenant` (its request type
 *   has none) but a `KeyClaim` (key-guard.ts): an opaque value with no ids, which no service taking
 *   a Tenant accepts.
 * - A claim opens only in `whileKeyIsLive`, which hands a statement the environment and the key id
 *   to re-check (`keyIsLive`), and hands the claim's tenant back only with what that statement
 *   found. Only repositories may import key-guard.ts (`npm run lint`), so services and routes can
 *   pass a claim on but never look inside it. The guarded statements: setStatus and
 *   findRunnableWorkflowForClaim (src/workflows/repository.ts).
 * - src/auth/guarded-routes.test.ts walks every route the app registers with the mark, revokes the
 *   key between two calls and requires the second to be refused with nothing changed, so a guarded
 *   statement that forgot its `keyIsLive` fails too.
 *
 * The cache holds positives only (a key created a moment ago is found by the lookup) and is bounded.
 */
export interface KeyVerifier {
  lookup(hash: string): Promise<KeyOwner | undefined>;
  /** An owner verified earlier by this process; never consult it unless the statement re-checks. */
  remembered(hash: string): KeyOwner | undefined;
  /** Drops a key that the database no longer knows as live. */
  forget(hash: string): void;
}

/** No memory: every request pays the lookup (what buildApp did before; KEY_CACHE=off). */
export function uncachedKeys(lookup: KeyLookup): KeyVerifier {
  return { lookup, remembered: () => undefined, forget: () => {} };
}

const DEFAULT_MAX_ENTRIES = 10_000;

/** Remembers up to `maxEntries` verified keys, the least recently verified dropped first. */
export function cachedKeys(lookup: KeyLookup, maxEntries = DEFAULT_MAX_ENTRIES): KeyVerifier {
  const owners = new Map<string, KeyOwner>();
  return {
    async lookup(hash) {
      const owner = await lookup(hash);
      owners.delete(hash);
      if (!owner) return undefined;
      if (owners.size >= maxEntries) {
        const oldest = owners.keys().next().value;
        if (oldest !== undefined) owners.delete(oldest);
      }
      owners.set(hash, owner);
      return owner;
    },
    remembered: (hash) => owners.get(hash),
    forget: (hash) => void owners.delete(hash),
  };
}

export function asVerifier(keys: KeyLookup | KeyVerifier): KeyVerifier {
  return typeof keys === "function" ? uncachedKeys(keys) : keys;
}
