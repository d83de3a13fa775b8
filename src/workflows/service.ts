import { randomBytes } from "node:crypto";
import { KeyClaim } from "../auth/key-claim.ts";
import { isoNow } from "../clock.ts";
import type { Deps } from "../deps.ts";
import { badRequest, type FieldError, invalidField, mention, notFound } from "../errors.ts";
import { isObjectId, newObjectId } from "../ids.ts";
import { displayName } from "../names.ts";
import { type GroupReferences, getGroup } from "../notification-groups/service.ts";
import { isUniqueViolation } from "../store/store.ts";
import { isForeignKeyViolation } from "../store/values.ts";
import { getCurrentEnvironment } from "../tenancy/service.ts";
import type { Tenant } from "../tenancy/tenant.ts";
import { stepDraftOf, v2TypeOf } from "./controls.ts";
import type { PreferenceSettings, RunnableWorkflow, Workflow } from "./domain.ts";
import * as workflows from "./repository.ts";
import type { CreateWorkflowInput, UpdateWorkflowInput } from "./schemas.ts";
import { normalizeSteps, requireValidSteps, type StepDraft, stepsWithIds } from "./steps.ts";
import { buildTriggers, slugifyName } from "./triggers.ts";

const CONTROL = /\p{Cc}/u;

/** A path's `{workflowId}`: an ObjectId names the workflow's _id, anything else its trigger identifier. */
export function workflowRef(value: string): workflows.WorkflowRef {
  return isObjectId(value) ? { id: value } : { identifier: value };
}

export function workflowNotFound(value: string) {
  return notFound(`Workflow ${mention(value, "with this id")} was not found`);
}

export const workflowName = displayName;

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

