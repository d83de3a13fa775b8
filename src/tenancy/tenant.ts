// The request's Tenant lives beside the infrastructure that sets it (src/tenant.ts); features
// name it through tenancy, the feature it belongs to.
export type { Tenant } from "../tenant.ts";
