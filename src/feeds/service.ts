import { isoNow } from "../clock.ts";
import { type Deps, inTransaction } from "../deps.ts";
import { conflict, invalidField, mention, notFound } from "../errors.ts";
import { newObjectId } from "../ids.ts";
import type { Tenant } from "../tenancy/tenant.ts";
import { workflowsUsingFeed } from "../workflows/service.ts";
import type { Feed } from "./domain.ts";
import * as feeds from "./repository.ts";

export type { Feed } from "./domain.ts";

/** A feed named `name`, whose identifier is the name (as Novu's). */
export async function createFeed(deps: Deps, tenant: Tenant, rawName: string): Promise<Feed> {
  const name = rawName.trim();
  if (name === "") throw invalidField("name", "must not be empty");
  const now = isoNow(deps.clock);
  const created = await feeds.insertFeed(deps.db, {
    id: newObjectId(deps.clock.now()),
    organizationId: tenant.organizationId,
    environmentId: tenant.environmentId,
    identifier: name,
    name,
    createdAt: now,
    updatedAt: now,
  });
  if (!created) throw conflict(`Feed with identifier: ${mention(name, "given")} already exists`);
  return created;
}

export const listFeeds = (deps: Deps, tenant: Tenant) => feeds.listFeeds(deps.db, tenant.environmentId);

/** The environment's feed of this id; 404 when it has none (Novu's words). */
export async function getFeed(deps: Deps, tenant: Tenant, id: string): Promise<Feed> {
  const feed = await feeds.findFeed(deps.db, tenant.environmentId, id);
  if (!feed) throw notFound(`Feed with ${mention(id, "given")} not found`);
  return feed;
}

/** Deletes the feed (refused while a live workflow's in-app step names it); answers the feeds left. */
export async function deleteFeed(deps: Deps, tenant: Tenant, id: string): Promise<Feed[]> {
  return inTransaction(deps, async (d) => {
    if ((await workflowsUsingFeed(d, tenant.environmentId, [id])).length > 0)
      throw conflict("Can not delete feed that has existing workflow steps: change them first");
    if (!(await feeds.deleteFeed(d.db, tenant.environmentId, id)))
      throw notFound(`Feed ${mention(id, "given")} was not found`);
    return feeds.listFeeds(d.db, tenant.environmentId);
  });
}
