import type { Kysely } from "kysely";
import { isoNow } from "../clock.ts";
import type { Deps } from "../deps.ts";
import { conflict, invalidField, notFound } from "../errors.ts";
import { newObjectId } from "../ids.ts";
import type { Database } from "../store/schema.ts";
import { isUniqueViolation } from "../store/store.ts";
import { isForeignKeyViolation } from "../store/values.ts";
import type { Tenant } from "../tenancy/tenant.ts";
import type { NotificationGroup } from "./domain.ts";
import * as groups from "./repository.ts";

/**
 * What refers to groups from the features above this one (workflows), which this feature cannot
 * import: the composition root (app.ts) hands it in, so deleting a group can ask without knowing who.
 */
export interface GroupReferences {
  /** How many live records use the group; while any do, it cannot be deleted. */
  countUsing(db: Kysely<Database>, environmentId: string, groupId: string): Promise<number>;
  /** Removes what only still points at the group (deleted records), inside the delete's transaction. */
  release(db: Kysely<Database>, environmentId: string, groupId: string): Promise<void>;
}

const MAX_NAME_LENGTH = 100;
// Control characters (C0, DEL, C1) and the invisible format characters that make two names look alike.
const FORBIDDEN = /[\p{Cc}\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]/u;
// A lone surrogate (a broken "\ud800" escape in the JSON) is not text: stored, it silently becomes U+FFFD.
const LONE_SURROGATE = /\p{Cs}/u;

export interface GroupName {
  /** As stored and shown: trimmed. */
  name: string;
  /** What uniqueness is decided on: trimmed, NFC-normalised, lower-cased. */
  key: string;
}

/** Applies the naming rules (contract part 6) or throws a 400 naming the field. */
export function groupName(raw: string): GroupName {
  const name = raw.trim();
  const length = [...name].length;
  if (length === 0) throw invalidField("name", "must not be empty or only whitespace");
  if (length > MAX_NAME_LENGTH) throw invalidField("name", `must be at most ${MAX_NAME_LENGTH} characters`);
  if (FORBIDDEN.test(name)) throw invalidField("name", "must not contain control or invisible characters");
  if (LONE_SURROGATE.test(name)) throw invalidField("name", "must be valid Unicode text");
  return { name, key: name.normalize("NFC").toLowerCase() };
}

async function duplicateOf(db: Kysely<Database>, tenant: Tenant, name: GroupName) {
  const existing = await groups.findGroupByNameKey(db, tenant.environmentId, name.key);
  const id = existing ? ` (${existing.id})` : "";
  return conflict(`A notification group named "${existing?.name ?? name.name}" already exists${id}`);
}

export async function createGroup(deps: Deps, tenant: Tenant, rawName: string): Promise<NotificationGroup> {
  const { db } = deps;
  const name = groupName(rawName);
  const created = await groups.insertGroup(db, {
    id: newObjectId(),
    organizationId: tenant.organizationId,
    environmentId: tenant.environmentId,
    name: name.name,
    nameKey: name.key,
    parentId: "",
    now: isoNow(deps.clock),
  });
  if (!created) throw await duplicateOf(db, tenant, name);
  return created;
}

/**
 * An environment's `General` group, made with the environment: `parentId` names its counterpart in
 * the parent environment. Undefined when the environment has one already.
 */
export async function createGeneralGroup(
  deps: Deps,
  tenant: Pick<Tenant, "organizationId" | "environmentId">,
  parentId: string,
): Promise<NotificationGroup | undefined> {
  const name = groupName("General");
  return groups.insertGroup(deps.db, {
    id: newObjectId(),
    organizationId: tenant.organizationId,
    environmentId: tenant.environmentId,
    name: name.name,
    nameKey: name.key,
    parentId,
    now: isoNow(deps.clock),
  });
}

/**
 * Where a workflow made without a group goes (Novu's v2 API has no groups): the environment's
 * `General`, else its first group by name, else a new `General`.
 */
export async function defaultGroup(
  deps: Deps,
  tenant: Pick<Tenant, "organizationId" | "environmentId">,
): Promise<NotificationGroup> {
  const general = groupName("General");
  const found =
    (await groups.findGroupByNameKey(deps.db, tenant.environmentId, general.key)) ??
    (await groups.listGroups(deps.db, tenant.environmentId))[0] ??
    (await createGeneralGroup(deps, tenant, "")) ??
    // Made by a concurrent request a moment ago.
    (await groups.findGroupByNameKey(deps.db, tenant.environmentId, general.key));
  if (!found) throw new Error(`no default group in environment ${tenant.environmentId}`);
  return found;
}

/**
 * A group made as the counterpart of another environment's (`parentId`), when workflows are
 * published there; undefined when the environment already has a group of that name.
 */
