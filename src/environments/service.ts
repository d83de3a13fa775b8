import { isDeepStrictEqual } from "node:util";
import { type Deps, inTransaction } from "../deps.ts";
import { ApiError, badRequest, invalidField, notFound, unprocessable } from "../errors.ts";
import type { Layout } from "../layouts/domain.ts";
import {
  deleteEnvironmentLayouts,
  deleteLayoutCopy,
  environmentLayouts,
  insertLayoutCopy,
  layoutDifferences,
  layoutEnvironments,
  layoutsNamedBy,
  replaceLayoutCopy,
} from "../layouts/service.ts";
import type { NotificationGroup } from "../notification-groups/domain.ts";
import {
  createGroupCopy,
  deleteEnvironmentGroups,
  type GroupReferences,
  groupEnvironments,
  listGroups,
  removeGroupIn,
  renameGroup,
} from "../notification-groups/service.ts";
import { setUpEnvironment } from "../onboarding/service.ts";
import { isUniqueViolation } from "../store/store.ts";
import { isForeignKeyViolation } from "../store/values.ts";
import type { Environment, KeySealer } from "../tenancy/domain.ts";
import {
  deleteEnvironmentRecord,
  getEnvironment,
  listEnvironments,
  lockEnvironment,
  updateEnvironmentRecord,
} from "../tenancy/service.ts";
import type { Tenant } from "../tenancy/tenant.ts";
import type { Workflow } from "../workflows/domain.ts";
import {
  contentOf,
  deleteWorkflow,
  environmentTags,
  insertWorkflowCopy,
  listLiveWorkflows,
  purgeDeletedWorkflows,
  replaceWorkflowCopy,
  type WorkflowContent,
  workflowEnvironments,
} from "../workflows/service.ts";
import type {
  Change,
  GroupChange,
  LayoutChange,
  Promotion,
  Published,
  PublishResult,
  WorkflowChange,
} from "./domain.ts";

// ---------------------------------------------------------------- the organization's environments

/** The environments whose names carry rules (Production's HMAC, the default source of a publish). */
const DEFAULT_ENVIRONMENTS = ["Development", "Production"];
const MAX_NAME = 100;

function environmentName(raw: string): string {
  const name = raw.trim();
  if (name === "" || [...name].length > MAX_NAME || /\p{Cc}/u.test(name)) {
    throw invalidField("name", `must be 1–${MAX_NAME} characters, without control characters`);
  }
  return name;
}

// Refusals that last are 400s, not 409s: Novu's SDK retries a 409 for up to an hour.
const nameTaken = (name: string) => invalidField("name", `is already the name of an environment (${name})`);

async function requireFreeName(deps: Deps, tenant: Tenant, name: string, exceptId = "") {
  const all = await listEnvironments(deps, tenant);
  if (all.some((e) => e.id !== exceptId && e.name.toLowerCase() === name.toLowerCase()))
    throw nameTaken(name);
  return all;
}

/**
 * A new environment of the organization, derived from `parentId` (default: Development), with its
 * `General` group and one API key, shown this once.
 */
export async function createEnvironment(
  deps: Deps,
  tenant: Tenant,
  input: { name: string; parentId?: string | undefined },
  sealer: KeySealer | undefined,
) {
  const name = environmentName(input.name);
  return inTransaction(deps, async (d) => {
    const all = await requireFreeName(d, tenant, name);
    const parentId =
      input.parentId ??
      all.find((e) => e.name === "Development")?.id ??
      all.find((e) => e.parentId === "")?.id ??
      "";
    if (input.parentId !== undefined && !all.some((e) => e.id === input.parentId)) {
      throw invalidField("parentId", `names no environment of the organization (${input.parentId})`);
    }
    const made = await setUpEnvironment(d, { organizationId: tenant.organizationId, name, parentId }, sealer);
    return { environment: await getEnvironment(d, tenant, made.environmentId), apiKey: made.apiKey };
  });
}

