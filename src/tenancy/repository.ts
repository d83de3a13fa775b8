import { type Kysely, sql } from "kysely";
import type { Database } from "../store/schema.ts";
import { readTimestamp } from "../store/values.ts";

type Db = Kysely<Database>;

export interface KeyOwner {
  apiKeyId: string;
  organizationId: string;
  environmentId: string;
}

export async function insertOrganization(db: Db, id: string, name: string, now: string) {
  await db.insertInto("organizations").values({ id, name, created_at: now, updated_at: now }).execute();
}

export async function insertEnvironment(
  db: Db,
  env: { id: string; organizationId: string; name: string; parentId: string; now: string },
) {
  await db
    .insertInto("environments")
    .values({
      id: env.id,
      organization_id: env.organizationId,
      name: env.name,
      parent_id: env.parentId,
      created_at: env.now,
      updated_at: env.now,
    })
    .execute();
}

export async function insertApiKey(
  db: Db,
  key: { id: string; organizationId: string; environmentId: string; hash: string; now: string },
) {
  await db
    .insertInto("api_keys")
    .values({
      id: key.id,
      organization_id: key.organizationId,
      environment_id: key.environmentId,
      key_hash: key.hash,
      created_at: key.now,
      revoked_at: null,
    })
    .execute();
}

/** The live (unrevoked) key with this hash, with the tenant it belongs to. */
export async function findKeyOwner(db: Db, hash: string): Promise<KeyOwner | undefined> {
  return db
    .selectFrom("api_keys")
    .select(["id as apiKeyId", "organization_id as organizationId", "environment_id as environmentId"])
    .where("key_hash", "=", hash)
    .where("revoked_at", "is", null)
    .executeTakeFirst();
}

/**
 * A predicate that holds while the API key `keyId` is live: a route whose statement carries it may
 * authenticate from memory (see src/auth/key-verifier.ts). A primary-key probe, evaluated in the
 * statement's own snapshot, so a revocation committed before the statement is always seen.
 */
export const keyIsLive = (keyId: string) =>
  sql<boolean>`exists (select 1 from api_keys k where k.id = ${keyId} and k.revoked_at is null)`;

export async function countOrganizations(db: Db): Promise<number> {
  const row = await db
    .selectFrom("organizations")
    .select((eb) => eb.fn.countAll<string | number>().as("count"))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

export async function listEnvironments(db: Db, organizationId?: string) {
  let query = db
    .selectFrom("environments")
    .select(["id", "organization_id", "name", "parent_id", "created_at"])
    .orderBy("organization_id")
    .orderBy("created_at")
    .orderBy("id");
  if (organizationId) query = query.where("organization_id", "=", organizationId);
  const rows = await query.execute();
  return rows.map((row) => ({
    _id: row.id,
    _organizationId: row.organization_id,
    name: row.name,
    _parentId: row.parent_id,
    createdAt: readTimestamp(row.created_at),
  }));
}

export async function findEnvironment(db: Db, id: string) {
  return db
    .selectFrom("environments")
    .select(["id", "organization_id", "name"])
    .where("id", "=", id)
    .executeTakeFirst();
}

export async function listApiKeys(db: Db, environmentId?: string) {
  let query = db
    .selectFrom("api_keys")
    .innerJoin("environments", "environments.id", "api_keys.environment_id")
    .select([
      "api_keys.id",
      "api_keys.organization_id",
      "api_keys.environment_id",
      "environments.name as environment_name",
      "api_keys.created_at",
      "api_keys.revoked_at",
    ])
    .orderBy("api_keys.created_at")
    .orderBy("api_keys.id");
  if (environmentId) query = query.where("api_keys.environment_id", "=", environmentId);
  const rows = await query.execute();
  return rows.map((row) => ({
    id: row.id,
    organizationId: row.organization_id,
    environmentId: row.environment_id,
    environment: row.environment_name,
    createdAt: readTimestamp(row.created_at),
    revokedAt: row.revoked_at === null ? null : readTimestamp(row.revoked_at),
  }));
}

/** Revokes a live key; false when there is no such key or it was already revoked. */
export async function revokeApiKey(db: Db, id: string, now: string): Promise<boolean> {
  const result = await db
    .updateTable("api_keys")
    .set({ revoked_at: now })
    .where("id", "=", id)
    .where("revoked_at", "is", null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}
