import { isoNow } from "../clock.ts";
import type { Deps } from "../deps.ts";
import { conflict, mention, notFound } from "../errors.ts";
import { newObjectId } from "../ids.ts";
import { isUniqueViolation } from "../store/store.ts";
import type { Tenant } from "../tenancy/tenant.ts";
import type { TenantRecord } from "./domain.ts";
import * as tenants from "./repository.ts";

export { type TenantRecord, tenantForTemplates } from "./domain.ts";

export interface TenantInput {
  identifier: string;
  name?: string | undefined;
  data?: Record<string, unknown> | undefined;
}

const missing = (identifier: string) =>
  notFound(`Tenant ${mention(identifier, "with this identifier")} was not found`);
const taken = (identifier: string, tenant: Tenant) =>
  conflict(
    `Tenant with identifier: ${mention(identifier, "given")} already exists under environment ${tenant.environmentId}`,
  );

export async function createTenant(deps: Deps, tenant: Tenant, input: TenantInput): Promise<TenantRecord> {
  const now = isoNow(deps.clock);
  const created = await tenants.insertTenant(deps.db, {
    id: newObjectId(deps.clock.now()),
    organizationId: tenant.organizationId,
    environmentId: tenant.environmentId,
    identifier: input.identifier,
    name: input.name ?? "",
    data: input.data ?? {},
    createdAt: now,
    updatedAt: now,
  });
  if (!created) throw taken(input.identifier, tenant);
  return created;
}

export async function getTenant(deps: Deps, tenant: Tenant, identifier: string): Promise<TenantRecord> {
  const found = await tenants.findTenant(deps.db, tenant.environmentId, identifier);
  if (!found) throw missing(identifier);
  return found;
}

/** The environment's tenant of this id (not identifier), or undefined. */
export function findTenantById(deps: Deps, tenant: Tenant, id: string): Promise<TenantRecord | undefined> {
  return tenants.findTenantById(deps.db, tenant.environmentId, id);
}

/** The environment's tenant of this identifier, or undefined. */
export function findTenant(
  deps: Deps,
  tenant: Tenant,
  identifier: string,
): Promise<TenantRecord | undefined> {
  return tenants.findTenant(deps.db, tenant.environmentId, identifier);
}

export async function listTenants(
  deps: Deps,
  tenant: Tenant,
  input: { page?: number | undefined; limit?: number | undefined },
) {
  const page = input.page ?? 0;
  const limit = input.limit ?? 10;
  const { totalCount, tenants: data } = await tenants.listTenants(deps.db, tenant.environmentId, {
    offset: page * limit,
    limit,
  });
  return { page, pageSize: limit, totalCount, hasMore: (page + 1) * limit < totalCount, data };
}

export async function updateTenant(
  deps: Deps,
  tenant: Tenant,
  identifier: string,
  changes: Partial<TenantInput>,
): Promise<TenantRecord> {
  try {
    const updated = await tenants.updateTenant(
      deps.db,
      tenant.environmentId,
      identifier,
      changes,
      isoNow(deps.clock),
    );
    if (!updated) throw missing(identifier);
    return updated;
  } catch (error) {
    if (isUniqueViolation(error)) throw taken(changes.identifier ?? identifier, tenant);
    throw error;
  }
}

export async function deleteTenant(deps: Deps, tenant: Tenant, identifier: string): Promise<void> {
  if (!(await tenants.deleteTenant(deps.db, tenant.environmentId, identifier))) throw missing(identifier);
}

/**
 * The tenant a trigger names: an identifier must name one of the environment's (undefined when it
 * does not: the trigger answers `no_tenant_found`, as Novu's does); an object creates the tenant
 * or updates the name and data it sends. In the trigger's transaction.
 */
export async function tenantOfTrigger(
  deps: Deps,
  tenant: Tenant,
  ref: string | TenantInput,
): Promise<TenantRecord | undefined> {
  if (typeof ref === "string") return tenants.findTenant(deps.db, tenant.environmentId, ref);
  const changes = {
    ...(ref.name !== undefined ? { name: ref.name } : {}),
    ...(ref.data !== undefined ? { data: ref.data } : {}),
  };
  for (let attempt = 0; attempt < 2; attempt++) {
    const found = await tenants.findTenant(deps.db, tenant.environmentId, ref.identifier);
    if (found) {
      if (Object.keys(changes).length === 0) return found;
      return (
        (await tenants.updateTenant(
          deps.db,
          tenant.environmentId,
          ref.identifier,
          changes,
          isoNow(deps.clock),
        )) ?? found
      );
    }
    const now = isoNow(deps.clock);
    const created = await tenants.insertTenant(deps.db, {
      id: newObjectId(deps.clock.now()),
      organizationId: tenant.organizationId,
      environmentId: tenant.environmentId,
      identifier: ref.identifier,
      name: ref.name ?? "",
      data: ref.data ?? {},
      createdAt: now,
      updatedAt: now,
    });
    if (created) return created;
    // Another trigger created it meanwhile: update that one.
  }
  return tenants.findTenant(deps.db, tenant.environmentId, ref.identifier);
}