/** Renames an environment and/or derives it from another; Development and Production keep their names. */
export async function updateEnvironment(
  deps: Deps,
  tenant: Tenant,
  id: string,
  input: {
    name?: string | undefined;
    parentId?: string | undefined;
    identifier?: string | undefined;
    hmac?: boolean | undefined;
  },
): Promise<Environment> {
  const current = await getEnvironment(deps, tenant, id);
  const name = input.name === undefined ? undefined : environmentName(input.name);
  if (name !== undefined && name !== current.name && DEFAULT_ENVIRONMENTS.includes(current.name)) {
    throw invalidField("name", `of ${current.name} cannot change: its name carries its rules`);
  }
  const all =
    name === undefined ? await listEnvironments(deps, tenant) : await requireFreeName(deps, tenant, name, id);
  if (input.parentId !== undefined && input.parentId !== "") {
    // The new parent must be of the organization, and not the environment itself or one derived from it.
    const byId = new Map(all.map((e) => [e.id, e]));
    if (!byId.has(input.parentId)) {
      throw invalidField("parentId", `names no environment of the organization (${input.parentId})`);
    }
    for (let at = byId.get(input.parentId); at; at = byId.get(at.parentId)) {
      if (at.id === id) throw invalidField("parentId", "would make the environment derive from itself");
    }
  }
  return updateEnvironmentRecord(deps, tenant, id, {
    name,
    parentId: input.parentId,
    identifier: input.identifier,
    hmac: input.hmac,
  });
}

/**
 * Deletes an environment the organization made besides Development and Production, with its keys,
 * groups and layouts. Refused while it holds live workflows or anything else (subscribers, topics, integrations,
 * notifications), or while another environment derives from it.
 */
export async function deleteEnvironment(deps: Deps, tenant: Tenant, id: string): Promise<void> {
  const environment = await getEnvironment(deps, tenant, id);
  if (DEFAULT_ENVIRONMENTS.includes(environment.name)) {
    throw badRequest(
      `${environment.name} cannot be deleted: every organization keeps Development and Production`,
    );
  }
  const all = await listEnvironments(deps, tenant);
  const child = all.find((e) => e.parentId === id);
  if (child) throw badRequest(`Environment ${id} cannot be deleted while ${child.name} derives from it`);
  const holding = () =>
    badRequest(
      `Environment ${id} cannot be deleted while it holds workflows, subscribers, topics, integrations or ` +
        "notifications: delete them first",
    );
  try {
    await inTransaction(deps, async (d) => {
      if ((await listLiveWorkflows(d, id)).length > 0) throw holding();
      await purgeDeletedWorkflows(d, id);
      await deleteEnvironmentGroups(d, id);
      await deleteEnvironmentLayouts(d, id);
      if (!(await deleteEnvironmentRecord(d, tenant, id))) throw notFound(`Environment ${id} was not found`);
    });
  } catch (error) {
    if (isForeignKeyViolation(error)) throw holding();
    throw error;
  }
}

/** The tags of an environment's live workflows. */
export async function getEnvironmentTags(deps: Deps, tenant: Tenant, id: string): Promise<string[]> {
  const environment = await getEnvironment(deps, tenant, id);
  return environmentTags(deps, environment.id);
}

// ---------------------------------------------------------------- promotion

/**
 * The two environments of a promotion: the target, and the source (given, else the target's parent);
 * both of the organization.
 */
async function environmentsOf(deps: Deps, tenant: Tenant, targetId: string, sourceId?: string) {
  const target = await getEnvironment(deps, tenant, targetId);
  const from = sourceId ?? target.parentId;
  if (from === "") {
    throw invalidField(
      "sourceEnvironmentId",
      `is needed: ${target.name} derives from no environment to publish from`,
    );
  }
  const source = await getEnvironment(deps, tenant, from);
  if (source.id === target.id)
    throw invalidField("sourceEnvironmentId", "must not be the target environment");
  return { source, target };
}

/** Keys sorted, so two objects with the same content compare equal whatever their key order. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([k, v]) => [k, canonical(v)]),
    );
  }
  return value;
}

/** What promotion compares of a workflow (draft follows active; triggers follow the steps). */
const COMPARED: (keyof WorkflowContent)[] = [
  "name",
  "description",
  "identifier",
  "active",
  "critical",
  "severity",
  "tags",
  "steps",
  "triggers",
  "preferenceSettings",
  "data",
];

function workflowDifferences(source: Workflow, copy: Workflow): string[] {
  const a = contentOf(source);
  const b = contentOf(copy);
  const fields: string[] = COMPARED.filter(
    (field) => !isDeepStrictEqual(canonical(a[field]), canonical(b[field])),
  );
  if (copy.notificationGroup.parentId !== source.notificationGroupId) fields.push("notificationGroup");
  return fields;
}

