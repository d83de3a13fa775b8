import type { PreferenceSettings } from "../workflows/domain.ts";

/**
 * A workflow override (Novu's): for one workflow and one tenant (Novu's, by its _id), whether the
 * workflow runs for that tenant's triggers (`active`: false stops it there) and the channel
 * defaults that replace the workflow's for them (before each subscriber's own preferences).
 */
export interface WorkflowOverride {
  id: string;
  organizationId: string;
  environmentId: string;
  workflowId: string;
  tenantId: string;
  active: boolean;
  preferenceSettings: PreferenceSettings;
  createdAt: string;
  updatedAt: string;
}
