import { type Kysely, sql } from "kysely";
import { runPrepared, slot } from "../store/prepared.ts";
import type { Database } from "../store/schema.ts";
import { countRows, dialectOf, readBool, readJson, readTimestamp, writeJson } from "../store/values.ts";
import type { Branding, Environment, KeyOwner, Organization } from "./domain.ts";

type Db = Kysely<Database>;

export async function insertOrganization(db: Db, id: string, name: string, now: string) {
  await db.insertInto("organizations").values({ id, name, created_at: now, updated_at: now }).execute();
}

export async function insertEnvironment(
  db: Db,
  env: {
    id: string;
    organizationId: string;
    name: string;
    parentId: string;
    identifier: string;
    hmac: boolean;
    now: string;
  },
) {
  await db
    .insertInto("environments")
    .values({
      id: env.id,
      organization_id: env.organizationId,
      name: env.name,
      parent_id: env.parentId,
      identifier: env.identifier,
      hmac: env.hmac,
      created_at: env.now,
      updated_at: env.now,
    })
    .execute();
}

export async function insertApiKey(
  db: Db,
  key: {
    id: string;
    organizationId: string;
    environmentId: string;
    hash: string;
    hint: string;
    sealed: string | null;
    now: string;
  },
) {
  await db
    .insertInto("api_keys")
    .values({
      id: key.id,
      organization_id: key.organizationId,
      environment_id: key.environmentId,
      key_hash: key.hash,
      key_hint: key.hint,
      key_sealed: key.sealed,
      created_at: key.now,
      revoked_at: null,
    })
    .execute();
}

/**
 * The live (unrevoked) key with this hash, with the tenant it belongs to. Every request on a route
 * that is not key-guarded asks it, so its statement is built and compiled once (src/store/prepared.ts).
 */
export async function findKeyOwner(db: Db, hash: string): Promise<KeyOwner | undefined> {
  const [owner] = await runPrepared<KeyOwner>(
    db,
    "key owner",
    () =>
      db
        .selectFrom("api_keys")
        .select(["id as apiKeyId", "organization_id as organizationId", "environment_id as environmentId"])
        .where("key_hash", "=", slot("hash"))
        .where("revoked_at", "is", null),
    { hash },
  );
  return owner;
}

