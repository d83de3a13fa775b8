import type { Kysely, Selectable } from "kysely";
import type { Database, WorkflowOverridesTable } from "../store/schema.ts";
import { countRows, readBool, readJson, readTimestamp, writeJson } from "../store/values.ts";
import type { PreferenceSettings } from "../workflows/domain.ts";
import type { WorkflowOverride } from "./domain.ts";

type Db = Kysely<Database>;

function toOverride(row: Selectable<WorkflowOverridesTable>): WorkflowOverride {
  return {
    id: row.id,
    organizationId: row.organization_id,
    environmentId: row.environment_id,
    workflowId: row.workflow_id,
    tenantId: row.tenant_id,
    active: readBool(row.active),
    preferenceSettings: readJson<PreferenceSettings>(row.preference_settings),
    createdAt: readTimestamp(row.created_at),
    updatedAt: readTimestamp(row.updated_at),
  };
}

/** Inserts the override; undefined when the workflow already has one for the tenant. */
export async function insertOverride(db: Db, o: WorkflowOverride): Promise<WorkflowOverride | undefined> {
  const row = await db
    .insertInto("workflow_overrides")
    .values({
      id: o.id,
      organization_id: o.organizationId,
      environment_id: o.environmentId,
      workflow_id: o.workflowId,
      tenant_id: o.tenantId,
      active: o.active,
      preference_settings: writeJson(o.preferenceSettings),
      created_at: o.createdAt,
      updated_at: o.updatedAt,
    })
    .onConflict((c) => c.columns(["environment_id", "workflow_id", "tenant_id"]).doNothing())
    .returningAll()
    .executeTakeFirst();
  return row ? toOverride(row) : undefined;
}

export type OverrideKey = { id: string } | { workflowId: string; tenantId: string };

export async function findOverride(db: Db, environmentId: string, key: OverrideKey) {
  let query = db.selectFrom("workflow_overrides").selectAll().where("environment_id", "=", environmentId);
  query =
    "id" in key
      ? query.where("id", "=", key.id)
      : query.where("workflow_id", "=", key.workflowId).where("tenant_id", "=", key.tenantId);
  const row = await query.executeTakeFirst();
  return row ? toOverride(row) : undefined;
}

export async function updateOverride(
  db: Db,
  environmentId: string,
  id: string,
  changes: { active: boolean; preferenceSettings: PreferenceSettings },
  now: string,
) {
  const row = await db
    .updateTable("workflow_overrides")
    .set({
      active: changes.active,
      preference_settings: writeJson(changes.preferenceSettings),
      updated_at: now,
    })
    .where("environment_id", "=", environmentId)
    .where("id", "=", id)
    .returningAll()
    .executeTakeFirst();
  return row ? toOverride(row) : undefined;
}

export async function deleteOverride(db: Db, environmentId: string, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom("workflow_overrides")
    .where("environment_id", "=", environmentId)
    .where("id", "=", id)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** A page of the environment's overrides, newest first, and how many there are. */
export async function listOverrides(db: Db, environmentId: string, page: { offset: number; limit: number }) {
  const base = db.selectFrom("workflow_overrides").where("environment_id", "=", environmentId);
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
  return { totalCount, overrides: rows.map(toOverride) };
}
