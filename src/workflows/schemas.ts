import { type Static, Type } from "typebox";
import { FreeObject, ObjectIdString } from "../http/schema-helpers.ts";
import { NotificationGroup } from "../notification-groups/schemas.ts";
import {
  FILTER_ON,
  FILTER_OPERATORS,
  FILTER_TYPES,
  FILTER_VALUES,
  IDENTIFIER_PATTERN,
  METADATA_TYPES,
  SEVERITIES,
  STEP_TYPES,
  TIME_UNITS,
} from "./enums.ts";

const Enum = <T extends readonly string[]>(values: T, description?: string) =>
  Type.Unsafe<T[number]>({ type: "string", enum: [...values], ...(description ? { description } : {}) });

const ShortText = (max: number, description?: string) =>
  Type.String({ maxLength: max, ...(description ? { description } : {}) });

export { IDENTIFIER_PATTERN } from "./enums.ts";
// Novu's v2 shapes of the same workflow (schemas-v2.ts), for the features that answer with them.
export { V2Workflow, V2WorkflowParams } from "./schemas-v2.ts";

// ---------------------------------------------------------------- responses (seed part 2)

export const FilterChild = Type.Object(
  {
    field: Type.String(),
    value: Type.String(),
    operator: Type.String(),
    on: Type.String(),
  },
  { additionalProperties: false },
);

export const Filter = Type.Object(
  {
    isNegated: Type.Boolean(),
    type: Type.String(),
    value: Type.String(),
    children: Type.Array(FilterChild),
  },
  { additionalProperties: false },
);

export const StepMetadata = Type.Object(
  {
    amount: Type.Integer(),
    unit: Type.String(),
    digestKey: Type.String(),
    type: Type.String(),
    backoff: Type.Boolean(),
    backoffAmount: Type.Integer(),
    backoffUnit: Type.String(),
    updateMode: Type.Boolean(),
    delayPath: Type.Optional(
      Type.String({ description: "Scheduled delays: the payload path of the ISO date to wait for" }),
    ),
    threshold: Type.Optional(
      Type.Integer({ description: "Throttle steps: how many runs a window (amount × unit) lets through" }),
    ),
    throttleKey: Type.Optional(
      Type.String({ description: "Throttle steps: the payload path whose value gets a window of its own" }),
    ),
  },
  { additionalProperties: false },
);

export const CodeStep = Type.Object(
  {
    type: Type.String({
      description: "The step's type in the code-first framework (in_app, email, custom, …)",
    }),
    controlValues: FreeObject("The control values sent to the bridge with each execution of the step"),
  },
  {
    additionalProperties: false,
    description: "Present on the steps of a workflow defined in code: they run through its bridge",
  },
);

export const Step = Type.Object(
  {
    _id: ObjectIdString("The step's id"),
    uuid: Type.String({ format: "uuid" }),
    name: Type.String(),
    _templateId: ObjectIdString("The id of the step's message template"),
    active: Type.Boolean(),
    shouldStopOnFail: Type.Boolean(),
    template: FreeObject("The message template: its type, content, subject and so on"),
    filters: Type.Array(Filter),
    _parentId: FreeObject("Typed as an object by the API; empty unless the step was promoted"),
    metadata: StepMetadata,
    replyCallback: FreeObject(),
    code: Type.Optional(CodeStep),
  },
  { additionalProperties: false },
);

export const TriggerVariable = Type.Object({ name: Type.String() }, { additionalProperties: false });

export const Trigger = Type.Object(
  {
    type: Type.String(),
    identifier: Type.String(),
    variables: Type.Array(TriggerVariable),
    subscriberVariables: Type.Array(TriggerVariable),
  },
  { additionalProperties: false },
);

export const PreferenceSettings = Type.Object(
  {
    email: Type.Boolean(),
    sms: Type.Boolean(),
    in_app: Type.Boolean(),
    chat: Type.Boolean(),
    push: Type.Boolean(),
  },
  { additionalProperties: false },
);

