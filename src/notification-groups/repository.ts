import type { Kysely, Selectable } from "kysely";
import type { Database, NotificationGroupsTable } from "../store/schema.ts";
import { readTimestamp } from "../store/values.ts";
import type { NotificationGroup } from "./domain.ts";

type Db = Kysely<Database>;
type Row = Selectable<NotificationGroupsTable>;

export interface NewGroup {
  id: string;
  organizationId: string;
  environmentId: string;
  name: string;
  nameKey: string;
  parentId: string;
  now: string;
}

function toGroup(row: Row): NotificationGroup {
  return {
    id: row.id,
    name: row.name,
    environmentId: row.environment_id,
    organizationId: row.organization_id,
    parentId: row.parent_id,
    createdAt: readTimestamp(row.created_at),
    updatedAt: readTimestamp(row.updated_at),
  };
}

/**
 * Inserts the group, or returns undefined when its name is taken. ON CONFLICT DO NOTHING rather
 * than catching the violation: on PostgreSQL a failed statement poisons the surrounding transaction.
 */
export async function insertGroup(db: Db, group: NewGroup): Promise<NotificationGroup | undefined> {
  const row = await db
    .insertInto("notification_groups")
    .values({
      id: group.id,
      organization_id: group.organizationId,
      environment_id: group.environmentId,
      name: group.name,
      name_key: group.nameKey,
      parent_id: group.parentId,
      created_at: group.now,
      updated_at: group.now,
    })
    .onConflict((conflict) => conflict.doNothing())
    .returningAll()
    .executeTakeFirst();
  return row ? toGroup(row) : undefined;
}

export async function findGroup(db: Db, environmentId: string, id: string) {
  const row = await db
    .selectFrom("notification_groups")
    .selectAll()
    .where("environment_id", "=", environmentId)
    .where("id", "=", id)
    .executeTakeFirst();
  return row ? toGroup(row) : undefined;
}

export async function findGroupByNameKey(db: Db, environmentId: string, nameKey: string) {
  const row = await db
    .selectFrom("notification_groups")
    .selectAll()
    .where("environment_id", "=", environmentId)
    .where("name_key", "=", nameKey)
    .executeTakeFirst();
  return row ? toGroup(row) : undefined;
}

export async function listGroups(db: Db, environmentId: string) {
  const rows = await db
    .selectFrom("notification_groups")
    .selectAll()
    .where("environment_id", "=", environmentId)
    .orderBy("name_key")
    .orderBy("id")
    .execute();
  return rows.map(toGroup);
}

/** Renames the group; undefined when there is no such group, "taken" when the name is in use. */
export async function renameGroup(
  db: Db,
  environmentId: string,
  id: string,
  name: string,
  nameKey: string,
  now: string,
): Promise<NotificationGroup | "taken" | undefined> {
  const taken = await db
    .selectFrom("notification_groups")
    .select("id")
    .where("environment_id", "=", environmentId)
    .where("name_key", "=", nameKey)
    .where("id", "<>", id)
    .executeTakeFirst();
  if (taken) return "taken";
  const row = await db
    .updateTable("notification_groups")
    .set({ name, name_key: nameKey, updated_at: now })
    .where("environment_id", "=", environmentId)
    .where("id", "=", id)
    .returningAll()
    .executeTakeFirst();
  return row ? toGroup(row) : undefined;
}

export async function deleteGroup(db: Db, environmentId: string, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom("notification_groups")
    .where("environment_id", "=", environmentId)
    .where("id", "=", id)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** The environment each of these groups is in, by id; ids of none are left out. */
export async function findGroupEnvironments(db: Db, ids: readonly string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom("notification_groups")
    .select(["id", "environment_id"])
    .where("id", "in", [...ids])
    .execute();
  return new Map(rows.map((row) => [row.id, row.environment_id]));
}
