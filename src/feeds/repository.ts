import type { Kysely, Selectable } from "kysely";
import type { Database, FeedsTable } from "../store/schema.ts";
import { readTimestamp } from "../store/values.ts";
import type { Feed } from "./domain.ts";

type Db = Kysely<Database>;

const toFeed = (row: Selectable<FeedsTable>): Feed => ({
  id: row.id,
  organizationId: row.organization_id,
  environmentId: row.environment_id,
  identifier: row.identifier,
  name: row.name,
  createdAt: readTimestamp(row.created_at),
  updatedAt: readTimestamp(row.updated_at),
});

/** Inserts the feed; undefined when the environment has one of its identifier. */
export async function insertFeed(db: Db, feed: Feed): Promise<Feed | undefined> {
  const row = await db
    .insertInto("feeds")
    .values({
      id: feed.id,
      organization_id: feed.organizationId,
      environment_id: feed.environmentId,
      identifier: feed.identifier,
      name: feed.name,
      created_at: feed.createdAt,
      updated_at: feed.updatedAt,
    })
    .onConflict((c) => c.columns(["environment_id", "identifier"]).doNothing())
    .returningAll()
    .executeTakeFirst();
  return row ? toFeed(row) : undefined;
}

export async function listFeeds(db: Db, environmentId: string): Promise<Feed[]> {
  const rows = await db
    .selectFrom("feeds")
    .selectAll()
    .where("environment_id", "=", environmentId)
    .orderBy("created_at", "asc")
    .orderBy("id", "asc")
    .limit(1000)
    .execute();
  return rows.map(toFeed);
}

export async function findFeed(db: Db, environmentId: string, id: string): Promise<Feed | undefined> {
  const row = await db
    .selectFrom("feeds")
    .selectAll()
    .where("environment_id", "=", environmentId)
    .where("id", "=", id)
    .executeTakeFirst();
  return row ? toFeed(row) : undefined;
}

export async function deleteFeed(db: Db, environmentId: string, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom("feeds")
    .where("environment_id", "=", environmentId)
    .where("id", "=", id)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
