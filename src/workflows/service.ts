import { randomBytes } from "node:crypto";
import type { Kysely } from "kysely";
import { badRequest, type FieldError, invalidField, notFound } from "../errors.ts";
import { isObjectId, newObjectId } from "../ids.ts";
import { findGroup } from "../notification-groups/repository.ts";
import type { Database } from "../store/schema.ts";
import { isUniqueViolation } from "../store/store.ts";
import { isForeignKeyViolation } from "../store/values.ts";
import type { Tenant } from "../tenancy/tenant.ts";
import * as workflows from "./repository.ts";
import type {
  CreateWorkflowInput,
  PreferenceSettingsResource,
  UpdateWorkflowInput,
  WorkflowResource,
} from "./schemas.ts";
import { normalizeSteps } from "./steps.ts";
import { buildTriggers, slugifyName } from "./triggers.ts";

type Db = Kysely<Database>;

const MAX_NAME_LENGTH = 200;
const CONTROL = /\p{Cc}/u;

/** A path's `{workflowId}`: an ObjectId names the workflow's _id, anything else its trigger identifier. */
export function workflowRef(value: string): workflows.WorkflowRef {
  return isObjectId(value) ? { id: value } : { identifier: value };
}

export function workflowNotFound(value: string) {
  return notFound(`Workflow ${value} was not found`);
}

export function workflowName(raw: string): string {
  const name = raw.trim();
  const length = [...name].length;
  if (length === 0) throw invalidField("name", "must not be empty or only whitespace");
  if (length > MAX_NAME_LENGTH) throw invalidField("name", `must be at most ${MAX_NAME_LENGTH} characters`);
  if (CONTROL.test(name)) throw invalidField("name", "must not contain control characters");
  return name;
}

function validateTags(tags: readonly string[]): string[] {
  const errors: FieldError[] = [];
  const cleaned = tags.map((tag, i) => {
    const value = tag.trim();
    if (value === "") errors.push({ field: `tags[${i}]`, message: "must not be empty" });
    else if (CONTROL.test(value))
      errors.push({ field: `tags[${i}]`, message: "must not contain control characters" });
    return value;
  });
  const first = errors[0];
  if (first) throw badRequest(`${first.field} ${first.message}`, errors);
  return [...new Set(cleaned)];
}

export function preferenceSettings(
  input: Partial<PreferenceSettingsResource> = {},
  base?: PreferenceSettingsResource,
) {
  return {
    email: input.email ?? base?.email ?? true,
    sms: input.sms ?? base?.sms ?? true,
    in_app: input.in_app ?? base?.in_app ?? true,
    chat: input.chat ?? base?.chat ?? true,
    push: input.push ?? base?.push ?? true,
  };
}

const noSuchGroup = (groupId: string) =>
  invalidField("notificationGroupId", `names no notification group of this environment (${groupId})`);

export async function requireGroup(db: Db, tenant: Tenant, groupId: string) {
  const group = await findGroup(db, tenant.environmentId, groupId);
  if (!group) throw noSuchGroup(groupId);
  return group;
}

/** A write that lost the race against a delete of its group gets the same 400 as a missing group. */
async function groupMustStay<T>(groupId: string | undefined, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (groupId !== undefined && isForeignKeyViolation(error)) throw noSuchGroup(groupId);
    throw error;
  }
}

const suffix = () => randomBytes(3).toString("hex");

/**
 * Candidate identifiers for a name: its slug, then the slug with a random suffix. A slug that looks
 * like an ObjectId would be read as an _id in paths, so it always gets a suffix.
 */
function* identifierCandidates(name: string): Generator<string> {
  const slug = slugifyName(name);
  const base = slug === "" ? "workflow" : slug;
  if (slug !== "" && !isObjectId(slug)) yield slug;
  for (;;) yield `${base}-${suffix()}`;
}

const MAX_IDENTIFIER_ATTEMPTS = 8;

export async function createWorkflow(
  db: Db,
  tenant: Tenant,
  input: CreateWorkflowInput,
): Promise<WorkflowResource> {
  const name = workflowName(input.name);
  await requireGroup(db, tenant, input.notificationGroupId);
  const steps = normalizeSteps(input.steps ?? []);
  const active = input.active ?? (input.draft === undefined ? false : !input.draft);
  const candidates = identifierCandidates(name);
  for (let attempt = 0; attempt < MAX_IDENTIFIER_ATTEMPTS; attempt++) {
    const identifier = candidates.next().value as string;
    // The insert is the arbiter (unique index, ON CONFLICT DO NOTHING); a taken identifier gets the next candidate.
    const created = await groupMustStay(input.notificationGroupId, () =>
      workflows.insertWorkflow(db, {
        id: newObjectId(),
        organizationId: tenant.organizationId,
        environmentId: tenant.environmentId,
        creatorId: tenant.actorId,
        now: new Date().toISOString(),
        name,
        description: input.description?.trim() ?? "",
        identifier,
        active,
        draft: !active,
        critical: input.critical ?? false,
        tags: validateTags(input.tags ?? []),
        steps,
        triggers: buildTriggers(identifier, steps),
        preferenceSettings: preferenceSettings(input.preferenceSettings),
        data: input.data ?? {},
        notificationGroupId: input.notificationGroupId,
      }),
    );
    if (created) return created;
  }
  throw new Error(`no free trigger identifier for "${name}" after ${MAX_IDENTIFIER_ATTEMPTS} attempts`);
}

