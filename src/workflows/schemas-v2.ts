import { type Static, Type } from "typebox";
import { FreeObject, ObjectIdString } from "../http/schema-helpers.ts";
import { CHANNELS } from "./domain.ts";
import { IDENTIFIER_PATTERN, SEVERITIES, V2_STEP_TYPES } from "./enums.ts";

// Novu's v2 workflow shapes (the ones @novu/api 3 sends and parses: its models' WorkflowResponseDto,
// WorkflowListResponseDto, StepResponseDto, CreateWorkflowDto, UpdateWorkflowDto, PatchWorkflowDto).

const Enum = <T extends readonly string[]>(values: T, description?: string) =>
  Type.Unsafe<T[number]>({ type: "string", enum: [...values], ...(description ? { description } : {}) });

const WORKFLOW_STATUSES = ["ACTIVE", "INACTIVE", "ERROR"] as const;
const ORIGINS = ["novu-cloud", "novu-cloud-v1", "external"] as const;

// ---------------------------------------------------------------- responses

export const V2Step = Type.Object(
  {
    _id: ObjectIdString("The step's id (v1's `steps[]._id`)"),
    stepId: Type.String({ description: "The step's id within its workflow" }),
    slug: Type.String({ description: "The same as stepId" }),
    name: Type.String(),
    type: Enum(V2_STEP_TYPES, "The step's type (a v1 `trigger` step shows as `custom`)"),
    origin: Enum(ORIGINS),
    workflowId: Type.String({ description: "The workflow's trigger identifier" }),
    workflowDatabaseId: ObjectIdString("The workflow's _id"),
    controlValues: FreeObject("The step's content and timing, by control name"),
    controls: Type.Object(
      {
        values: FreeObject("The control values again, as Novu's controls metadata holds them"),
        dataSchema: Type.Optional(FreeObject()),
      },
      { additionalProperties: false },
    ),
    variables: FreeObject("A JSON schema of what the step's templates can read (subscriber, payload)"),
    issues: FreeObject(),
  },
  { title: "WorkflowStepV2", additionalProperties: false },
);
export type V2StepValue = Static<typeof V2Step>;

const ChannelPreference = Type.Object({ enabled: Type.Boolean() }, { additionalProperties: false });
const WorkflowPreferenceValue = Type.Object(
  {
    enabled: Type.Boolean(),
    readOnly: Type.Boolean({ description: "Critical: subscribers cannot turn it off" }),
  },
  { additionalProperties: false },
);
const PreferencesValue = Type.Object(
  {
    all: WorkflowPreferenceValue,
    channels: Type.Record(Type.String(), ChannelPreference),
  },
  { additionalProperties: false },
);

export const V2Workflow = Type.Object(
  {
    _id: ObjectIdString("The workflow's id"),
    workflowId: Type.String({ description: "The trigger identifier (v1's triggers[0].identifier)" }),
    slug: Type.String({ description: "The same as workflowId" }),
    name: Type.String(),
    description: Type.String(),
    tags: Type.Array(Type.String()),
    active: Type.Boolean(),
    status: Enum(WORKFLOW_STATUSES),
    severity: Enum(SEVERITIES),
    origin: Enum(ORIGINS),
    isTranslationEnabled: Type.Boolean(),
    validatePayload: Type.Boolean(),
    steps: Type.Array(V2Step),
    preferences: Type.Object(
      { user: Type.Null(), default: PreferencesValue },
      { additionalProperties: false, description: "The channel defaults; `all.readOnly` is v1's `critical`" },
    ),
    issues: FreeObject(),
    lastTriggeredAt: Type.Null(),
    createdAt: Type.String({ format: "date-time" }),
    updatedAt: Type.String({ format: "date-time" }),
  },
  { title: "WorkflowV2", additionalProperties: false },
);
export type V2WorkflowValue = Static<typeof V2Workflow>;