export const Workflow = Type.Object(
  {
    _id: ObjectIdString("The workflow's id"),
    name: Type.String(),
    description: Type.String(),
    active: Type.Boolean(),
    draft: Type.Boolean(),
    preferenceSettings: PreferenceSettings,
    critical: Type.Boolean(),
    severity: Enum(SEVERITIES, "How much its notifications matter in the inbox: high, medium, low or none"),
    tags: Type.Array(Type.String()),
    steps: Type.Array(Step),
    _organizationId: ObjectIdString("The organization"),
    _creatorId: Type.String({ description: "The id of the API key that created the workflow" }),
    _environmentId: ObjectIdString("The environment"),
    triggers: Type.Array(Trigger),
    _notificationGroupId: ObjectIdString("The workflow's notification group"),
    _parentId: Type.String(),
    deleted: Type.Boolean(),
    deletedAt: Type.String({ description: "When the workflow was deleted; empty while it is live" }),
    deletedBy: Type.String({ description: "The id of the API key that deleted it; empty while it is live" }),
    notificationGroup: NotificationGroup,
    data: FreeObject("Free-form data kept with the workflow"),
    workflowIntegrationStatus: FreeObject(),
    origin: Type.Optional(
      Type.String({
        description:
          "external: defined in code and synced from the environment's bridge (its steps are read-only here)",
      }),
    ),
    payloadSchema: Type.Optional(FreeObject("The JSON Schema a trigger's payload must match")),
    createdAt: Type.String({ format: "date-time" }),
    updatedAt: Type.String({ format: "date-time" }),
  },
  { title: "Workflow", additionalProperties: false },
);

export type WorkflowResource = Static<typeof Workflow>;
export type StepResource = Static<typeof Step>;
export type FilterResource = Static<typeof Filter>;
export type TriggerResource = Static<typeof Trigger>;
export type PreferenceSettingsResource = Static<typeof PreferenceSettings>;

// ---------------------------------------------------------------- requests

export const FilterChildInput = Type.Object(
  {
    field: Type.Optional(ShortText(200)),
    value: Type.Optional(ShortText(1000)),
    operator: Type.Optional(Enum(FILTER_OPERATORS)),
    on: Type.Optional(Enum(FILTER_ON)),
  },
  { additionalProperties: false },
);

export const FilterInput = Type.Object(
  {
    isNegated: Type.Optional(Type.Boolean()),
    type: Type.Optional(Enum(FILTER_TYPES)),
    value: Type.Optional(Enum(FILTER_VALUES)),
    children: Type.Optional(Type.Array(FilterChildInput, { maxItems: 100 })),
  },
  { additionalProperties: false },
);

export const StepMetadataInput = Type.Object(
  {
    amount: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000_000 })),
    unit: Type.Optional(Enum(TIME_UNITS)),
    digestKey: Type.Optional(ShortText(200)),
    type: Type.Optional(Enum(METADATA_TYPES)),
    backoff: Type.Optional(Type.Boolean()),
    backoffAmount: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000_000 })),
    backoffUnit: Type.Optional(Enum(TIME_UNITS)),
    updateMode: Type.Optional(Type.Boolean()),
    delayPath: Type.Optional(
      ShortText(200, "Scheduled delays (type: scheduled): the payload path of the ISO date to wait for"),
    ),
    threshold: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 1_000_000_000,
        description: "Throttle steps: how many runs a window (amount × unit) lets through",
      }),
    ),
    throttleKey: Type.Optional(
      ShortText(200, "Throttle steps: the payload path whose value gets a window of its own"),
    ),
  },
  { additionalProperties: false },
);

export const StepTemplateInput = Type.Object(
  {
    type: Enum(STEP_TYPES, "The channel or action of the step"),
  },
  {
    additionalProperties: true,
    description: "The message template: type plus its content, subject and so on",
  },
);

export const StepInput = Type.Object(
  {
    _id: Type.Optional(Type.String({ pattern: "^[0-9a-f]{24}$" })),
    uuid: Type.Optional(Type.String({ format: "uuid" })),
    name: Type.Optional(ShortText(200)),
    _templateId: Type.Optional(Type.String({ pattern: "^[0-9a-f]{24}$" })),
    active: Type.Optional(Type.Boolean()),
    shouldStopOnFail: Type.Optional(Type.Boolean()),
    template: StepTemplateInput,
    filters: Type.Optional(Type.Array(FilterInput, { maxItems: 50 })),
    _parentId: Type.Optional(Type.Union([FreeObject(), Type.String(), Type.Null()])),
    metadata: Type.Optional(StepMetadataInput),
    replyCallback: Type.Optional(FreeObject()),
  },
  { additionalProperties: false },
);

