import { type Kysely, sql } from "kysely";
import { newObjectId } from "../ids.ts";
import { insertGroup } from "../notification-groups/repository.ts";
import type { Database } from "../store/schema.ts";
import { generateApiKey, hashApiKey } from "./api-keys.ts";
import * as tenancy from "./repository.ts";

export interface CreatedOrganization {
  organizationId: string;
  environments: { name: string; _id: string; apiKey: string }[];
}

/**
 * A new organization with its Development and Production environments (Production's parent is
 * Development), each with a `General` group and one API key. One transaction: all or nothing.
 */
export async function createOrganization(
  db: Kysely<Database>,
  name = "My organization",
): Promise<CreatedOrganization> {
  return db.transaction().execute((trx) => insertOrganizationTree(trx, name));
}

/**
 * On a database with no organization yet, creates the first one; undefined when there already is
 * one. Safe when several processes start at once on one PostgreSQL: the table lock makes the check
 * and the insert one step (SQLite's single writer does the same by itself).
 */
export async function bootstrapOrganization(
  db: Kysely<Database>,
  backend: "sqlite" | "postgres",
): Promise<CreatedOrganization | undefined> {
  return db.transaction().execute(async (trx) => {
    if (backend === "postgres") await sql`lock table organizations in share row exclusive mode`.execute(trx);
    if ((await tenancy.countOrganizations(trx)) > 0) return undefined;
    return insertOrganizationTree(trx, "My organization");
  });
}

async function insertOrganizationTree(trx: Kysely<Database>, name: string): Promise<CreatedOrganization> {
  const now = new Date().toISOString();
  const organizationId = newObjectId();
  await tenancy.insertOrganization(trx, organizationId, name, now);
  const environments: CreatedOrganization["environments"] = [];
  let parent: { environmentId: string; groupId: string } | undefined;
  for (const envName of ["Development", "Production"]) {
    const environmentId = newObjectId();
    await tenancy.insertEnvironment(trx, {
      id: environmentId,
      organizationId,
      name: envName,
      parentId: parent?.environmentId ?? "",
      now,
    });
    const groupId = newObjectId();
    await insertGroup(trx, {
      id: groupId,
      organizationId,
      environmentId,
      name: "General",
      nameKey: "general",
      parentId: parent?.groupId ?? "",
      now,
    });
    const apiKey = await issueKey(trx, organizationId, environmentId, now);
    environments.push({ name: envName, _id: environmentId, apiKey: apiKey.key });
    parent ??= { environmentId, groupId };
  }
  return { organizationId, environments };
}

async function issueKey(db: Kysely<Database>, organizationId: string, environmentId: string, now: string) {
  const key = generateApiKey();
  const id = newObjectId();
  await tenancy.insertApiKey(db, { id, organizationId, environmentId, hash: hashApiKey(key), now });
  return { id, key };
}

/** A new key for the environment; the plaintext is returned once and never stored. */
export async function createApiKey(db: Kysely<Database>, environmentId: string) {
  const env = await tenancy.findEnvironment(db, environmentId);
  if (!env) return undefined;
  const now = new Date().toISOString();
  const { id, key } = await issueKey(db, env.organization_id, env.id, now);
  return {
    id,
    apiKey: key,
    environmentId: env.id,
    environment: env.name,
    organizationId: env.organization_id,
    createdAt: now,
  };
}