export const V2WorkflowListItem = Type.Object(
  {
    _id: ObjectIdString("The workflow's id"),
    workflowId: Type.String(),
    slug: Type.String(),
    name: Type.String(),
    tags: Type.Array(Type.String()),
    status: Enum(WORKFLOW_STATUSES),
    origin: Enum(ORIGINS),
    isTranslationEnabled: Type.Boolean(),
    stepTypeOverviews: Type.Array(Type.String(), { description: "Each step's type, in order" }),
    steps: Type.Array(
      Type.Object({ slug: Type.String(), type: Type.String() }, { additionalProperties: false }),
    ),
    lastTriggeredAt: Type.Null(),
    createdAt: Type.String({ format: "date-time" }),
    updatedAt: Type.String({ format: "date-time" }),
  },
  { title: "WorkflowListItemV2", additionalProperties: false },
);
export type V2WorkflowListItemValue = Static<typeof V2WorkflowListItem>;

export const V2WorkflowList = Type.Object(
  { workflows: Type.Array(V2WorkflowListItem), totalCount: Type.Integer() },
  { title: "WorkflowListV2", additionalProperties: false },
);

// ---------------------------------------------------------------- requests

export const V2StepBody = Type.Object(
  {
    _id: Type.Optional(
      Type.String({
        pattern: "^[0-9a-f]{24}$",
        description: "A current step's _id: it keeps its ids and what v2 does not show",
      }),
    ),
    stepId: Type.Optional(Type.String({ maxLength: 100, description: "Default: the name, slugified" })),
    name: Type.String({ minLength: 1, maxLength: 200 }),
    type: Enum(V2_STEP_TYPES),
    controlValues: Type.Optional(
      FreeObject(
        "By control name; left out, a current step keeps its content (see the step types' control values)",
      ),
    ),
  },
  { additionalProperties: false },
);
export type V2StepBodyValue = Static<typeof V2StepBody>;

