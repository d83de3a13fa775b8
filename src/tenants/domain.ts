/**
 * A tenant (Novu's): one of the customer organizations an environment serves, named by an
 * identifier unique in the environment. A trigger that names it gives its templates `{{tenant.*}}`
 * and its conditions `on: tenant`. (Not the API key's organization and environment, which the code
 * calls the request's Tenant: src/tenancy/tenant.ts.)
 */
export interface TenantRecord {
  id: string;
  organizationId: string;
  environmentId: string;
  identifier: string;
  name: string;
  data: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
}

/** What a trigger's templates and conditions see of its tenant, and what its notifications keep. */
export function tenantForTemplates(tenant: TenantRecord): Record<string, unknown> {
  return {
    _id: tenant.id,
    identifier: tenant.identifier,
    name: tenant.name,
    data: tenant.data,
    createdAt: tenant.createdAt,
    updatedAt: tenant.updatedAt,
  };
}
