import { Type } from "typebox";
import { Envelope, FreeObject, ObjectIdString, Page } from "../http/schema-helpers.ts";
import { SUBSCRIBER_ID_TEXT_PATTERN } from "../http/validation.ts";

/** 1–128 characters, not blank, no control characters (as a subscriberId). */
export const TenantIdentifier = (description = "The tenant's identifier, unique in the environment") =>
  Type.String({ pattern: SUBSCRIBER_ID_TEXT_PATTERN, maxLength: 128, description });

const TenantName = Type.String({ maxLength: 200, description: "The tenant's name" });
const TenantData = FreeObject("Free data, which templates read as {{tenant.data.*}}");

export const TenantResource = Type.Object(
  {
    _id: ObjectIdString("The tenant's id"),
    identifier: Type.String(),
    name: Type.String(),
    data: FreeObject(),
    _environmentId: ObjectIdString("The environment"),
    _organizationId: ObjectIdString("The organization"),
    createdAt: Type.String({ format: "date-time" }),
    updatedAt: Type.String({ format: "date-time" }),
  },
  { title: "Tenant", additionalProperties: false },
);

export const TenantEnvelope = Envelope(TenantResource);
export const TenantPage = Page("TenantPage", TenantResource, { things: "tenants", order: "Newest first" });

export const TenantParams = Type.Object({ identifier: TenantIdentifier() });

export const ListTenantsQuery = Type.Object({
  page: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
});

export const CreateTenantBody = Type.Object(
  { identifier: TenantIdentifier(), name: Type.Optional(TenantName), data: Type.Optional(TenantData) },
  { additionalProperties: false },
);

export const UpdateTenantBody = Type.Object(
  {
    identifier: Type.Optional(TenantIdentifier("A new identifier")),
    name: Type.Optional(TenantName),
    data: Type.Optional(TenantData),
  },
  { additionalProperties: false },
);

/** JSON Schema's if/then/else. */
function ifThenElse(condition: object, then: object, otherwise: object) {
  return { if: condition, then, else: otherwise };
}

/**
 * A trigger's `tenant`: an identifier, or `{identifier, name?, data?}` to create or update it. JSON
 * Schema's if/then/else rather than a union, so that Ajv tells what is wrong with the kind of value
 * sent, not every kind's complaint about it.
 */
export const TriggerTenant = Type.Unsafe<
  string | { identifier: string; name?: string; data?: Record<string, unknown> }
>({
  type: ["string", "object"],
  description: "A tenant identifier, or a tenant object created or updated as sent",
  ...ifThenElse({ type: "string" }, TenantIdentifier("The identifier of one of the environment's tenants"), {
    required: ["identifier"],
    additionalProperties: false,
    properties: { identifier: TenantIdentifier(), name: TenantName, data: TenantData },
  }),
});