/** What promoting `source` into `target` would change: workflows, groups and layouts. */
export async function comparePromotion(
  deps: Deps,
  source: Environment,
  target: Environment,
): Promise<Promotion> {
  // Workflows defined in code reach each environment from its own app's bridge (a sync), not by
  // promotion: they are neither copied nor compared.
  const stored = (list: Workflow[]) => list.filter((workflow) => workflow.origin !== "external");
  const [sourceWorkflows, targetWorkflows, sourceGroups, targetGroups, sourceLayouts, targetLayouts] =
    await Promise.all([
      listLiveWorkflows(deps, source.id).then(stored),
      listLiveWorkflows(deps, target.id).then(stored),
      listGroups(deps, { environmentId: source.id }),
      listGroups(deps, { environmentId: target.id }),
      environmentLayouts(deps, source.id),
      environmentLayouts(deps, target.id),
    ]);

  const workflows: WorkflowChange[] = [];
  const workflowCopies = copiesByParent(targetWorkflows);
  let unchangedWorkflows = 0;
  for (const workflow of sourceWorkflows) {
    const copy = workflowCopies.get(workflow.id);
    if (!copy) {
      workflows.push({
        kind: "workflow",
        action: "added",
        sourceId: workflow.id,
        source: workflow,
        fields: [],
      });
      continue;
    }
    const fields = workflowDifferences(workflow, copy);
    if (fields.length === 0) unchangedWorkflows++;
    else
      workflows.push({
        kind: "workflow",
        action: "modified",
        sourceId: workflow.id,
        source: workflow,
        target: copy,
        fields,
      });
  }
  // A copy whose source is gone: deleted in the source, or removed for good. A copy of a workflow of
  // a third environment is not this promotion's to delete.
  const live = new Set(sourceWorkflows.map((w) => w.id));
  const orphans = [...workflowCopies.values()].filter((copy) => !live.has(copy.parentId));
  const workflowHomes = await workflowEnvironments(
    deps,
    orphans.map((copy) => copy.parentId),
  );
  for (const copy of orphans) {
    const home = workflowHomes.get(copy.parentId);
    if (home === undefined || home === source.id) {
      workflows.push({
        kind: "workflow",
        action: "deleted",
        sourceId: copy.parentId,
        target: copy,
        fields: [],
      });
    }
  }

  const groups: GroupChange[] = [];
  const groupCopies = copiesByParent(targetGroups);
  let unchangedGroups = 0;
  for (const group of sourceGroups) {
    const copy = groupCopies.get(group.id);
    if (!copy)
      groups.push({
        kind: "notification_group",
        action: "added",
        sourceId: group.id,
        source: group,
        fields: [],
      });
    else if (copy.name !== group.name)
      groups.push({
        kind: "notification_group",
        action: "modified",
        sourceId: group.id,
        source: group,
        target: copy,
        fields: ["name"],
      });
    else unchangedGroups++;
  }
  const liveGroups = new Set(sourceGroups.map((g) => g.id));
  const groupOrphans = [...groupCopies.values()].filter((copy) => !liveGroups.has(copy.parentId));
  const groupHomes = await groupEnvironments(
    deps,
    groupOrphans.map((copy) => copy.parentId),
  );
  for (const copy of groupOrphans) {
    if (!groupHomes.has(copy.parentId)) {
      groups.push({
        kind: "notification_group",
        action: "deleted",
        sourceId: copy.parentId,
        target: copy,
        fields: [],
      });
    }
  }
  const { changes: layouts, unchanged: unchangedLayouts } = await compareLayouts(
    deps,
    sourceLayouts,
    targetLayouts,
  );
  return {
    source,
    target,
    workflows,
    groups,
    layouts,
    unchanged: { workflows: unchangedWorkflows, groups: unchangedGroups, layouts: unchangedLayouts },
  };
}

/** The target environment's copies, by the id of the source each was copied from (the first one, if several). */
function copiesByParent<T extends { parentId: string }>(targets: readonly T[]): Map<string, T> {
  const copies = new Map<string, T>();
  for (const copy of targets)
    if (copy.parentId !== "" && !copies.has(copy.parentId)) copies.set(copy.parentId, copy);
  return copies;
}

/**
 * The layout changes: each source layout the target has no copy of (added) or a copy of that
 * differs in what a publish copies (modified), then each copy whose source is gone (deleted; a copy
 * of a layout that lives on in a third environment is not this promotion's).
 */
