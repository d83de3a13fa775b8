import { maskedKey } from "./api-keys.ts";
import type { Environment } from "./domain.ts";
import type { ApiKeyValue, EnvironmentValue } from "./schemas.ts";

export function presentEnvironment(environment: Environment): EnvironmentValue {
  return {
    _id: environment.id,
    name: environment.name,
    identifier: environment.identifier,
    _organizationId: environment.organizationId,
    _parentId: environment.parentId,
    hmac: environment.hmac,
    createdAt: environment.createdAt,
    updatedAt: environment.updatedAt,
  };
}

export function presentApiKey(key: {
  id: string;
  organizationId: string;
  environmentId: string;
  createdAt: string;
  /** The whole key (just made), or a listing's hint. */
  key?: string;
  hint?: string;
}): ApiKeyValue {
  return {
    _id: key.id,
    key: key.key ?? maskedKey(key.hint ?? ""),
    _userId: "",
    _environmentId: key.environmentId,
    _organizationId: key.organizationId,
    createdAt: key.createdAt,
  };
}