export const PreferenceSettingsInput = Type.Object(
  {
    email: Type.Optional(Type.Boolean()),
    sms: Type.Optional(Type.Boolean()),
    in_app: Type.Optional(Type.Boolean()),
    chat: Type.Optional(Type.Boolean()),
    push: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

const workflowFields = {
  name: Type.String({ maxLength: 1000, description: "1–200 characters after trimming" }),
  notificationGroupId: ObjectIdString("A notification group of the key's environment"),
  steps: Type.Array(StepInput, { maxItems: 100 }),
  description: Type.Optional(ShortText(10_000)),
  tags: Type.Optional(Type.Array(ShortText(100), { maxItems: 50 })),
  active: Type.Optional(Type.Boolean({ description: "Default false: a new workflow starts as a draft" })),
  draft: Type.Optional(Type.Boolean({ description: "Deprecated by Novu; derived from active" })),
  critical: Type.Optional(Type.Boolean()),
  severity: Type.Optional(
    Enum(
      SEVERITIES,
      "How much its notifications matter in the inbox (default none); the inbox filters by it",
    ),
  ),
  preferenceSettings: Type.Optional(PreferenceSettingsInput),
  data: Type.Optional(FreeObject()),
};

export const CreateWorkflowBody = Type.Object(
  {
    ...workflowFields,
    steps: Type.Optional(workflowFields.steps),
  },
  { additionalProperties: false },
);
export type CreateWorkflowInput = Static<typeof CreateWorkflowBody>;

export const UpdateWorkflowBody = Type.Object(
  {
    name: Type.Optional(workflowFields.name),
    notificationGroupId: Type.Optional(workflowFields.notificationGroupId),
    steps: Type.Optional(workflowFields.steps),
    description: workflowFields.description,
    tags: workflowFields.tags,
    active: workflowFields.active,
    draft: workflowFields.draft,
    critical: workflowFields.critical,
    severity: workflowFields.severity,
    preferenceSettings: workflowFields.preferenceSettings,
    data: workflowFields.data,
    identifier: Type.Optional(
      Type.String({
        pattern: IDENTIFIER_PATTERN,
        description: "A new trigger identifier (unique in the environment)",
      }),
    ),
  },
  { additionalProperties: false },
);
export type UpdateWorkflowInput = Static<typeof UpdateWorkflowBody>;

export type StepInputValue = Static<typeof StepInput>;

export const WorkflowIdParams = Type.Object({
  workflowId: Type.String({
    pattern: IDENTIFIER_PATTERN,
    description: "The workflow's _id or its trigger identifier",
  }),
});

export const StatusBody = Type.Object(
  { active: Type.Boolean({ description: "The desired active state" }) },
  { additionalProperties: false },
);

export const ListWorkflowsQuery = Type.Object(
  {
    page: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 1_000_000, description: "Zero-based page number; default 0" }),
    ),
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 100, description: "Page size, 1–100; default 10" }),
    ),
    query: Type.Optional(
      Type.String({
        maxLength: 200,
        description: "Only workflows whose name or trigger identifier contains this text (any case)",
      }),
    ),
  },
  // Unknown query parameters are ignored, as Novu does: a query string is not a document.
);
export type ListWorkflowsQueryValue = Static<typeof ListWorkflowsQuery>;

export const WorkflowPage = Type.Object(
  {
    page: Type.Integer({ description: "The page returned (zero-based)" }),
    pageSize: Type.Integer({ description: "The page size asked for" }),
    totalCount: Type.Integer({ description: "How many workflows match, on all pages" }),
    data: Type.Array(Workflow, { description: "Newest first" }),
  },
  { title: "WorkflowPage", additionalProperties: false },
);

export const DeletedWorkflow = Type.Object(
  { data: Type.Literal(true) },
  { title: "WorkflowDeleted", additionalProperties: false },
);
