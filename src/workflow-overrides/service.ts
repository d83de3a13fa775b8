import { isoNow } from "../clock.ts";
import { type Deps, inTransaction } from "../deps.ts";
import { conflict, mention, notFound } from "../errors.ts";
import { newObjectId } from "../ids.ts";
import type { Tenant } from "../tenancy/tenant.ts";
import { findTenant, findTenantById } from "../tenants/service.ts";
import type { PreferenceSettings, RunnableWorkflow } from "../workflows/domain.ts";
import { getWorkflow, preferenceSettings } from "../workflows/service.ts";
import type { WorkflowOverride } from "./domain.ts";
import * as overrides from "./repository.ts";

export type { WorkflowOverride } from "./domain.ts";

export interface OverrideChanges {
  active?: boolean | undefined;
  preferenceSettings?: Partial<PreferenceSettings> | undefined;
}

const missing = (id: string) => notFound(`Workflow Override with id ${mention(id, "given")} not found`);
const missingPair = (workflowId: string, tenantId: string) =>
  notFound(
    `Workflow Override with workflow id ${mention(workflowId, "given")}, tenant id ${mention(tenantId, "given")} not found`,
  );

/** The environment's workflow (by _id or trigger identifier) and tenant (by _id): 404 for either missing. */
async function pairOf(deps: Deps, tenant: Tenant, workflowRef: string, tenantId: string) {
  const workflow = await getWorkflow(deps, tenant, workflowRef);
  const owner = await findTenantById(deps, tenant, tenantId);
  if (!owner) throw notFound(`Tenant with id ${mention(tenantId, "given")} is not found`);
  return { workflowId: workflow.id, tenantId: owner.id };
}

export async function createOverride(
  deps: Deps,
  tenant: Tenant,
  input: OverrideChanges & { workflowId: string; tenantId: string },
): Promise<WorkflowOverride> {
  const pair = await pairOf(deps, tenant, input.workflowId, input.tenantId);
  const now = isoNow(deps.clock);
  const created = await overrides.insertOverride(deps.db, {
    id: newObjectId(deps.clock.now()),
    organizationId: tenant.organizationId,
    environmentId: tenant.environmentId,
    ...pair,
    active: input.active ?? true,
    preferenceSettings: preferenceSettings(input.preferenceSettings),
    createdAt: now,
    updatedAt: now,
  });
  if (!created) throw conflict("The workflow already has an override for this tenant: change it with PUT");
  return created;
}

export async function getOverride(deps: Deps, tenant: Tenant, id: string): Promise<WorkflowOverride> {
  const found = await overrides.findOverride(deps.db, tenant.environmentId, { id });
  if (!found) throw missing(id);
  return found;
}

export async function getOverrideOf(
  deps: Deps,
  tenant: Tenant,
  workflowRef: string,
  tenantId: string,
): Promise<WorkflowOverride> {
  const pair = await pairOf(deps, tenant, workflowRef, tenantId);
  const found = await overrides.findOverride(deps.db, tenant.environmentId, pair);
  if (!found) throw missingPair(workflowRef, tenantId);
  return found;
}

/** Changes what is sent: `active`, and the channels `preferenceSettings` names (the others stay). */
async function change(deps: Deps, tenant: Tenant, current: WorkflowOverride, input: OverrideChanges) {
  const updated = await overrides.updateOverride(
    deps.db,
    tenant.environmentId,
    current.id,
    {
      active: input.active ?? current.active,
      preferenceSettings: preferenceSettings(input.preferenceSettings, current.preferenceSettings),
    },
    isoNow(deps.clock),
  );
  if (!updated) throw missing(current.id);
  return updated;
}

export async function updateOverride(deps: Deps, tenant: Tenant, id: string, input: OverrideChanges) {
  return inTransaction(deps, async (d) => change(d, tenant, await getOverride(d, tenant, id), input));
}

export async function updateOverrideOf(
  deps: Deps,
  tenant: Tenant,
  workflowRef: string,
  tenantId: string,
  input: OverrideChanges,
) {
  return inTransaction(deps, async (d) =>
    change(d, tenant, await getOverrideOf(d, tenant, workflowRef, tenantId), input),
  );
}

export async function deleteOverride(deps: Deps, tenant: Tenant, id: string): Promise<void> {
  if (!(await overrides.deleteOverride(deps.db, tenant.environmentId, id))) throw missing(id);
}

export async function listOverrides(
  deps: Deps,
  tenant: Tenant,
  input: { page?: number | undefined; limit?: number | undefined },
) {
  const page = input.page ?? 0;
  const limit = input.limit ?? 10;
  const { totalCount, overrides: data } = await overrides.listOverrides(deps.db, tenant.environmentId, {
    offset: page * limit,
    limit,
  });
  return { page, pageSize: limit, totalCount, hasMore: (page + 1) * limit < totalCount, data };
}

/**
 * The workflow as a trigger for this tenant (by identifier) runs it: with its override, inactive
 * when the override says so, and with the override's channel defaults; as it is without one.
 */
export async function workflowForTenant<
  W extends Pick<RunnableWorkflow, "id" | "active" | "preferenceSettings">,
>(deps: Deps, tenant: Tenant, workflow: W, tenantIdentifier: string | undefined): Promise<W> {
  if (tenantIdentifier === undefined) return workflow;
  const owner = await findTenant(deps, tenant, tenantIdentifier);
  if (!owner) return workflow;
  const override = await overrides.findOverride(deps.db, tenant.environmentId, {
    workflowId: workflow.id,
    tenantId: owner.id,
  });
  if (!override) return workflow;
  return {
    ...workflow,
    active: workflow.active && override.active,
    preferenceSettings: override.preferenceSettings,
  };
}
