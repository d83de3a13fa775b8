import type { NotificationGroup } from "../notification-groups/domain.ts";
import type { Workflow } from "../workflows/domain.ts";
import { contentOf } from "../workflows/service.ts";
import type { Change, Promotion, PublishResult } from "./domain.ts";
import type { ChangeValue, EnvironmentDiffValue, PublishResultValue } from "./schemas.ts";

type Record_ = Workflow | NotificationGroup;

const ref = (record: Record_ | undefined) =>
  record ? { id: record.id, name: record.name, updatedAt: record.updatedAt } : null;

/** What a change's fields hold in a record: the workflow's content, or the group's name. */
function fieldsOf(record: Record_ | undefined, fields: string[], kind: Change["kind"]) {
  if (!record) return null;
  if (kind === "notification_group") return { name: record.name };
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

function presentChange(change: Change) {
  const entry = {
    action: change.action,
    sourceResource: ref(change.source),
    targetResource: ref(change.target),
    diffs: {
      previous: fieldsOf(change.target, change.fields, change.kind),
      new: fieldsOf(change.source, change.fields, change.kind),
    },
  };
  const workflow = change.kind === "workflow";
  return {
    ...(workflow ? { resourceType: "REGULAR" as const } : {}),
    resourceId: change.sourceId,
    action: change.action,
    sourceResource: entry.sourceResource,
    targetResource: entry.targetResource,
    changes: [{ ...(workflow ? { resourceType: "REGULAR" as const } : {}), ...entry }],
    summary: {
      added: change.action === "added" ? 1 : 0,
      modified: change.action === "modified" ? 1 : 0,
      deleted: change.action === "deleted" ? 1 : 0,
      unchanged: 0,
    },
  };
}

/** A promotion as Novu's `POST /v2/environments/:id/diff` answers, with the groups beside. */
export function presentDiff(promotion: Promotion): EnvironmentDiffValue {
  const changes = promotion.workflows.length + promotion.groups.length;
  return {
    sourceEnvironmentId: promotion.source.id,
    targetEnvironmentId: promotion.target.id,
    resources: promotion.workflows.map(presentChange),
    notificationGroups: promotion.groups.map(presentChange),
    summary: {
      totalEntities: changes + promotion.unchanged.workflows + promotion.unchanged.groups,
      totalChanges: changes,
      hasChanges: changes > 0,
    },
  };
}

/** A publish as Novu's `POST /v2/environments/:id/publish` answers, with the groups beside. */
export function presentPublish(result: PublishResult): PublishResultValue {
  const part = (kind: Change["kind"]) => {
    const done = result.published.filter((p) => p.change.kind === kind);
    const resourceType = kind === "workflow" ? { resourceType: "REGULAR" as const } : {};
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
  const workflows = { ...part("workflow"), resourceType: "REGULAR" as const };
  const groups = part("notification_group");
  const skipped = workflows.skipped.length + groups.skipped.length;
  return {
    results: [workflows],
    notificationGroups: groups,
    summary: {
      resources: result.published.length,
      successful: result.published.length - skipped,
      failed: 0,
      skipped,
    },
    dryRun: result.dryRun,
  };
}

/** A pending change as Novu's v1 change list shows it. */
export function presentChangeV1(promotion: Promotion, change: Change, applied = false): ChangeValue {
  const record = change.source ?? change.target;
  const creator =
    change.kind === "workflow" ? (change.source?.creatorId ?? change.target?.creatorId ?? "") : "";
  const when =
    change.action === "deleted"
      ? ((change.target as Workflow | undefined)?.updatedAt ?? record?.updatedAt ?? "")
      : (change.source?.updatedAt ?? "");
  return {
    _id: change.sourceId,
    _entityId: change.sourceId,
    _environmentId: promotion.source.id,
    _organizationId: promotion.source.organizationId,
    _creatorId: creator,
    _parentId: "",
    type: change.kind === "workflow" ? "NotificationTemplate" : "NotificationGroup",
    enabled: applied,
    change: { action: change.action, name: record?.name ?? "", fields: change.fields },
    createdAt: when,
  };
}