export async function getWorkflow(db: Db, tenant: Tenant, workflowId: string) {
  const workflow = await workflows.findWorkflow(db, tenant.environmentId, workflowRef(workflowId));
  if (!workflow) throw workflowNotFound(workflowId);
  return workflow;
}

export async function setWorkflowStatus(db: Db, tenant: Tenant, workflowId: string, active: boolean) {
  const now = new Date().toISOString();
  const workflow = await workflows.setStatus(
    db,
    tenant.environmentId,
    workflowRef(workflowId),
    active,
    now,
    tenant.actorId,
  );
  if (!workflow) throw workflowNotFound(workflowId);
  return workflow;
}

export const DEFAULT_PAGE_SIZE = 10;

export interface ListWorkflowsInput {
  page?: number | undefined;
  limit?: number | undefined;
  query?: string | undefined;
}

export async function listWorkflows(db: Db, tenant: Tenant, input: ListWorkflowsInput) {
  const page = input.page ?? 0;
  const limit = input.limit ?? DEFAULT_PAGE_SIZE;
  const { totalCount, workflows: data } = await workflows.listWorkflows(db, tenant.environmentId, {
    offset: page * limit,
    limit,
    query: input.query ?? "",
  });
  return { page, pageSize: limit, totalCount, data };
}

function identifierOf(workflow: WorkflowResource): string {
  return workflow.triggers[0]?.identifier ?? "";
}

function identifierTakenError(identifier: string) {
  return invalidField("identifier", `is already the trigger identifier of another workflow (${identifier})`);
}

function documentOf(workflow: WorkflowResource): workflows.WorkflowDocument {
  return {
    name: workflow.name,
    description: workflow.description,
    identifier: identifierOf(workflow),
    active: workflow.active,
    draft: workflow.draft,
    critical: workflow.critical,
    tags: workflow.tags,
    steps: workflow.steps,
    triggers: workflow.triggers,
    preferenceSettings: workflow.preferenceSettings,
    data: workflow.data,
    notificationGroupId: workflow._notificationGroupId,
  };
}

/**
 * A partial update: fields left out keep their values. The trigger identifier stays as it is across
 * renames unless `identifier` is sent; triggers (and their variables) are rebuilt from the steps. An
 * update that changes nothing writes nothing, so a retried PUT leaves updatedAt alone.
 */
export async function updateWorkflow(
  db: Db,
  tenant: Tenant,
  workflowId: string,
  input: UpdateWorkflowInput,
): Promise<WorkflowResource> {
  const name = input.name === undefined ? undefined : workflowName(input.name);
  if (input.identifier !== undefined && isObjectId(input.identifier)) {
    throw invalidField(
      "identifier",
      "must not look like an id (24 hex characters): paths would read it as one",
    );
  }
  if (input.notificationGroupId !== undefined) await requireGroup(db, tenant, input.notificationGroupId);
  const tags = input.tags === undefined ? undefined : validateTags(input.tags);
  const ref = workflowRef(workflowId);
  try {
    // Read, build the new version and write it in one transaction, the row locked from the read on
    // (PostgreSQL: FOR UPDATE; SQLite: the transaction has the only connection), so no concurrent
    // write, a status change included, can slip in between and be overwritten.
    return await groupMustStay(input.notificationGroupId, () =>
      db.transaction().execute(async (trx) => {
        const current = await workflows.findWorkflow(trx, tenant.environmentId, ref, true);
        if (!current) throw workflowNotFound(workflowId);
        const identifier = input.identifier ?? identifierOf(current);
        if (
          identifier !== identifierOf(current) &&
          (await workflows.identifierTaken(trx, tenant.environmentId, identifier, current._id))
        ) {
          throw identifierTakenError(identifier);
        }
        const steps = input.steps === undefined ? current.steps : normalizeSteps(input.steps, current.steps);
        const active = input.active ?? (input.draft === undefined ? current.active : !input.draft);
        const doc: workflows.WorkflowDocument = {
          name: name ?? current.name,
          description: input.description === undefined ? current.description : input.description.trim(),
          identifier,
          active,
          draft: !active,
          critical: input.critical ?? current.critical,
          tags: tags ?? current.tags,
          steps,
          triggers: buildTriggers(identifier, steps),
          preferenceSettings: preferenceSettings(input.preferenceSettings, current.preferenceSettings),
          data: input.data ?? current.data,
          notificationGroupId: input.notificationGroupId ?? current._notificationGroupId,
        };
        if (JSON.stringify(doc) === JSON.stringify(documentOf(current))) return current;
        // Never earlier than the version it replaces, whatever the clock did.
        const now = new Date(Math.max(Date.now(), Date.parse(current.updatedAt) + 1)).toISOString();
        const updated = await workflows.updateWorkflow(trx, tenant.environmentId, current._id, doc, now);
        if (!updated) throw workflowNotFound(workflowId);
        return updated;
      }),
    );
  } catch (error) {
    // Another workflow took the identifier between the check and the write.
    if (isUniqueViolation(error)) throw identifierTakenError(input.identifier ?? "");
    throw error;
  }
}

/** Soft delete: the workflow keeps its row (deleted, deletedAt, deletedBy) and leaves every read. */
export async function deleteWorkflow(db: Db, tenant: Tenant, workflowId: string): Promise<true> {
  const now = new Date().toISOString();
  const deleted = await workflows.softDeleteWorkflow(
    db,
    tenant.environmentId,
    workflowRef(workflowId),
    tenant.actorId,
    now,
  );
  if (!deleted) throw workflowNotFound(workflowId);
  return true;
}
