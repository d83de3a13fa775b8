import { type Integration, maskedCredentials } from "./domain.ts";
import type { IntegrationResourceValue } from "./schemas.ts";

/** An integration as Novu's API shows it, every secret credential masked. */
export function presentIntegration(integration: Integration): IntegrationResourceValue {
  return {
    _id: integration.id,
    _environmentId: integration.environmentId,
    _organizationId: integration.organizationId,
    providerId: integration.providerId,
    channel: integration.channel,
    name: integration.name,
    identifier: integration.identifier,
    credentials: maskedCredentials(integration.credentials ?? {}),
    active: integration.active,
    primary: integration.primary,
    priority: integration.primary ? 1 : 0,
    conditions: integration.conditions as Record<string, unknown>[],
    deleted: false,
    deletedAt: "",
    deletedBy: "",
    createdAt: integration.createdAt,
    updatedAt: integration.updatedAt,
  };
}
