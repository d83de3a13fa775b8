import type { TenantRecord } from "./domain.ts";

export function presentTenant(tenant: TenantRecord) {
  return {
    _id: tenant.id,
    identifier: tenant.identifier,
    name: tenant.name,
    data: tenant.data,
    _environmentId: tenant.environmentId,
    _organizationId: tenant.organizationId,
    createdAt: tenant.createdAt,
    updatedAt: tenant.updatedAt,
  };
}
