import { type Kysely, type Selectable, sql } from "kysely";
import type { Database, LayoutsTable } from "../store/schema.ts";
import { countRows, dialectOf, readBool, readJson, readTimestamp, writeJson } from "../store/values.ts";
import type { Layout, LayoutVariable } from "./domain.ts";

type Db = Kysely<Database>;

function toLayout(row: Selectable<LayoutsTable>): Layout {
  return {
    id: row.id,
    organizationId: row.organization_id,
    environmentId: row.environment_id,
    parentId: row.parent_id,
    creatorId: row.creator_id,
    identifier: row.identifier,
    name: row.name,
    description: row.description,
    content: row.content,
    variables: readJson<LayoutVariable[]>(row.variables),
    isDefault: readBool(row.is_default),
    createdAt: readTimestamp(row.created_at),
    updatedAt: readTimestamp(row.updated_at),
  };
}

/** Inserts the layout; undefined when the environment already has one of its identifier. */
export async function insertLayout(db: Db, layout: Layout): Promise<Layout | undefined> {
  const row = await db
    .insertInto("layouts")
    .values({
      id: layout.id,
      organization_id: layout.organizationId,
      environment_id: layout.environmentId,
      parent_id: layout.parentId,
      creator_id: layout.creatorId,
      identifier: layout.identifier,
      name: layout.name,
      description: layout.description,
      content: layout.content,
      variables: writeJson(layout.variables),
      is_default: layout.isDefault,
      created_at: layout.createdAt,
      updated_at: layout.updatedAt,
    })
    .onConflict((conflict) => conflict.columns(["environment_id", "identifier"]).doNothing())
    .returningAll()
    .executeTakeFirst();
  return row ? toLayout(row) : undefined;
}

export async function findLayout(db: Db, environmentId: string, id: string) {
  const row = await db
    .selectFrom("layouts")
    .selectAll()
    .where("environment_id", "=", environmentId)
    .where("id", "=", id)
    .executeTakeFirst();
  return row ? toLayout(row) : undefined;
}

export async function findLayoutByIdentifier(db: Db, environmentId: string, identifier: string) {
  const row = await db
    .selectFrom("layouts")
    .selectAll()
    .where("environment_id", "=", environmentId)
    .where("identifier", "=", identifier)
    .executeTakeFirst();
  return row ? toLayout(row) : undefined;
}

/** The environment's layout of this id, or its copy of the layout of this id (promotion). */
export async function findLayoutOrCopy(db: Db, environmentId: string, id: string) {
  const rows = await db
    .selectFrom("layouts")
    .selectAll()
    .where("environment_id", "=", environmentId)
    .where((eb) => eb.or([eb("id", "=", id), eb("parent_id", "=", id)]))
    .execute();
  const row = rows.find((r) => r.id === id) ?? rows[0];
  return row ? toLayout(row) : undefined;
}

export async function findDefaultLayout(db: Db, environmentId: string) {
  const row = await db
    .selectFrom("layouts")
    .selectAll()
    .where("environment_id", "=", environmentId)
    .where("is_default", "=", true)
    .orderBy("updated_at", "desc")
    .executeTakeFirst();
  return row ? toLayout(row) : undefined;
}

export async function allLayouts(db: Db, environmentId: string) {
  const rows = await db
    .selectFrom("layouts")
    .selectAll()
    .where("environment_id", "=", environmentId)
    .orderBy("created_at", "asc")
    .orderBy("id", "asc")
    .execute();
  return rows.map(toLayout);
}

/** A page of the environment's layouts by creation, either way, and how many there are. */
export async function listLayouts(
  db: Db,
  environmentId: string,
  page: { offset: number; limit: number; descending: boolean },
) {
  const base = db.selectFrom("layouts").where("environment_id", "=", environmentId);
  const direction = page.descending ? "desc" : "asc";
  const [rows, totalCount] = await Promise.all([
    base
      .selectAll()
      .orderBy("created_at", direction)
      .orderBy("id", direction)
      .limit(page.limit)
      .offset(page.offset)
      .execute(),
    countRows(base),
  ]);
  return { totalCount, layouts: rows.map(toLayout) };
}

export type LayoutChanges = Partial<
  Pick<Layout, "identifier" | "name" | "description" | "content" | "variables" | "isDefault" | "parentId">
>;

/** Changes the fields given; undefined when there is no such layout. A taken identifier throws the unique violation. */
export async function updateLayout(
  db: Db,
  environmentId: string,
  id: string,
  changes: LayoutChanges,
  now: string,
) {
  const row = await db
    .updateTable("layouts")
    .set({
      ...(changes.identifier !== undefined ? { identifier: changes.identifier } : {}),
      ...(changes.name !== undefined ? { name: changes.name } : {}),
      ...(changes.description !== undefined ? { description: changes.description } : {}),
      ...(changes.content !== undefined ? { content: changes.content } : {}),
      ...(changes.variables !== undefined ? { variables: writeJson(changes.variables) } : {}),
      ...(changes.isDefault !== undefined ? { is_default: changes.isDefault } : {}),
      ...(changes.parentId !== undefined ? { parent_id: changes.parentId } : {}),
      updated_at: now,
    })
    .where("environment_id", "=", environmentId)
    .where("id", "=", id)
    .returningAll()
    .executeTakeFirst();
  return row ? toLayout(row) : undefined;
}

/** Makes every layout of the environment but `exceptId` not the default. */
export async function clearDefaults(db: Db, environmentId: string, exceptId: string, now: string) {
  await db
    .updateTable("layouts")
    .set({ is_default: false, updated_at: now })
    .where("environment_id", "=", environmentId)
    .where("is_default", "=", true)
    .where("id", "!=", exceptId)
    .execute();
}

export async function deleteLayout(db: Db, environmentId: string, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom("layouts")
    .where("environment_id", "=", environmentId)
    .where("id", "=", id)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Which environment each of these layouts is in; ids of none (deleted layouts) are left out. */
export async function findLayoutEnvironments(db: Db, ids: readonly string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom("layouts")
    .select(["id", "environment_id"])
    .where("id", "in", [...ids])
    .execute();
  return new Map(rows.map((row) => [row.id, row.environment_id]));
}

/** Deletes every layout of the environment (the environment is being deleted). */
export async function deleteEnvironmentLayouts(db: Db, environmentId: string): Promise<void> {
  await db.deleteFrom("layouts").where("environment_id", "=", environmentId).execute();
}

const SORT_COLUMNS = { createdAt: "created_at", updatedAt: "updated_at", name: "name" } as const;

/** Novu's /v2 list: a window of the environment's layouts, by a column either way, those whose name or identifier contain `query`. */
export async function searchLayouts(
  db: Db,
  environmentId: string,
  input: {
    offset: number;
    limit: number;
    orderBy: keyof typeof SORT_COLUMNS;
    direction: "asc" | "desc";
    query: string;
  },
) {
  let base = db.selectFrom("layouts").where("environment_id", "=", environmentId);
  if (input.query !== "") {
    const pattern = `%${input.query.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    const like = dialectOf(db) === "sqlite" ? sql`like` : sql`ilike`;
    base = base.where(
      sql<boolean>`(name ${like} ${pattern} escape '\\' or identifier ${like} ${pattern} escape '\\')`,
    );
  }
  const [rows, totalCount] = await Promise.all([
    base
      .selectAll()
      .orderBy(SORT_COLUMNS[input.orderBy], input.direction)
      .orderBy("id", input.direction)
      .limit(input.limit)
      .offset(input.offset)
      .execute(),
    countRows(base),
  ]);
  return { totalCount, layouts: rows.map(toLayout) };
}