async function compareLayouts(deps: Deps, sourceLayouts: Layout[], targetLayouts: Layout[]) {
  const changes: LayoutChange[] = [];
  const copies = copiesByParent(targetLayouts);
  let unchanged = 0;
  for (const layout of sourceLayouts) {
    const copy = copies.get(layout.id);
    const fields = copy ? layoutDifferences(layout, copy) : [];
    if (!copy) changes.push({ kind: "layout", action: "added", sourceId: layout.id, source: layout, fields });
    else if (fields.length > 0)
      changes.push({
        kind: "layout",
        action: "modified",
        sourceId: layout.id,
        source: layout,
        target: copy,
        fields,
      });
    else unchanged++;
  }
  const live = new Set(sourceLayouts.map((l) => l.id));
  const orphans = [...copies.values()].filter((copy) => !live.has(copy.parentId));
  const homes = await layoutEnvironments(
    deps,
    orphans.map((copy) => copy.parentId),
  );
  for (const copy of orphans)
    if (!homes.has(copy.parentId))
      changes.push({ kind: "layout", action: "deleted", sourceId: copy.parentId, target: copy, fields: [] });
  return { changes, unchanged };
}

/** What publishing from the source (default: the target's parent) into the target would change. */
export async function diffEnvironments(
  deps: Deps,
  tenant: Tenant,
  targetId: string,
  sourceId?: string,
): Promise<Promotion> {
  const { source, target } = await environmentsOf(deps, tenant, targetId, sourceId);
  return comparePromotion(deps, source, target);
}

export interface PublishInput {
  sourceEnvironmentId?: string | undefined;
  dryRun?: boolean | undefined;
  /** Only these changes, by the source record's id (a deleted one's too); default: all. */
  resourceIds?: string[] | undefined;
}

/** Publishing stops at a record the target cannot take: nothing is published. */
function publishRefused(what: string): ApiError {
  return unprocessable(`Nothing was published: ${what}`);
}

/**
 * Publishes the source's workflows, groups and layouts into the target, in one transaction: every
 * change lands, or (a record the target cannot take, any failure) none does. Added records get
 * copies with their own ids whose `parentId` names their source; modified ones have their copies
 * rewritten; copies whose source is gone are deleted (a group or layout copy that live workflows of
 * the target still use stays, as does a layout copy that would be left the target's default, and is
 * reported skipped). `resourceIds` publishes some changes only, with the groups and the new layouts
 * their workflows need. A dry run answers the same and writes nothing.
 */
