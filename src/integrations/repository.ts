import type { Kysely, Selectable } from "kysely";
import type { Database, IntegrationsTable } from "../store/schema.ts";
import { readBool, readJson, readTimestamp, writeJson } from "../store/values.ts";
import type { Credentials, Integration } from "./domain.ts";

type Db = Kysely<Database>;
type Row = Selectable<IntegrationsTable>;

/** Opens the sealed credentials of a row; undefined when they cannot be opened. */
export type Unseal = (sealed: string, integrationId: string) => Credentials | undefined;
export type Seal = (credentials: Credentials, integrationId: string) => string;

function toIntegration(row: Row, unseal: Unseal): Integration {
  return {
    id: row.id,
    organizationId: row.organization_id,
    environmentId: row.environment_id,
    providerId: row.provider_id,
    channel: row.channel as Integration["channel"],
    name: row.name,
    identifier: row.identifier,
    credentials: unseal(row.credentials, row.id),
    active: readBool(row.active),
    primary: readBool(row.is_primary),
    conditions: readJson<unknown[]>(row.conditions),
    createdAt: readTimestamp(row.created_at),
    updatedAt: readTimestamp(row.updated_at),
  };
}

/** Inserts the integration, or returns undefined when its identifier is taken in the environment. */
export async function insertIntegration(
  db: Db,
  integration: Integration & { credentials: Credentials },
  seal: Seal,
  unseal: Unseal,
): Promise<Integration | undefined> {
  const row = await db
    .insertInto("integrations")
    .values({
      id: integration.id,
      organization_id: integration.organizationId,
      environment_id: integration.environmentId,
      provider_id: integration.providerId,
      channel: integration.channel,
      name: integration.name,
      identifier: integration.identifier,
      credentials: seal(integration.credentials, integration.id),
      active: integration.active,
      is_primary: integration.primary,
      conditions: writeJson(integration.conditions),
      created_at: integration.createdAt,
      updated_at: integration.updatedAt,
    })
    .onConflict((conflict) => conflict.doNothing())
    .returningAll()
    .executeTakeFirst();
  return row ? toIntegration(row, unseal) : undefined;
}

export async function findIntegration(db: Db, environmentId: string, id: string, unseal: Unseal) {
  const row = await db
    .selectFrom("integrations")
    .selectAll()
    .where("environment_id", "=", environmentId)
    .where("id", "=", id)
    .executeTakeFirst();
  return row ? toIntegration(row, unseal) : undefined;
}

export async function identifierTaken(db: Db, environmentId: string, identifier: string, exceptId = "") {
  const row = await db
    .selectFrom("integrations")
    .select("id")
    .where("environment_id", "=", environmentId)
    .where("identifier", "=", identifier)
    .where("id", "!=", exceptId)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * The environment's integrations, oldest first; only active ones, or one channel's, when asked.
 * `primaryFirst`: the channel's primary, then the newest (the order a step picks them in).
 */
export async function listIntegrations(
  db: Db,
  environmentId: string,
  unseal: Unseal,
  filter: { active?: boolean; channel?: string; providerId?: string; primaryFirst?: boolean } = {},
): Promise<Integration[]> {
  let query = db.selectFrom("integrations").selectAll().where("environment_id", "=", environmentId);
  if (filter.active !== undefined) query = query.where("active", "=", filter.active);
  if (filter.channel !== undefined) query = query.where("channel", "=", filter.channel);
  if (filter.providerId !== undefined) query = query.where("provider_id", "=", filter.providerId);
  query = filter.primaryFirst
    ? query.orderBy("is_primary", "desc").orderBy("created_at", "desc").orderBy("id", "desc")
    : query.orderBy("created_at").orderBy("id");
  const rows = await query.execute();
  return rows.map((row) => toIntegration(row, unseal));
}

export interface IntegrationChanges {
  name?: string;
  identifier?: string;
  credentials?: Credentials;
  active?: boolean;
  primary?: boolean;
  conditions?: unknown[];
  updatedAt: string;
}

export async function updateIntegration(
  db: Db,
  environmentId: string,
  id: string,
  changes: IntegrationChanges,
  seal: Seal,
  unseal: Unseal,
): Promise<Integration | undefined> {
  const row = await db
    .updateTable("integrations")
    .set({
      ...(changes.name !== undefined ? { name: changes.name } : {}),
      ...(changes.identifier !== undefined ? { identifier: changes.identifier } : {}),
      ...(changes.credentials !== undefined ? { credentials: seal(changes.credentials, id) } : {}),
      ...(changes.active !== undefined ? { active: changes.active } : {}),
      ...(changes.primary !== undefined ? { is_primary: changes.primary } : {}),
      ...(changes.conditions !== undefined ? { conditions: writeJson(changes.conditions) } : {}),
      updated_at: changes.updatedAt,
    })
    .where("environment_id", "=", environmentId)
    .where("id", "=", id)
    .returningAll()
    .executeTakeFirst();
  return row ? toIntegration(row, unseal) : undefined;
}

/** Clears the primary mark of the channel's other integrations. */
export async function clearPrimary(
  db: Db,
  environmentId: string,
  channel: string,
  exceptId: string,
  now: string,
) {
  await db
    .updateTable("integrations")
    .set({ is_primary: false, updated_at: now })
    .where("environment_id", "=", environmentId)
    .where("channel", "=", channel)
    .where("is_primary", "=", true)
    .where("id", "!=", exceptId)
    .execute();
}

export async function deleteIntegration(db: Db, environmentId: string, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom("integrations")
    .where("environment_id", "=", environmentId)
    .where("id", "=", id)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
