import type { Kysely, Selectable } from "kysely";
import type { Database, TenantsTable } from "../store/schema.ts";
import { countRows, readJson, readTimestamp, writeJson } from "../store/values.ts";
import type { TenantRecord } from "./domain.ts";

type Db = Kysely<Database>;

function toTenant(row: Selectable<TenantsTable>): TenantRecord {
  return {
    id: row.id,
    organizationId: row.organization_id,
    environmentId: row.environment_id,
    identifier: row.identifier,
    name: row.name,
    data: readJson(row.data),
    createdAt: readTimestamp(row.created_at),
    updatedAt: readTimestamp(row.updated_at),
  };
}

/** Inserts the tenant; undefined when the environment already has one of its identifier. */
export async function insertTenant(db: Db, tenant: TenantRecord): Promise<TenantRecord | undefined> {
  const row = await db
    .insertInto("tenants")
    .values({
      id: tenant.id,
      organization_id: tenant.organizationId,
      environment_id: tenant.environmentId,
      identifier: tenant.identifier,
      name: tenant.name,
      data: writeJson(tenant.data),
      created_at: tenant.createdAt,
      updated_at: tenant.updatedAt,
    })
    .onConflict((conflict) => conflict.columns(["environment_id", "identifier"]).doNothing())
    .returningAll()
    .executeTakeFirst();
  return row ? toTenant(row) : undefined;
}

export async function findTenant(db: Db, environmentId: string, identifier: string) {
  const row = await db
    .selectFrom("tenants")
    .selectAll()
    .where("environment_id", "=", environmentId)
    .where("identifier", "=", identifier)
    .executeTakeFirst();
  return row ? toTenant(row) : undefined;
}

export async function findTenantById(db: Db, environmentId: string, id: string) {
  const row = await db
    .selectFrom("tenants")
    .selectAll()
    .where("environment_id", "=", environmentId)
    .where("id", "=", id)
    .executeTakeFirst();
  return row ? toTenant(row) : undefined;
}

/** A page of the environment's tenants, newest first, and how many there are. */
export async function listTenants(db: Db, environmentId: string, page: { offset: number; limit: number }) {
  const base = db.selectFrom("tenants").where("environment_id", "=", environmentId);
  const [rows, totalCount] = await Promise.all([
    base
      .selectAll()
      .orderBy("created_at", "desc")
      .orderBy("id", "desc")
      .limit(page.limit)
      .offset(page.offset)
      .execute(),
    countRows(base),
  ]);
  return { totalCount, tenants: rows.map(toTenant) };
}

/** Changes the fields given; undefined when there is no such tenant. A taken identifier throws the unique violation. */
export async function updateTenant(
  db: Db,
  environmentId: string,
  identifier: string,
  changes: { identifier?: string; name?: string; data?: Record<string, unknown> },
  now: string,
) {
  const row = await db
    .updateTable("tenants")
    .set({
      ...(changes.identifier !== undefined ? { identifier: changes.identifier } : {}),
      ...(changes.name !== undefined ? { name: changes.name } : {}),
      ...(changes.data !== undefined ? { data: writeJson(changes.data) } : {}),
      updated_at: now,
    })
    .where("environment_id", "=", environmentId)
    .where("identifier", "=", identifier)
    .returningAll()
    .executeTakeFirst();
  return row ? toTenant(row) : undefined;
}

export async function deleteTenant(db: Db, environmentId: string, identifier: string): Promise<boolean> {
  const result = await db
    .deleteFrom("tenants")
    .where("environment_id", "=", environmentId)
    .where("identifier", "=", identifier)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
