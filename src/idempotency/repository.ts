import type { Kysely } from "kysely";
import type { Database } from "../store/schema.ts";
import { readTimestamp } from "../store/values.ts";

type Db = Kysely<Database>;

/** While a request runs its row holds status 0 and, in place of a body, the token of its claim. */
export const IN_FLIGHT = 0;

export interface Claim {
  environmentId: string;
  key: string;
  requestHash: string;
  /** Random per request: only the request that holds the claim may complete or release it. */
  token: string;
  now: string;
  expiresAt: string;
}

export interface StoredKey {
  requestHash: string;
  statusCode: number;
  responseBody: string;
  createdAt: string;
  expiresAt: string;
}

/**
 * Claims the key for a request; false when the environment already has a row for it. ON CONFLICT
 * DO NOTHING: the primary key decides between concurrent claims, and nothing fails.
 */
export async function claimKey(db: Db, claim: Claim): Promise<boolean> {
  const row = await db
    .insertInto("idempotency_keys")
    .values({
      environment_id: claim.environmentId,
      key: claim.key,
      request_hash: claim.requestHash,
      status_code: IN_FLIGHT,
      response_body: claim.token,
      created_at: claim.now,
      expires_at: claim.expiresAt,
    })
    .onConflict((conflict) => conflict.doNothing())
    .returning("key")
    .executeTakeFirst();
  return row !== undefined;
}

export async function findKey(db: Db, environmentId: string, key: string): Promise<StoredKey | undefined> {
  const row = await db
    .selectFrom("idempotency_keys")
    .selectAll()
    .where("environment_id", "=", environmentId)
    .where("key", "=", key)
    .executeTakeFirst();
  return row
    ? {
        requestHash: row.request_hash,
        statusCode: row.status_code,
        responseBody: row.response_body,
        createdAt: readTimestamp(row.created_at),
        expiresAt: readTimestamp(row.expires_at),
      }
    : undefined;
}

/**
 * Takes over a row that no request can still be using: expired, or claimed before `abandonedBefore`
 * and never completed (its process died). One statement, so two takers cannot both win.
 */
export async function takeOverKey(db: Db, claim: Claim, abandonedBefore: string): Promise<boolean> {
  const result = await db
    .updateTable("idempotency_keys")
    .set({
      request_hash: claim.requestHash,
      status_code: IN_FLIGHT,
      response_body: claim.token,
      created_at: claim.now,
      expires_at: claim.expiresAt,
    })
    .where("environment_id", "=", claim.environmentId)
    .where("key", "=", claim.key)
    .where((eb) =>
      eb.or([
        eb("expires_at", "<=", claim.now),
        eb.and([eb("status_code", "=", IN_FLIGHT), eb("created_at", "<", abandonedBefore)]),
      ]),
    )
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * Stores the response, in the transaction of the write it answers; false when the claim is no
 * longer this request's (taken over as abandoned), and then the caller must roll the write back.
 */
export async function completeKey(
  db: Db,
  claim: Claim,
  statusCode: number,
  responseBody: string,
): Promise<boolean> {
  const result = await db
    .updateTable("idempotency_keys")
    .set({ status_code: statusCode, response_body: responseBody })
    .where("environment_id", "=", claim.environmentId)
    .where("key", "=", claim.key)
    .where("status_code", "=", IN_FLIGHT)
    .where("response_body", "=", claim.token)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Gives the key back after a request that wrote nothing (it failed), so it may be tried again. */
export async function releaseKey(db: Db, claim: Claim): Promise<void> {
  await db
    .deleteFrom("idempotency_keys")
    .where("environment_id", "=", claim.environmentId)
    .where("key", "=", claim.key)
    .where("status_code", "=", IN_FLIGHT)
    .where("response_body", "=", claim.token)
    .execute();
}

/**
 * Deletes up to `batch` expired keys (oldest first, through the expiry index); returns how many.
 * Small batches keep each statement short: on SQLite every statement holds the one connection.
 */
export async function purgeExpiredKeys(db: Db, now: string, batch: number): Promise<number> {
  const result = await db
    .deleteFrom("idempotency_keys")
    .where(({ eb, refTuple, selectFrom }) =>
      eb(
        refTuple("environment_id", "key"),
        "in",
        selectFrom("idempotency_keys")
          .select(["environment_id", "key"])
          .where("expires_at", "<=", now)
          .orderBy("expires_at")
          .limit(batch)
          .$asTuple("environment_id", "key"),
      ),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
