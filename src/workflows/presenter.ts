import { presentGroup } from "../notification-groups/presenter.ts";
import type { Workflow } from "./domain.ts";
import type { WorkflowResource } from "./schemas.ts";

/**
 * A workflow as Novu's API shows it: every field the seed lists, empty values of their type where
 * there is nothing ("" for a live workflow's deletedAt, never null), the group populated.
 */
export function presentWorkflow(workflow: Workflow): WorkflowResource {
  return {
    _id: workflow.id,
    name: workflow.name,
    description: workflow.description,
    active: workflow.active,
    draft: workflow.draft,
    preferenceSettings: workflow.preferenceSettings,
    critical: workflow.critical,
    severity: workflow.severity,
    tags: workflow.tags,
    steps: workflow.steps,
    _organizationId: workflow.organizationId,
    _creatorId: workflow.creatorId,
    _environmentId: workflow.environmentId,
    triggers: workflow.triggers,
    _notificationGroupId: workflow.notificationGroupId,
    _parentId: workflow.parentId,
    deleted: workflow.deleted,
    deletedAt: workflow.deletedAt ?? "",
    deletedBy: workflow.deletedBy,
    notificationGroup: presentGroup(workflow.notificationGroup),
    data: workflow.data,
    workflowIntegrationStatus: workflow.workflowIntegrationStatus,
    ...(workflow.origin === "external" ? { origin: "external" } : {}),
    ...(workflow.payloadSchema ? { payloadSchema: workflow.payloadSchema } : {}),
    createdAt: workflow.createdAt,
    updatedAt: workflow.updatedAt,
  };
}

// The same workflow in Novu's v2 shape (presenter-v2.ts), for the features that answer with it.
export { presentWorkflowV2 } from "./presenter-v2.ts";