/** The channel defaults: what was sent, else what the workflow had, else on. */
export function preferenceSettings(
  input: Partial<PreferenceSettings> = {},
  base?: PreferenceSettings,
): PreferenceSettings {
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

/** The environment's group `groupId`, or a 400 naming the field (it is the body that is wrong). */
export async function requireGroup(deps: Deps, tenant: Tenant, groupId: string) {
  try {
    return await getGroup(deps, tenant, groupId);
  } catch (error) {
    if ((error as { statusCode?: number }).statusCode === 404) throw noSuchGroup(groupId);
    throw error;
  }
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

/**
 * What creating a workflow takes, whichever API version asked: v1's body, its steps possibly with
 * v2 step ids, and, from v2, the trigger identifier itself (else it is derived from the name).
 */
export type WorkflowCreate = Omit<CreateWorkflowInput, "steps"> & {
  steps?: StepDraft[] | undefined;
  identifier?: string | undefined;
};

/** A workflow change, whichever API version asked: v1's body, its steps possibly with v2 step ids. */
export type WorkflowUpdate = Omit<UpdateWorkflowInput, "steps"> & { steps?: StepDraft[] | undefined };

function requireIdentifierShape(identifier: string, field: string) {
  if (isObjectId(identifier)) {
    throw invalidField(field, "must not look like an id (24 hex characters): paths would read it as one");
  }
}

export async function createWorkflow(deps: Deps, tenant: Tenant, input: WorkflowCreate): Promise<Workflow> {
  const { db } = deps;
  const name = workflowName(input.name);
  if (input.identifier !== undefined) requireIdentifierShape(input.identifier, "workflowId");
  requireValidSteps(input.steps ?? []);
  await requireGroup(deps, tenant, input.notificationGroupId);
  const steps = normalizeSteps(input.steps ?? []);
  const { active, draft } = statusFor(input);
  const candidates = identifierCandidates(name);
  const attempts = input.identifier === undefined ? MAX_IDENTIFIER_ATTEMPTS : 1;
  for (let attempt = 0; attempt < attempts; attempt++) {
    const identifier = input.identifier ?? (candidates.next().value as string);
    // The insert is the arbiter (unique index, ON CONFLICT DO NOTHING); a taken identifier gets the next candidate.
    const created = await groupMustStay(input.notificationGroupId, () =>
      workflows.insertWorkflow(db, {
        id: newObjectId(),
        organizationId: tenant.organizationId,
        environmentId: tenant.environmentId,
        creatorId: tenant.actorId,
        now: isoNow(deps.clock),
        name,
        description: input.description?.trim() ?? "",
        identifier,
        active,
        draft,
        critical: input.critical ?? false,
        severity: input.severity ?? "none",
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
  // A 400, not a 409: Novu's SDK retries a 409 for up to an hour.
  if (input.identifier !== undefined) throw identifierTakenError(input.identifier, "workflowId");
  throw new Error(`no free trigger identifier for "${name}" after ${MAX_IDENTIFIER_ATTEMPTS} attempts`);
}

export async function getWorkflow(deps: Deps, tenant: Tenant, workflowId: string): Promise<Workflow> {
  const workflow = await workflows.findWorkflow(deps.db, tenant.environmentId, workflowRef(workflowId));
  if (!workflow) throw workflowNotFound(workflowId);
  return workflow;
}

/**
 * The workflow of another environment of the tenant's organization, by _id or trigger identifier (a
 * published workflow's copy has its own _id, and the identifier of its source); 404 for an
 * environment of another organization, as for one that does not exist.
 */
export async function getWorkflowIn(
  deps: Deps,
  tenant: Tenant,
  environmentId: string,
  workflowId: string,
): Promise<Workflow> {
  const environment = await getCurrentEnvironment(deps, { ...tenant, environmentId });
  return getWorkflow(deps, { ...tenant, environmentId: environment.id }, workflowId);
}

/** A step of the workflow, by its v2 step id or its _id. */
export async function getWorkflowStep(deps: Deps, tenant: Tenant, workflowId: string, stepId: string) {
  const workflow = await getWorkflow(deps, tenant, workflowId);
  const step = stepsWithIds(workflow).find((s) => s.stepId === stepId || s._id === stepId);
  if (!step)
    throw notFound(
      `Step ${mention(stepId, "with this id")} was not found in workflow ${workflow.identifier}`,
    );
  return { workflow, step };
}

/**
 * A step as it would be with these control values instead of its own (Novu's v2 preview): checked
 * as a save would check it (400 for a template that does not compile), and never stored.
 */
export async function getStepWithControls(
  deps: Deps,
  tenant: Tenant,
  workflowId: string,
  stepId: string,
  controlValues: Record<string, unknown> | undefined,
) {
  const { workflow, step } = await getWorkflowStep(deps, tenant, workflowId, stepId);
  if (controlValues === undefined) return { workflow, step };
  const type = v2TypeOf(step.template.type);
  const { draft, errors } = stepDraftOf({ name: step.name, type, controlValues }, step, "");
  const fields = errors.map((e) => ({ ...e, field: e.field.replace(/^\./, "") }));
  const first = fields[0];
  if (first) throw badRequest(`${first.field} ${first.message}`, fields);
  requireValidSteps([draft]);
  const [changed] = normalizeSteps([draft], workflow.steps);
  return {
    workflow,
    step: {
      ...step,
      template: changed?.template ?? step.template,
      metadata: changed?.metadata ?? step.metadata,
    },
  };
}

/**
 * The live workflows (active or not) named by these _ids or trigger identifiers, each once, oldest
 * first; names that match none are in `missing`, in the order given.
 */
export async function findWorkflowSummaries(
  deps: Deps,
  tenant: Tenant,
  refs: readonly string[],
): Promise<{
  found: workflows.WorkflowSummary[];
  byRef: Map<string, workflows.WorkflowSummary>;
  missing: string[];
}> {
  const ids: string[] = [];
  const identifiers: string[] = [];
  for (const ref of new Set(refs)) {
    const parsed = workflowRef(ref);
    if ("id" in parsed) ids.push(parsed.id);
    else identifiers.push(parsed.identifier);
  }
  const found = await workflows.findWorkflowSummaries(deps.db, tenant.environmentId, ids, identifiers);
  const byRef = new Map<string, workflows.WorkflowSummary>();
  for (const workflow of found) {
    byRef.set(workflow.id, workflow);
    byRef.set(workflow.identifier, workflow);
  }
  const missing = [...new Set(refs)].filter((ref) => !byRef.has(ref));
  return { found, byRef, missing };
}

/**
 * The workflow as a trigger runs it (see findRunnableWorkflow), and the tenant it runs for; 404 when
 * there is none. For a key's claim, found only while the key is live: the tenant is then the claim's,
 * confirmed by that same statement (src/auth/key-guard.ts).
 */
export async function getRunnableWorkflow(
  deps: Deps,
  who: Tenant | KeyClaim,
  workflowId: string,
): Promise<{ workflow: RunnableWorkflow; tenant: Tenant }> {
  const ref = workflowRef(workflowId);
  if (who instanceof KeyClaim) {
    const found = await workflows.findRunnableWorkflowForClaim(deps.db, who, ref);
    if (!found) throw workflowNotFound(workflowId);
    return { workflow: found.found, tenant: found.tenant };
  }
  const workflow = await workflows.findRunnableWorkflow(deps.db, who.environmentId, ref);
  if (!workflow) throw workflowNotFound(workflowId);
  return { workflow, tenant: who };
}

/**
 * The status rule (contract part 5), for create, update and the status route alike: `active` when
 * sent, else the opposite of `draft` when that is sent, else `current` (a new workflow starts
 * inactive). `draft` is always the opposite of `active` (Novu derives it so since it deprecated
 * drafts).
 */
export function statusFor(
  sent: { active?: boolean | undefined; draft?: boolean | undefined },
  current = false,
): workflows.WorkflowStatus {
  const active = sent.active ?? (sent.draft === undefined ? current : !sent.draft);
  return { active, draft: !active };
}

/**
 * Switches the workflow on or off. Setting the state it already has is a success that changes
 * nothing, updatedAt included, so a client retrying after a lost answer gets the same workflow.
 * Its route authenticates from memory: the one statement re-checks the key (setStatus).
 */
export async function setWorkflowStatus(
  deps: Deps,
  claim: KeyClaim,
  workflowId: string,
  active: boolean,
): Promise<Workflow> {
  const workflow = await workflows.setStatus(
    deps.db,
    claim,
    workflowRef(workflowId),
    statusFor({ active }),
    isoNow(deps.clock),
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

export async function listWorkflows(deps: Deps, tenant: Tenant, input: ListWorkflowsInput) {
  const page = input.page ?? 0;
  const limit = input.limit ?? DEFAULT_PAGE_SIZE;
  const { totalCount, workflows: data } = await workflows.listWorkflows(deps.db, tenant.environmentId, {
    offset: page * limit,
    limit,
    query: input.query ?? "",
  });
  return { page, pageSize: limit, totalCount, data };
}

export interface SearchWorkflowsInput {
  limit?: number | undefined;
  offset?: number | undefined;
  query?: string | undefined;
  orderBy?: "createdAt" | "updatedAt" | "name" | undefined;
  orderDirection?: "ASC" | "DESC" | undefined;
  /** ACTIVE, INACTIVE (ERROR matches none): one or several. */
  status?: string | string[] | undefined;
  /** Workflows with any of these tags. */
  tags?: string | string[] | undefined;
}

const STATUSES = ["ACTIVE", "INACTIVE", "ERROR"];

/** Novu's v2 search: a page from `offset`, sorted as asked, filtered by status and tags. */
export async function searchWorkflows(deps: Deps, tenant: Tenant, input: SearchWorkflowsInput) {
  const status = input.status === undefined ? undefined : [input.status].flat();
  const unknown = status?.find((s) => !STATUSES.includes(s));
  if (unknown !== undefined)
    throw invalidField("status", `must be ACTIVE, INACTIVE or ERROR (not ${unknown})`);
  const active =
    status === undefined
      ? undefined
      : [...new Set(status.filter((s) => s !== "ERROR").map((s) => s === "ACTIVE"))];
  return workflows.searchWorkflows(deps.db, tenant.environmentId, {
    limit: input.limit ?? DEFAULT_PAGE_SIZE,
    offset: input.offset ?? 0,
    query: input.query ?? "",
    orderBy: input.orderBy ?? "createdAt",
    descending: (input.orderDirection ?? "DESC") === "DESC",
    active,
    tags: input.tags === undefined ? undefined : [input.tags].flat(),
  });
}

function identifierOf(workflow: Workflow): string {
  return workflow.triggers[0]?.identifier ?? workflow.identifier;
}

function identifierTakenError(identifier: string, field = "identifier") {
  return invalidField(field, `is already the trigger identifier of another workflow (${identifier})`);
}

function documentOf(workflow: Workflow): workflows.WorkflowDocument {
  return {
    name: workflow.name,
    description: workflow.description,
    identifier: identifierOf(workflow),
    active: workflow.active,
    draft: workflow.draft,
    critical: workflow.critical,
    severity: workflow.severity,
    tags: workflow.tags,
    steps: workflow.steps,
    triggers: workflow.triggers,
    preferenceSettings: workflow.preferenceSettings,
    data: workflow.data,
    notificationGroupId: workflow.notificationGroupId,
  };
}

/**
 * A partial update: fields left out keep their values. The trigger identifier stays as it is across
 * renames unless `identifier` is sent; triggers (and their variables) are rebuilt from the steps. An
 * update that changes nothing writes nothing, so a retried PUT leaves updatedAt alone.
 */
export async function updateWorkflow(
  deps: Deps,
  tenant: Tenant,
  workflowId: string,
  input: WorkflowUpdate,
  identifierField = "identifier",
): Promise<Workflow> {
  const { db } = deps;
  const name = input.name === undefined ? undefined : workflowName(input.name);
  if (input.identifier !== undefined) requireIdentifierShape(input.identifier, identifierField);
  if (input.notificationGroupId !== undefined) await requireGroup(deps, tenant, input.notificationGroupId);
  const tags = input.tags === undefined ? undefined : validateTags(input.tags);
  if (input.steps !== undefined) requireValidSteps(input.steps);
  const ref = workflowRef(workflowId);
  try {
    // Read, build the new version and write it in one transaction, the row locked from the read on
    // (PostgreSQL: FOR UPDATE; SQLite: the transaction has the only connection), so no concurrent
    // write, a status change included, can slip in between and be overwritten.
    return await groupMustStay(input.notificationGroupId, () =>
      db.transaction().execute(async (trx) => {
        const current = await workflows.findWorkflow(trx, tenant.environmentId, ref, { forUpdate: true });
        if (!current) throw workflowNotFound(workflowId);
        if (current.origin === "external" && input.steps !== undefined) {
          throw invalidField(
            "steps",
            "cannot be changed here: the workflow is defined in code (change it in the app and sync; control " +
              "values: PUT /v1/bridge/controls/:workflowId/:stepId)",
          );
        }
        const identifier = input.identifier ?? identifierOf(current);
        if (
          identifier !== identifierOf(current) &&
          (await workflows.identifierTaken(trx, tenant.environmentId, identifier, current.id))
        ) {
          throw identifierTakenError(identifier, identifierField);
        }
        const steps = input.steps === undefined ? current.steps : normalizeSteps(input.steps, current.steps);
        const { active, draft } = statusFor(input, current.active);
        const doc: workflows.WorkflowDocument = {
          name: name ?? current.name,
          description: input.description === undefined ? current.description : input.description.trim(),
          identifier,
          active,
          draft,
          critical: input.critical ?? current.critical,
          severity: input.severity ?? current.severity,
          tags: tags ?? current.tags,
          steps,
          triggers: buildTriggers(identifier, steps),
          preferenceSettings: preferenceSettings(input.preferenceSettings, current.preferenceSettings),
          data: input.data ?? current.data,
          notificationGroupId: input.notificationGroupId ?? current.notificationGroupId,
        };
        if (JSON.stringify(doc) === JSON.stringify(documentOf(current))) return current;
        // Never earlier than the version it replaces, whatever the clock did.
        const now = new Date(Math.max(deps.clock.now(), Date.parse(current.updatedAt) + 1)).toISOString();
        const updated = await workflows.updateWorkflow(trx, tenant.environmentId, current.id, doc, now);
        if (!updated) throw workflowNotFound(workflowId);
        return updated;
      }),
    );
  } catch (error) {
    // Another workflow took the identifier between the check and the write.
    if (isUniqueViolation(error)) throw identifierTakenError(input.identifier ?? "", identifierField);
    throw error;
  }
}

/** Soft delete: the workflow keeps its row (deleted, deletedAt, deletedBy) and leaves every read. */
export async function deleteWorkflow(deps: Deps, tenant: Tenant, workflowId: string): Promise<true> {
  const now = isoNow(deps.clock);
  const deleted = await workflows.softDeleteWorkflow(
    deps.db,
    tenant.environmentId,
    workflowRef(workflowId),
    tenant.actorId,
    now,
  );
  if (!deleted) throw workflowNotFound(workflowId);
  return true;
}

/**
 * How workflows use groups, for deleting a group (notification-groups cannot import this feature):
 * live workflows keep their group; deleted ones are removed for good with it, since they are
 * invisible already and would otherwise hold it.
 */
export const workflowGroupReferences: GroupReferences = {
  countUsing: workflows.countWorkflowsInGroup,
  release: workflows.purgeDeletedWorkflowsOfGroup,
};

/** The live workflows of the environment with a step that uses one of these layouts: name and trigger identifier. */
export function workflowsUsingLayout(deps: Deps, environmentId: string, layoutIds: readonly string[]) {
  return workflows.workflowsUsingLayout(deps.db, environmentId, layoutIds);
}

/** The live workflows of the environment with a step that names one of these feeds (`_feedId`). */
export function workflowsUsingFeed(deps: Deps, environmentId: string, feedIds: readonly string[]) {
  return workflows.workflowsNaming(deps.db, environmentId, "feedId", feedIds);
}

export type { WorkflowSummary } from "./repository.ts";
// The template language is a workflow rule (a template that does not compile is refused at save);
// the engine renders with the same parser and helpers.
export { compileCheck, parseTemplate, TEMPLATE_HELPERS } from "./templates.ts";

/** The environment's active workflows (live, `active: true`), oldest first: what preferences list. */
export async function listActiveWorkflows(deps: Deps, tenant: Tenant): Promise<workflows.WorkflowSummary[]> {
  return workflows.listActiveWorkflowSummaries(deps.db, tenant.environmentId);
}

/** A live workflow (active or not) by _id or trigger identifier, as preferences see it; 404 if none. */
export async function getWorkflowSummary(
  deps: Deps,
  tenant: Tenant,
  workflowId: string,
): Promise<workflows.WorkflowSummary> {
  const workflow = await workflows.findWorkflowSummary(
    deps.db,
    tenant.environmentId,
    workflowRef(workflowId),
  );
  if (!workflow) throw workflowNotFound(workflowId);
  return workflow;
}

/** The workflows of these ids (deleted ones too), by id: what the inbox shows of a message's workflow. */
export async function workflowSummariesByIds(
  deps: Deps,
  tenant: Tenant,
  ids: readonly string[],
): Promise<Map<string, workflows.WorkflowSummary>> {
  const found = await workflows.findWorkflowSummariesByIds(deps.db, tenant.environmentId, [...new Set(ids)]);
  return new Map(found.map((workflow) => [workflow.id, workflow]));
}

// ---------------------------------------------------------------- promotion's view of workflows
// Publishing copies a workflow of one environment into another (src/environments): the copy keeps
// its own _id and names its source in `parentId`.

/** A workflow's own content, without ids, environment, group or dates: what promotion compares and copies. */
export type WorkflowContent = Omit<workflows.WorkflowDocument, "notificationGroupId">;

export function contentOf(workflow: Workflow): WorkflowContent {
  const { notificationGroupId: _group, ...content } = documentOf(workflow);
  return content;
}

/** Every live workflow of the environment, oldest first. */
export function listLiveWorkflows(deps: Deps, environmentId: string): Promise<Workflow[]> {
  return workflows.listLiveWorkflows(deps.db, environmentId);
}

/** Which environment each of these workflows (deleted ones too) is in; ids of none are left out. */
export function workflowEnvironments(deps: Deps, ids: readonly string[]): Promise<Map<string, string>> {
  return workflows.findWorkflowEnvironments(deps.db, ids);
}

/**
 * A copy of a workflow of another environment (`parentId`) in the tenant's environment, in group
 * `groupId`; undefined when a live workflow there holds its trigger identifier.
 */
export function insertWorkflowCopy(
  deps: Deps,
  tenant: Tenant,
  content: WorkflowContent,
  groupId: string,
  parentId: string,
): Promise<Workflow | undefined> {
  const now = isoNow(deps.clock);
  return workflows.insertWorkflow(deps.db, {
    ...content,
    notificationGroupId: groupId,
    id: newObjectId(),
    organizationId: tenant.organizationId,
    environmentId: tenant.environmentId,
    creatorId: tenant.actorId,
    now,
    parentId,
  });
}

/** Writes new content into a copy (its trigger identifier may move: a unique violation if taken). */
export function replaceWorkflowCopy(
  deps: Deps,
  environmentId: string,
  id: string,
  content: WorkflowContent,
  groupId: string,
): Promise<Workflow | undefined> {
  return workflows.updateWorkflow(
    deps.db,
    environmentId,
    id,
    { ...content, notificationGroupId: groupId },
    isoNow(deps.clock),
  );
}

/** The tags of the environment's live workflows, each once, sorted. */
export function environmentTags(deps: Deps, environmentId: string): Promise<string[]> {
  return workflows.listEnvironmentTags(deps.db, environmentId);
}

/** Removes an environment's deleted workflows for good, before the environment itself goes. */
export function purgeDeletedWorkflows(deps: Deps, environmentId: string): Promise<void> {
  return workflows.purgeDeletedWorkflows(deps.db, environmentId);
}
