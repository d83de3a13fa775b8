import { Type } from "typebox";
import { Envelope, ObjectIdString } from "../http/schema-helpers.ts";

const Channels = ["email", "sms", "in_app", "chat", "push"] as const;

const PreferenceSettingsInput = Type.Object(
  Object.fromEntries(Channels.map((c) => [c, Type.Optional(Type.Boolean())])),
  {
    additionalProperties: false,
    description:
      "Channel defaults for the tenant's triggers; a channel left out is on (or, in a change, as it was)",
  },
);

export const OverrideResource = Type.Object(
  {
    _id: ObjectIdString("The override's id"),
    _organizationId: ObjectIdString("The organization"),
    _environmentId: ObjectIdString("The environment"),
    _workflowId: ObjectIdString("The workflow"),
    _tenantId: ObjectIdString("The tenant (its _id)"),
    active: Type.Boolean({ description: "false: the workflow runs nothing for the tenant's triggers" }),
    preferenceSettings: Type.Object(Object.fromEntries(Channels.map((c) => [c, Type.Boolean()])), {
      additionalProperties: false,
    }),
    deleted: Type.Boolean({ description: "Always false: a deleted override is gone" }),
    createdAt: Type.String({ format: "date-time" }),
    updatedAt: Type.String({ format: "date-time" }),
  },
  { title: "WorkflowOverride", additionalProperties: false },
);

export const OverrideEnvelope = Envelope(OverrideResource);

export const OverridePage = Type.Object(
  {
    page: Type.Integer({ description: "The page returned (zero-based)" }),
    pageSize: Type.Integer({ description: "The page size asked for" }),
    hasMore: Type.Boolean({ description: "Whether a later page has overrides" }),
    data: Type.Array(OverrideResource, { description: "Newest first" }),
  },
  { title: "WorkflowOverridePage", additionalProperties: false },
);

export const OverrideParams = Type.Object({ overrideId: ObjectIdString("The override's id") });

const WorkflowRef = Type.String({
  minLength: 1,
  maxLength: 200,
  description: "The workflow's _id (or its trigger identifier)",
});

export const OverridePairParams = Type.Object({
  workflowId: WorkflowRef,
  tenantId: ObjectIdString("The tenant's _id"),
});

export const ListOverridesQuery = Type.Object({
  page: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
});

export const CreateOverrideBody = Type.Object(
  {
    workflowId: WorkflowRef,
    tenantId: ObjectIdString("The tenant's _id"),
    active: Type.Optional(Type.Boolean({ description: "Default true" })),
    preferenceSettings: Type.Optional(PreferenceSettingsInput),
  },
  { additionalProperties: false },
);

export const UpdateOverrideBody = Type.Object(
  {
    active: Type.Optional(Type.Boolean()),
    preferenceSettings: Type.Optional(PreferenceSettingsInput),
  },
  { additionalProperties: false },
);