export async function createGroupCopy(
  deps: Deps,
  tenant: Pick<Tenant, "organizationId" | "environmentId">,
  rawName: string,
  parentId: string,
): Promise<NotificationGroup | undefined> {
  const name = groupName(rawName);
  return groups.insertGroup(deps.db, {
    id: newObjectId(),
    organizationId: tenant.organizationId,
    environmentId: tenant.environmentId,
    name: name.name,
    nameKey: name.key,
    parentId,
    now: isoNow(deps.clock),
  });
}

export async function listGroups(deps: Deps, tenant: Pick<Tenant, "environmentId">) {
  return groups.listGroups(deps.db, tenant.environmentId);
}

export async function getGroup(deps: Deps, tenant: Tenant, id: string) {
  const group = await groups.findGroup(deps.db, tenant.environmentId, id);
  if (!group) throw groupNotFound(id);
  return group;
}

export function groupNotFound(id: string) {
  return notFound(`Notification group ${id} was not found`);
}

/** Renames the group under the rules of create (contract part 6); 409 when another group has the name. */
export async function renameGroup(
  deps: Deps,
  tenant: Tenant,
  id: string,
  rawName: string,
): Promise<NotificationGroup> {
  const { db } = deps;
  const name = groupName(rawName);
  // Another environment's group is not found, whatever its name: checked before the name's
  // uniqueness, so a 409 can never tell that the group exists elsewhere.
  if (!(await groups.findGroup(db, tenant.environmentId, id))) throw groupNotFound(id);
  let renamed: Awaited<ReturnType<typeof groups.renameGroup>>;
  try {
    renamed = await groups.renameGroup(db, tenant.environmentId, id, name.name, name.key, isoNow(deps.clock));
  } catch (error) {
    // Another request took the name between the check and the write. Inside a transaction PostgreSQL
    // refuses any further statement, so the message cannot look the other group up.
    if (isUniqueViolation(error)) {
      throw conflict(`A notification group named "${name.name}" already exists`);
    }
    throw error;
  }
  if (renamed === "taken") throw await duplicateOf(db, tenant, name);
  if (!renamed) throw groupNotFound(id);
  return renamed;
}

function inUse(id: string, count: number) {
  const workflows = count === 1 ? "1 workflow uses it" : `${count} workflows use it`;
  return conflict(
    `Notification group ${id} cannot be deleted while ${workflows}; move or delete those workflows first`,
  );
}

/**
 * Deletes the group, which no live workflow may use (409 saying how many do). Deleted workflows of
 * the group are removed for good with it: they are invisible already, and would otherwise keep it.
 */
export async function deleteGroup(
  deps: Deps,
  tenant: Tenant,
  id: string,
  references: GroupReferences,
): Promise<void> {
  const { db } = deps;
  const env = tenant.environmentId;
  let outcome: "deleted" | "missing" | number;
  try {
    outcome = await db.transaction().execute(async (tx) => {
      if (!(await groups.findGroup(tx, env, id))) return "missing";
      const used = await references.countUsing(tx, env, id);
      if (used > 0) return used;
      await references.release(tx, env, id);
      return (await groups.deleteGroup(tx, env, id)) ? "deleted" : "missing";
    });
  } catch (error) {
    // A workflow joined the group after it was counted: the foreign key refused the delete.
    if (!isForeignKeyViolation(error)) throw error;
    outcome = await references.countUsing(db, env, id);
  }
  if (outcome === "missing") throw groupNotFound(id);
  if (typeof outcome === "number") throw inUse(id, outcome);
}

/**
 * Deletes a group inside the caller's transaction (a publish removing a copy): "in use" while live
 * workflows use it, which then stays; its deleted workflows go with it.
 */
export async function removeGroupIn(
  deps: Deps,
  tenant: Pick<Tenant, "environmentId">,
  id: string,
  references: GroupReferences,
): Promise<"deleted" | "in use" | "missing"> {
  const env = tenant.environmentId;
  if ((await references.countUsing(deps.db, env, id)) > 0) return "in use";
  await references.release(deps.db, env, id);
  return (await groups.deleteGroup(deps.db, env, id)) ? "deleted" : "missing";
}

/** Removes every group of an environment that is going away (no workflow may use them by then). */
export async function deleteEnvironmentGroups(deps: Deps, environmentId: string): Promise<void> {
  for (const group of await groups.listGroups(deps.db, environmentId)) {
    await groups.deleteGroup(deps.db, environmentId, group.id);
  }
}

/** Which environment each of these groups is in; ids of none (deleted groups) are left out. */
export function groupEnvironments(deps: Deps, ids: readonly string[]): Promise<Map<string, string>> {
  return groups.findGroupEnvironments(deps.db, ids);
}