export async function publishEnvironment(
  deps: Deps,
  tenant: Tenant,
  targetId: string,
  input: PublishInput,
  references: GroupReferences,
): Promise<PublishResult> {
  const { source, target } = await environmentsOf(deps, tenant, targetId, input.sourceEnvironmentId);
  const dryRun = input.dryRun ?? false;
  return inTransaction(deps, async (d) => {
    // One publish into an environment at a time: the second compares what the first left.
    await lockEnvironment(d, target.id);
    const promotion = await comparePromotion(d, source, target);
    const chosen = chooseChanges(promotion, input.resourceIds);
    const published: Published[] = [];
    const targetTenant: Tenant = { ...tenant, environmentId: target.id };
    // The target's group for a source group: its copy, made earlier in this publish when needed.
    const groupFor = new Map<string, string>();
    for (const group of await listGroups(d, targetTenant))
      if (group.parentId !== "") groupFor.set(group.parentId, group.id);

    for (const change of chosen.filter((c): c is GroupChange => c.kind === "notification_group")) {
      if (change.action === "deleted") continue;
      const group = change.source as NotificationGroup;
      if (change.action === "added") {
        const copy = dryRun ? undefined : await createGroupCopy(d, targetTenant, group.name, group.id);
        if (!dryRun && !copy) {
          throw publishRefused(
            `${target.name} has a group named "${group.name}" that was not published from ${source.name}`,
          );
        }
        if (copy) groupFor.set(group.id, copy.id);
        published.push({ change, outcome: "created", ...(copy ? { targetId: copy.id } : {}) });
      } else {
        const copy = change.target as NotificationGroup;
        if (!dryRun) {
          try {
            await renameGroup(d, targetTenant, copy.id, group.name);
          } catch (error) {
            if (error instanceof ApiError && error.statusCode === 409) {
              throw publishRefused(`${target.name} has another group named "${group.name}"`);
            }
            throw error;
          }
        }
        published.push({ change, outcome: "updated", targetId: copy.id });
      }
    }

    // Layouts before the workflows whose steps name them (a promoted step names the source's
    // layout, and the target's copy answers for it); the copies to delete first, so that a new
    // layout may take the identifier of one that is gone. Whether a copy is still used is judged
    // on the target as this publish leaves it, so a dry run answers as the publish would.
    const layoutChanges = chosen.filter((c): c is LayoutChange => c.kind === "layout");
    const keep = await layoutsKeptBy(d, target, chosen, layoutChanges);
    for (const change of layoutChanges) {
      if (change.action !== "deleted") continue;
      const copy = change.target as Layout;
      const reason = keep(copy);
      if (reason) published.push({ change, outcome: "skipped", reason, targetId: copy.id });
      else {
        if (!dryRun) await deleteLayoutCopy(d, target.id, copy.id);
        published.push({ change, outcome: "deleted", targetId: copy.id });
      }
    }
    for (const change of layoutChanges) {
      if (change.action === "deleted") continue;
      const layout = change.source as Layout;
      const held = () =>
        publishRefused(`${target.name} has another layout of identifier "${layout.identifier}"`);
      if (change.action === "added") {
        const copy = dryRun ? undefined : await insertLayoutCopy(d, targetTenant, layout);
        if (!dryRun && !copy) throw held();
        published.push({ change, outcome: "created", ...(copy ? { targetId: copy.id } : {}) });
      } else {
        const copy = change.target as Layout;
        if (!dryRun && !(await replaceLayoutCopy(d, targetTenant, copy.id, layout))) throw held();
        published.push({ change, outcome: "updated", targetId: copy.id });
      }
    }

    for (const change of chosen.filter((c): c is WorkflowChange => c.kind === "workflow")) {
      if (change.action === "deleted") {
        const copy = change.target as Workflow;
        if (!dryRun) await deleteWorkflow(d, targetTenant, copy.id);
        published.push({ change, outcome: "deleted", targetId: copy.id });
        continue;
      }
      const workflow = change.source as Workflow;
      const groupId = groupFor.get(workflow.notificationGroupId) ?? (dryRun ? "" : undefined);
      if (groupId === undefined)
        throw new Error(`no copy of group ${workflow.notificationGroupId} in ${target.id}`);
      const taken = () =>
        publishRefused(
          `workflow "${workflow.name}": its trigger identifier ${workflow.identifier} is held in ${target.name} ` +
            `by a workflow that was not published from ${source.name}`,
        );
      if (change.action === "added") {
        const copy = dryRun
          ? undefined
          : await insertWorkflowCopy(d, targetTenant, contentOf(workflow), groupId, workflow.id);
        if (!dryRun && !copy) throw taken();
        published.push({ change, outcome: "created", ...(copy ? { targetId: copy.id } : {}) });
      } else {
        const copy = change.target as Workflow;
        if (!dryRun) {
          try {
            await replaceWorkflowCopy(d, target.id, copy.id, contentOf(workflow), groupId);
          } catch (error) {
            if (isUniqueViolation(error)) throw taken();
            throw error;
          }
        }
        published.push({ change, outcome: "updated", targetId: copy.id });
      }
    }

    // Group copies go last, once the workflows that used them have moved or gone.
    for (const change of chosen.filter((c): c is GroupChange => c.kind === "notification_group")) {
      if (change.action !== "deleted") continue;
      const copy = change.target as NotificationGroup;
      const outcome = dryRun ? "deleted" : await removeGroupIn(d, targetTenant, copy.id, references);
      if (outcome === "in use") {
        published.push({
          change,
          outcome: "skipped",
          reason: `workflows of ${target.name} still use it`,
          targetId: copy.id,
        });
      } else published.push({ change, outcome: "deleted", targetId: copy.id });
    }
    return { promotion, published, dryRun };
  });
}

/**
 * Why a layout copy whose source is gone must stay, judged on the target as the publish leaves it
 * (its live workflows without those it deletes, those it rewrites as they will be, those it adds):
 * a step names it (its id, or its source's that promoted steps name), or it would be left the
 * target's default (no chosen change makes another layout the default). Undefined: it may go.
 */
