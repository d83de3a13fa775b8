import type { Layout } from "../layouts/domain.ts";
import type { NotificationGroup } from "../notification-groups/domain.ts";
import type { Workflow } from "../workflows/domain.ts";
import { contentOf } from "../workflows/service.ts";
import type { Change, LayoutChange, Promotion, PublishResult } from "./domain.ts";
import type { ChangeValue, EnvironmentDiffValue, PublishResultValue } from "./schemas.ts";

type Record_ = Workflow | NotificationGroup | Layout;

const ref = (record: Record_ | undefined) =>
  record ? { id: record.id, name: record.name, updatedAt: record.updatedAt } : null;

/** What a change's fields hold in a record: the workflow's content, the group's name, the layout's fields. */
function fieldsOf(record: Record_ | undefined, fields: string[], kind: Change["kind"]) {
  if (!record) return null;
  if (kind === "notification_group") return { name: record.name };
  if (kind === "layout") {
    const layout = record as Layout;
    const shown = (fields.length > 0 ? fields : ["name", "identifier", "isDefault"]) as (keyof Layout)[];
    return Object.fromEntries(shown.map((field) => [field, layout[field]]));
  }
  const workflow = record as Workflow;
  const content = contentOf(workflow) as Record<string, unknown>;
  const shown = fields.length > 0 ? fields : ["name", "identifier", "active"];
  return Object.fromEntries(
    shown.map((field) => [
      field,
      field === "notificationGroup" ? workflow.notificationGroup.name : content[field],
    ]),
  );
}

/**
 * Each kind's `resourceType`: REGULAR for a workflow (what @novu/api 3.19's enum accepts), `layout`
 * for a layout (Novu's own value, in a list of ours the SDK does not read); none for a group.
 */
const WORKFLOW = { resourceType: "REGULAR" as const };
const GROUP = {};
const LAYOUT = { resourceType: "layout" as const };
type ResourceType = typeof WORKFLOW | typeof GROUP | typeof LAYOUT;

function presentChange<R extends ResourceType>(change: Change, resourceType: R) {
  const entry = {
    action: change.action,
    sourceResource: ref(change.source),
    targetResource: ref(change.target),
    diffs: {
      previous: fieldsOf(change.target, change.fields, change.kind),
      new: fieldsOf(change.source, change.fields, change.kind),
    },
  };
  return {
    ...resourceType,
    resourceId: change.sourceId,
    action: change.action,
    sourceResource: entry.sourceResource,
    targetResource: entry.targetResource,
    changes: [{ ...resourceType, ...entry }],
    summary: {
      added: change.action === "added" ? 1 : 0,
      modified: change.action === "modified" ? 1 : 0,
      deleted: change.action === "deleted" ? 1 : 0,
      unchanged: 0,
    },
  };
}

/** How many changes a promotion holds, of every kind. */
export const changeCount = (promotion: Promotion) =>
  promotion.workflows.length + promotion.groups.length + promotion.layouts.length;

/** A promotion as Novu's `POST /v2/environments/:id/diff` answers, with the groups and layouts beside. */
export function presentDiff(promotion: Promotion): EnvironmentDiffValue {
  const changes = changeCount(promotion);
  const { unchanged } = promotion;
  return {
    sourceEnvironmentId: promotion.source.id,
    targetEnvironmentId: promotion.target.id,
    resources: promotion.workflows.map((change) => presentChange(change, WORKFLOW)),
    notificationGroups: promotion.groups.map((change) => presentChange(change, GROUP)),
    layouts: promotion.layouts.map((change) => presentChange(change, LAYOUT)),
    summary: {
      totalEntities: changes + unchanged.workflows + unchanged.groups + unchanged.layouts,
      totalChanges: changes,
      hasChanges: changes > 0,
    },
  };
}

/** A publish as Novu's `POST /v2/environments/:id/publish` answers, with the groups and layouts beside. */
export function presentPublish(result: PublishResult): PublishResultValue {
  const part = <R extends ResourceType>(kind: Change["kind"], resourceType: R) => {
    const done = result.published.filter((p) => p.change.kind === kind);
    const nameOf = (change: Change) => (change.source ?? change.target)?.name ?? "";
    return {
      ...resourceType,
      successful: done
        .filter((p) => p.outcome !== "skipped")
        .map((p) => ({
          ...resourceType,
          resourceId: p.change.sourceId,
          ...(p.targetId ? { targetResourceId: p.targetId } : {}),
          resourceName: nameOf(p.change),
          action: p.outcome as "created" | "updated" | "deleted",
        })),
      failed: [],
      skipped: done
        .filter((p) => p.outcome === "skipped")
        .map((p) => ({
          ...resourceType,
          resourceId: p.change.sourceId,
          resourceName: nameOf(p.change),
          reason: p.reason ?? "",
        })),
      totalProcessed: done.length,
    };
  };
  const workflows = part("workflow", WORKFLOW);
  const groups = part("notification_group", GROUP);
  const layouts = part("layout", LAYOUT);
  const skipped = workflows.skipped.length + groups.skipped.length + layouts.skipped.length;
  return {
    results: [workflows],
    notificationGroups: groups,
    layouts,
    summary: {
      resources: result.published.length,
      successful: result.published.length - skipped,
      failed: 0,
      skipped,
    },
    dryRun: result.dryRun,
  };
}

/** Novu's v1 change types: a layout change that moves the default is Novu's `DefaultLayout`. */
function typeV1(change: Change): ChangeValue["type"] {
  if (change.kind === "workflow") return "NotificationTemplate";
  if (change.kind === "notification_group") return "NotificationGroup";
  return movesDefault(change) ? "DefaultLayout" : "Layout";
}

/** Whether a layout change makes a layout the default or stops it being one. */
const movesDefault = (change: LayoutChange) =>
  change.action === "added" ? change.source?.isDefault === true : change.fields.includes("isDefault");

/** A pending change as Novu's v1 change list shows it. */
export function presentChangeV1(promotion: Promotion, change: Change, applied = false): ChangeValue {
  const record = change.source ?? change.target;
  const creator =
    change.kind === "notification_group" ? "" : (change.source?.creatorId ?? change.target?.creatorId ?? "");
  const when =
    change.action === "deleted"
      ? (change.target?.updatedAt ?? record?.updatedAt ?? "")
      : (change.source?.updatedAt ?? "");
  return {
    _id: change.sourceId,
    _entityId: change.sourceId,
    _environmentId: promotion.source.id,
    _organizationId: promotion.source.organizationId,
    _creatorId: creator,
    _parentId: "",
    type: typeV1(change),
    enabled: applied,
    change: { action: change.action, name: record?.name ?? "", fields: change.fields },
    createdAt: when,
  };
}