const WorkflowPreferenceInput = Type.Object(
  { enabled: Type.Optional(Type.Boolean()), readOnly: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
);
const PreferencesInput = Type.Object(
  {
    all: Type.Optional(WorkflowPreferenceInput),
    channels: Type.Optional(
      Type.Object(
        Object.fromEntries(
          CHANNELS.map((channel) => [
            channel,
            Type.Optional(
              Type.Object({ enabled: Type.Optional(Type.Boolean()) }, { additionalProperties: false }),
            ),
          ]),
        ),
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
export const V2PreferencesBody = Type.Object(
  {
    user: Type.Optional(Type.Union([PreferencesInput, Type.Null()])),
    workflow: Type.Optional(Type.Union([PreferencesInput, Type.Null()])),
  },
  { additionalProperties: false },
);
export type V2PreferencesValue = Static<typeof V2PreferencesBody>;

/** What Tidings does not do, refused unless off (the SDK sends some of them with their defaults). */
const unsupportedFields = {
  validatePayload: Type.Optional(
    Type.Boolean({ description: "Only false: payloads are not validated against a schema" }),
  ),
  payloadSchema: Type.Optional(Type.Union([FreeObject(), Type.Null()], { description: "Only null or {}" })),
  isTranslationEnabled: Type.Optional(Type.Boolean({ description: "Only false" })),
  agent: Type.Optional(Type.Null({ description: "Only null" })),
};

const common = {
  name: Type.String({ maxLength: 1000, description: "1–200 characters after trimming" }),
  description: Type.Optional(Type.String({ maxLength: 10_000 })),
  tags: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), { maxItems: 50 })),
  active: Type.Optional(Type.Boolean({ description: "Default false" })),
  steps: Type.Array(V2StepBody, { maxItems: 100 }),
  severity: Type.Optional(Enum(SEVERITIES)),
  ...unsupportedFields,
};

export const V2CreateWorkflowBody = Type.Object(
  {
    ...common,
    workflowId: Type.String({
      pattern: IDENTIFIER_PATTERN,
      description: "The trigger identifier: unique in the environment, not shaped like an id",
    }),
    preferences: Type.Optional(V2PreferencesBody),
    __source: Type.Optional(
      Type.String({ maxLength: 100, description: "Where the workflow was made; not kept" }),
    ),
  },
  { additionalProperties: false },
);
export type V2CreateWorkflowInput = Static<typeof V2CreateWorkflowBody>;

export const V2UpdateWorkflowBody = Type.Object(
  {
    ...common,
    workflowId: Type.Optional(
      Type.String({
        pattern: IDENTIFIER_PATTERN,
        description: "A new trigger identifier (unique in the environment)",
      }),
    ),
    preferences: V2PreferencesBody,
    origin: Type.Optional(Enum(ORIGINS, "Not kept")),
  },
  { additionalProperties: false },
);
export type V2UpdateWorkflowInput = Static<typeof V2UpdateWorkflowBody>;

export const V2PatchWorkflowBody = Type.Object(
  {
    active: Type.Optional(Type.Boolean()),
    name: Type.Optional(common.name),
    description: common.description,
    tags: common.tags,
    ...unsupportedFields,
  },
  { additionalProperties: false },
);
export type V2PatchWorkflowInput = Static<typeof V2PatchWorkflowBody>;

export const V2WorkflowParams = Type.Object({
  workflowId: Type.String({
    pattern: IDENTIFIER_PATTERN,
    description: "The workflow's _id or its workflowId",
  }),
});

export const V2StepParams = Type.Object({
  workflowId: V2WorkflowParams.properties.workflowId,
  stepId: Type.String({ pattern: IDENTIFIER_PATTERN, description: "The step's stepId or its _id" }),
});

export const V2GetWorkflowQuery = Type.Object({
  environmentId: Type.Optional(
    ObjectIdString("Read the workflow of this environment of the organization (by its workflowId) instead"),
  ),
});

const StringOrList = (max: number) =>
  Type.Union([
    Type.String({ maxLength: max }),
    Type.Array(Type.String({ maxLength: max }), { maxItems: 50 }),
  ]);

export const V2ListWorkflowsQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: "Default 10" })),
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000, description: "Default 0" })),
  orderBy: Type.Optional(Enum(["createdAt", "updatedAt", "name"] as const, "Default createdAt")),
  orderDirection: Type.Optional(Enum(["ASC", "DESC"] as const, "Default DESC")),
  query: Type.Optional(
    Type.String({
      maxLength: 200,
      description: "Only workflows whose name or workflowId contains this text",
    }),
  ),
  status: Type.Optional(StringOrList(20)),
  tags: Type.Optional(StringOrList(100)),
});
export type V2ListWorkflowsQueryValue = Static<typeof V2ListWorkflowsQuery>;

export const V2PreviewBody = Type.Object(
  {
    controlValues: Type.Optional(FreeObject("Control values to preview instead of the stored ones")),
    previewPayload: Type.Optional(
      Type.Object(
        {
          subscriber: Type.Optional(FreeObject()),
          actor: Type.Optional(FreeObject()),
          payload: Type.Optional(FreeObject()),
          steps: Type.Optional(FreeObject()),
          context: Type.Optional(FreeObject()),
          env: Type.Optional(FreeObject()),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
export type V2PreviewInput = Static<typeof V2PreviewBody>;

export const V2Preview = Type.Object(
  {
    previewPayloadExample: Type.Object(
      { subscriber: FreeObject(), payload: FreeObject() },
      { additionalProperties: false },
    ),
    result: Type.Object(
      {
        type: Enum(V2_STEP_TYPES),
        preview: FreeObject("The rendered content: subject, body and the channel's other fields"),
      },
      { additionalProperties: false },
    ),
  },
  { title: "StepPreviewV2", additionalProperties: false },
);
