import type { WorkflowOverride } from "./domain.ts";

export function presentOverride(o: WorkflowOverride) {
  return {
    _id: o.id,
    _organizationId: o.organizationId,
    _environmentId: o.environmentId,
    _workflowId: o.workflowId,
    _tenantId: o.tenantId,
    active: o.active,
    preferenceSettings: o.preferenceSettings,
    deleted: false,
    createdAt: o.createdAt,
    updatedAt: o.updatedAt,
  };
}
