import { sql } from "kysely";
import type { Tenant } from "../tenant.ts";

// For statements only: `npm run lint` lets no file but src/auth/ and the repositories import this one
// (.dependency-cruiser.cjs). Everyone else names a claim through key-claim.ts and cannot open it.

let openClaim: (claim: KeyClaim) => Tenant;

/**
 * The tenant an API key claims on a key-guarded route, which the database may not have confirmed
 * yet (src/auth/key-verifier.ts). Opaque on purpose: it has no ids to hand to an ordinary query,
 * and no service that takes a Tenant accepts it, so the only thing to do with it is to pass it to a
 * repository function whose statement re-checks the key (`whileKeyIsLive`).
 */
export class KeyClaim {
  readonly #tenant: Tenant;

  constructor(tenant: Tenant) {
    this.#tenant = tenant;
  }

  static {
    openClaim = (claim) => claim.#tenant;
  }
}

/**
 * A predicate that holds while the API key `keyId` is live. A primary-key probe, evaluated in the
 * statement's own snapshot, so a revocation committed before the statement is always seen.
 */
export const keyIsLive = (keyId: string) =>
  sql<boolean>`exists (select 1 from api_keys k where k.id = ${keyId} and k.revoked_at is null)`;

export interface ClaimScope {
  /** The environment the statement is scoped to. */
  readonly environmentId: string;
  /** The key the statement must re-check: `keyIsLive(keyId)` is part of its SQL. */
  readonly keyId: string;
}

/**
 * Runs the statement that confirms a claim. `statement` must carry `keyIsLive(scope.keyId)`, so
 * that it finds nothing once the key is revoked; what it finds is then the proof that the key was
 * live, and comes back with the claim's tenant for the rest of the operation. Nothing found,
 * nothing handed out.
 */
export async function whileKeyIsLive<T>(
  claim: KeyClaim,
  statement: (scope: ClaimScope) => Promise<T | undefined>,
): Promise<{ found: T; tenant: Tenant } | undefined> {
  const tenant = openClaim(claim);
  const found = await statement({ environmentId: tenant.environmentId, keyId: tenant.actorId });
  return found === undefined ? undefined : { found, tenant };
}