export async function countOrganizations(db: Db): Promise<number> {
  return countRows(db.selectFrom("organizations"));
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

const environmentColumns = [
  "id",
  "organization_id",
  "name",
  "parent_id",
  "identifier",
  "hmac",
  "created_at",
  "updated_at",
] as const;

function toEnvironment(row: {
  id: string;
  organization_id: string;
  name: string;
  parent_id: string;
  identifier: string;
  hmac: boolean | number;
  created_at: string | Date;
  updated_at: string | Date;
}): Environment {
  return {
    id: row.id,
    organizationId: row.organization_id,
    name: row.name,
    parentId: row.parent_id,
    identifier: row.identifier,
    hmac: readBool(row.hmac),
    createdAt: readTimestamp(row.created_at),
    updatedAt: readTimestamp(row.updated_at),
  };
}

/** The environment, within its organization. */
export async function findOrganizationEnvironment(db: Db, organizationId: string, id: string) {
  const row = await db
    .selectFrom("environments")
    .select(environmentColumns)
    .where("organization_id", "=", organizationId)
    .where("id", "=", id)
    .executeTakeFirst();
  return row ? toEnvironment(row) : undefined;
}

/**
 * The organization's environments, oldest first; among those made at once, a root (parent "")
 * before the environments derived from it: Development, then Production.
 */
export async function listOrganizationEnvironments(db: Db, organizationId: string): Promise<Environment[]> {
  const rows = await db
    .selectFrom("environments")
    .select(environmentColumns)
    .where("organization_id", "=", organizationId)
    .orderBy("created_at")
    .orderBy("parent_id")
    .orderBy("id")
    .execute();
  return rows.map(toEnvironment);
}

/** Turns HMAC for subscriber sessions on or off; updatedAt moves only when the value changes. */
export async function setEnvironmentHmac(db: Db, id: string, hmac: boolean, now: string) {
  const row = await db
    .updateTable("environments")
    .set({ hmac, updated_at: sql<string>`case when hmac = ${hmac} then updated_at else ${now} end` })
    .where("id", "=", id)
    .returning(environmentColumns)
    .executeTakeFirst();
  return row ? toEnvironment(row) : undefined;
}

/** The environment's live keys, oldest first: ids and hints, never the keys. */
export async function listLiveKeys(db: Db, environmentId: string) {
  const rows = await db
    .selectFrom("api_keys")
    .select(["id", "organization_id", "environment_id", "key_hint", "created_at"])
    .where("environment_id", "=", environmentId)
    .where("revoked_at", "is", null)
    .orderBy("created_at")
    .orderBy("id")
    .execute();
  return rows.map((row) => ({
    id: row.id,
    organizationId: row.organization_id,
    environmentId: row.environment_id,
    hint: row.key_hint,
    createdAt: readTimestamp(row.created_at),
  }));
}

/** The environment's live keys as stored for the widget's HMAC: sealed, or null when not kept. */
export async function listSealedKeys(db: Db, environmentId: string) {
  return db
    .selectFrom("api_keys")
    .select(["id", "key_sealed as sealed"])
    .where("environment_id", "=", environmentId)
    .where("revoked_at", "is", null)
    .orderBy("created_at", "desc")
    .execute();
}

/** The environment with this application identifier, and its organization's name. */
export async function findEnvironmentByIdentifier(db: Db, identifier: string) {
  const row = await db
    .selectFrom("environments")
    .innerJoin("organizations", "organizations.id", "environments.organization_id")
    .select([
      ...environmentColumns.map((c) => `environments.${c}` as const),
      "organizations.name as organization_name",
    ])
    .where("environments.identifier", "=", identifier)
    .executeTakeFirst();
  if (!row) return undefined;
  const { organization_name, ...environment } = row;
  return { environment: toEnvironment(environment), organizationName: organization_name };
}

export async function findOrganization(db: Db, id: string): Promise<Organization | undefined> {
  const row = await db.selectFrom("organizations").selectAll().where("id", "=", id).executeTakeFirst();
  return row
    ? {
        id: row.id,
        name: row.name,
        branding: readJson<Branding>(row.branding),
        createdAt: readTimestamp(row.created_at),
        updatedAt: readTimestamp(row.updated_at),
      }
    : undefined;
}

/** Changes the organization's name or branding; false when there is none. */
export async function updateOrganization(
  db: Db,
  id: string,
  changes: { name?: string; branding?: Branding },
  now: string,
): Promise<boolean> {
  const result = await db
    .updateTable("organizations")
    .set({
      ...(changes.name !== undefined ? { name: changes.name } : {}),
      ...(changes.branding !== undefined ? { branding: writeJson(changes.branding) } : {}),
      updated_at: now,
    })
    .where("id", "=", id)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export interface EnvironmentChange {
  name?: string | undefined;
  parentId?: string | undefined;
  identifier?: string | undefined;
  hmac?: boolean | undefined;
}

/** Renames the environment and/or moves it under another parent; undefined when there is none. */
export async function updateEnvironment(
  db: Db,
  organizationId: string,
  id: string,
  change: EnvironmentChange,
  now: string,
) {
  const row = await db
    .updateTable("environments")
    .set({
      ...(change.name !== undefined ? { name: change.name } : {}),
      ...(change.parentId !== undefined ? { parent_id: change.parentId } : {}),
      ...(change.identifier !== undefined ? { identifier: change.identifier } : {}),
      ...(change.hmac !== undefined ? { hmac: change.hmac } : {}),
      updated_at: now,
    })
    .where("organization_id", "=", organizationId)
    .where("id", "=", id)
    .returning(environmentColumns)
    .executeTakeFirst();
  return row ? toEnvironment(row) : undefined;
}

/** Removes the environment and its keys (everything else of it must be gone already: the foreign keys say so). */
export async function deleteEnvironment(db: Db, organizationId: string, id: string): Promise<boolean> {
  await db
    .deleteFrom("api_keys")
    .where("organization_id", "=", organizationId)
    .where("environment_id", "=", id)
    .execute();
  const result = await db
    .deleteFrom("environments")
    .where("organization_id", "=", organizationId)
    .where("id", "=", id)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Holds the environment's row until the transaction ends (PostgreSQL; SQLite's one writer already does). */
export async function lockEnvironment(db: Db, id: string) {
  if (dialectOf(db) === "postgres") {
    await db.selectFrom("environments").select("id").where("id", "=", id).forUpdate().execute();
  }
}

/** The environment's bridge URL (migration 0020): "" when none was registered; undefined: no environment. */
export async function findBridgeUrl(db: Db, id: string): Promise<string | undefined> {
  const row = await db
    .selectFrom("environments")
    .select("bridge_url")
    .where("id", "=", id)
    .executeTakeFirst();
  return row?.bridge_url;
}

export async function setBridgeUrl(db: Db, id: string, url: string, now: string): Promise<void> {
  await db
    .updateTable("environments")
    .set({ bridge_url: url, updated_at: now })
    .where("id", "=", id)
    .execute();
}