async function layoutsKeptBy(
  deps: Deps,
  target: Environment,
  chosen: Change[],
  layoutChanges: LayoutChange[],
): Promise<(copy: Layout) => string | undefined> {
  if (!layoutChanges.some((c) => c.action === "deleted")) return () => undefined;
  const workflowChanges = chosen.filter((c): c is WorkflowChange => c.kind === "workflow");
  const gone = new Set(workflowChanges.filter((c) => c.action === "deleted").map((c) => c.target?.id));
  const rewritten = new Map(
    workflowChanges.filter((c) => c.action === "modified").map((c) => [c.target?.id, c.source as Workflow]),
  );
  const after = [
    ...(await listLiveWorkflows(deps, target.id))
      .filter((w) => !gone.has(w.id))
      .map((w) => rewritten.get(w.id) ?? w),
    ...workflowChanges.filter((c) => c.action === "added").map((c) => c.source as Workflow),
  ];
  const named = new Set(after.flatMap(layoutsNamedBy));
  const newDefault = layoutChanges.some((c) => c.action !== "deleted" && c.source?.isDefault === true);
  return (copy) => {
    if (named.has(copy.id) || named.has(copy.parentId)) return `workflows of ${target.name} still use it`;
    if (copy.isDefault && !newDefault) return `it is the default layout of ${target.name}`;
    return undefined;
  };
}

/** Whether a layout change moves the default: it brings a new default, or takes it from a copy. */
const takesDefault = (c: LayoutChange) =>
  c.action === "deleted"
    ? c.target?.isDefault === true
    : c.fields.includes("isDefault") && !c.source?.isDefault;
const bringsDefault = (c: LayoutChange) =>
  c.source?.isDefault === true && (c.action === "added" || c.fields.includes("isDefault"));

/**
 * The changes to publish: all, or those named (by the source record's id) with what they need in
 * the target: an added or modified workflow's group when the target has none yet, and the layouts
 * its steps name that the target has none of yet; a layout that stops being the default (or goes
 * while it is) brings the one that becomes it, so the target is not left without one. A name that
 * is no pending change: 404.
 */
function chooseChanges(promotion: Promotion, ids: string[] | undefined): Change[] {
  const all: Change[] = [...promotion.groups, ...promotion.layouts, ...promotion.workflows];
  if (ids === undefined) return all;
  const wanted = new Set(ids);
  const unknown = ids.find((id) => !all.some((c) => c.sourceId === id));
  if (unknown !== undefined) throw changeNotFound(unknown);
  for (const change of promotion.workflows) {
    if (!wanted.has(change.sourceId) || change.action === "deleted") continue;
    const workflow = change.source as Workflow;
    const needed = promotion.groups.find(
      (g) => g.action === "added" && g.sourceId === workflow.notificationGroupId,
    );
    if (needed) wanted.add(needed.sourceId);
    const names = new Set(layoutsNamedBy(workflow));
    for (const layout of promotion.layouts)
      if (
        layout.action === "added" &&
        (names.has(layout.sourceId) || names.has(layout.source?.parentId ?? ""))
      )
        wanted.add(layout.sourceId);
  }
  if (promotion.layouts.some((c) => wanted.has(c.sourceId) && takesDefault(c)))
    for (const change of promotion.layouts) if (bringsDefault(change)) wanted.add(change.sourceId);
  return all.filter((change) => wanted.has(change.sourceId));
}

export const changeNotFound = (id: string) => notFound(`Change ${id} was not found`);

// ---------------------------------------------------------------- Novu's v1 change list

/**
 * The key's environment's pending changes toward the environment that derives from it (Development's
 * toward Production): the promotion seen as Novu's v1 change list. An environment nothing derives
 * from has none.
 */
export async function pendingChanges(deps: Deps, tenant: Tenant): Promise<Promotion | undefined> {
  const { source, child } = await changeTarget(deps, tenant);
  return source && child ? comparePromotion(deps, source, child) : undefined;
}

/** The key's environment, and the one its changes go to: Production when it derives from it, else the oldest. */
async function changeTarget(deps: Deps, tenant: Tenant) {
  const all = await listEnvironments(deps, tenant);
  const children = all.filter((e) => e.parentId === tenant.environmentId);
  return {
    source: all.find((e) => e.id === tenant.environmentId),
    child: children.find((e) => e.name === "Production") ?? children[0],
  };
}

/** Applies pending changes by id (Novu's `POST /v1/changes/:id/apply` and `/bulk/apply`). */
export async function applyChanges(
  deps: Deps,
  tenant: Tenant,
  changeIds: string[],
  references: GroupReferences,
): Promise<PublishResult> {
  const { child } = await changeTarget(deps, tenant);
  const [first] = changeIds;
  if (!child) throw changeNotFound(first ?? "");
  return publishEnvironment(
    deps,
    tenant,
    child.id,
    { sourceEnvironmentId: tenant.environmentId, resourceIds: changeIds },
    references,
  );
}
