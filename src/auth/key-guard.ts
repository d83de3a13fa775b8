import { sql } from "kysely";

/**
 * A predicate that holds while the API key `keyId` is live: a route whose statement carries it may
 * authenticate from memory (see src/auth/key-verifier.ts). A primary-key probe, evaluated in the
 * statement's own snapshot, so a revocation committed before the statement is always seen.
 */
export const keyIsLive = (keyId: string) =>
  sql<boolean>`exists (select 1 from api_keys k where k.id = ${keyId} and k.revoked_at is null)`;
