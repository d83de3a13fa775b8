import { type Static, Type } from "typebox";
import { FreeObject, ObjectIdString } from "../http/schema-helpers.ts";
import { EnvironmentResource } from "../tenancy/schemas.ts";

// Novu's shapes for environments and promotion, as @novu/api 3 sends and parses them (its models
// CreateEnvironmentRequestDto, EnvironmentResponseDto, DiffEnvironmentResponseDto,
// PublishEnvironmentResponseDto, GetEnvironmentTagsDto), and Novu's v1 change list.

const Enum = <T extends readonly string[]>(values: T, description?: string) =>
  Type.Unsafe<T[number]>({ type: "string", enum: [...values], ...(description ? { description } : {}) });

/**
 * What a workflow is in `resourceType`: @novu/api 3.19 checks the field against the enum of
 * workflow types (REGULAR, ECHO, BRIDGE) and throws on anything else, Novu's own `workflow` included.
 */
const WORKFLOW_RESOURCE = Enum(["REGULAR"] as const, "REGULAR: a workflow (the SDK's enum for it)");
/**
 * What a layout is in `resourceType`: Novu's own `layout`. Layouts are listed beside the workflows,
 * in lists of ours (`layouts`), because the SDK's enum refuses the value in `resources`.
 */
const LAYOUT_RESOURCE = Enum(["layout"] as const, "layout: an email layout (Novu's value)");
/** Each list's `resourceType`: required for workflows and layouts, absent for groups. */
type ResourceTypeSchema = typeof WORKFLOW_RESOURCE | typeof LAYOUT_RESOURCE | undefined;
const resourceTypeProperty = <R extends ResourceTypeSchema>(resourceType: R) =>
  (resourceType ? { resourceType } : {}) as R extends undefined ? Record<never, never> : { resourceType: R };
const ACTIONS = ["added", "modified", "deleted"] as const;

// ---------------------------------------------------------------- environments

export const EnvironmentIdParams = Type.Object({
  environmentId: ObjectIdString("An environment of the organization"),
});
export const TargetEnvironmentParams = Type.Object({
  targetEnvironmentId: ObjectIdString("The environment to publish into (Production, say)"),
});

export const CreateEnvironmentBody = Type.Object(
  {
    name: Type.String({ maxLength: 1000, description: "1–100 characters; unique in the organization" }),
    parentId: Type.Optional(ObjectIdString("The environment it derives from; default Development")),
    color: Type.String({
      maxLength: 100,
      description: "Accepted for Novu's SDK (which requires it); not kept",
    }),
  },
  { additionalProperties: false },
);
export type CreateEnvironmentInput = Static<typeof CreateEnvironmentBody>;

export const UpdateEnvironmentBody = Type.Object(
  {
    name: Type.Optional(
      Type.String({ maxLength: 1000, description: "Development and Production keep theirs" }),
    ),
    parentId: Type.Optional(
      Type.Union([ObjectIdString("The environment it derives from"), Type.Literal("")], {
        description: "The environment it derives from; empty for none",
      }),
    ),
    color: Type.Optional(Type.String({ maxLength: 100, description: "Accepted; not kept" })),
    identifier: Type.Optional(
      Type.String({
        pattern: "^[A-Za-z0-9_.:-][A-Za-z0-9 _.:-]{0,98}[A-Za-z0-9_.:-]$|^[A-Za-z0-9_.:-]$",
        description: "The public application identifier the inbox widget names (unique; 409 when taken)",
      }),
    ),
    hmac: Type.Optional(
      Type.Boolean({
        description:
          "Whether inbox sessions must carry the HMAC of the subscriberId (Production keeps it on: 403)",
      }),
    ),
  },
  { additionalProperties: false },
);
export type UpdateEnvironmentInput = Static<typeof UpdateEnvironmentBody>;

export const CreatedEnvironment = Type.Object(
  {
    ...EnvironmentResource.properties,
    apiKeys: Type.Array(
      Type.Object(
        {
          key: Type.String({ description: "The environment's first API key, whole: shown this once" }),
          _userId: Type.String({ description: "Empty: keys belong to the environment" }),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { title: "CreatedEnvironment", additionalProperties: false },
);

export const EnvironmentTags = Type.Array(
  Type.Object({ name: Type.String() }, { additionalProperties: false }),
  { description: "Each tag of the environment's live workflows, once, sorted" },
);

// ---------------------------------------------------------------- diff

const ResourceRef = Type.Union([
  Type.Object(
    {
      id: Type.String(),
      name: Type.String(),
      updatedAt: Type.String({ format: "date-time" }),
    },
    { additionalProperties: false },
  ),
  Type.Null(),
]);

const Change = <R extends ResourceTypeSchema>(resourceType: R) =>
  Type.Object(
    {
      ...resourceTypeProperty(resourceType),
      action: Enum(ACTIONS),
      sourceResource: ResourceRef,
      targetResource: ResourceRef,
      diffs: Type.Object(
        {
          previous: Type.Union([FreeObject("What the target has of the fields that differ"), Type.Null()]),
          new: Type.Union([FreeObject("What the source has of them"), Type.Null()]),
        },
        { additionalProperties: false },
      ),
    },
    { additionalProperties: false },
  );

const ResourceDiff = <R extends ResourceTypeSchema>(description: string, resourceType: R) =>
  Type.Object(
    {
      ...resourceTypeProperty(resourceType),
      resourceId: Type.String({
        description: "The source record's id (a deleted one's too): what publish takes",
      }),
      action: Enum(ACTIONS),
      sourceResource: ResourceRef,
      targetResource: ResourceRef,
      changes: Type.Array(Change(resourceType)),
      summary: Type.Object(
        {
          added: Type.Integer(),
          modified: Type.Integer(),
          deleted: Type.Integer(),
          unchanged: Type.Integer(),
        },
        { additionalProperties: false },
      ),
    },
    { additionalProperties: false, description },
  );

export const DiffEnvironmentBody = Type.Object(
  {
    sourceEnvironmentId: Type.Optional(ObjectIdString("Where to publish from; default the target's parent")),
  },
  { additionalProperties: false },
);

export const EnvironmentDiff = Type.Object(
  {
    sourceEnvironmentId: ObjectIdString("Where the changes come from"),
    targetEnvironmentId: ObjectIdString("Where they would go"),
    resources: Type.Array(
      ResourceDiff("A workflow added, modified or deleted in the source", WORKFLOW_RESOURCE),
    ),
    notificationGroups: Type.Array(
      ResourceDiff(
        "A notification group added, renamed or deleted in the source (Novu's v2 has no groups)",
        undefined,
      ),
    ),
    layouts: Type.Array(
      ResourceDiff(
        "An email layout added, modified (the fields a publish copies: identifier, name, description, " +
          "content, variables, isDefault) or deleted in the source",
        LAYOUT_RESOURCE,
      ),
    ),
    summary: Type.Object(
      {
        totalEntities: Type.Integer({ description: "Workflows, groups and layouts compared" }),
        totalChanges: Type.Integer(),
        hasChanges: Type.Boolean(),
      },
      { additionalProperties: false },
    ),
  },
  { title: "EnvironmentDiff", additionalProperties: false },
);
export type EnvironmentDiffValue = Static<typeof EnvironmentDiff>;

// ---------------------------------------------------------------- publish

export const PublishEnvironmentBody = Type.Object(
  {
    sourceEnvironmentId: DiffEnvironmentBody.properties.sourceEnvironmentId,
    dryRun: Type.Optional(
      Type.Boolean({ description: "Answer what would be published, and publish nothing" }),
    ),
    resources: Type.Optional(
      Type.Array(
        Type.Object(
          {
            resourceType: Type.String({
              maxLength: 50,
              description: "REGULAR (a workflow), notification_group or layout; the resourceId decides",
            }),
            resourceId: ObjectIdString("A change's resourceId, as the diff names it"),
          },
          { additionalProperties: false },
        ),
        {
          maxItems: 1000,
          description:
            "Only these changes (with the groups and new layouts their workflows need); default all",
        },
      ),
    ),
  },
  { additionalProperties: false },
);
export type PublishEnvironmentInput = Static<typeof PublishEnvironmentBody>;

const Synced = <R extends ResourceTypeSchema>(resourceType: R) =>
  Type.Object(
    {
      ...resourceTypeProperty(resourceType),
      resourceId: Type.String({ description: "The source record's id" }),
      targetResourceId: Type.Optional(Type.String({ description: "Its copy in the target" })),
      resourceName: Type.String(),
      action: Enum(["created", "updated", "deleted"] as const),
    },
    { additionalProperties: false },
  );
const Skipped = <R extends ResourceTypeSchema>(resourceType: R) =>
  Type.Object(
    {
      ...resourceTypeProperty(resourceType),
      resourceId: Type.String(),
      resourceName: Type.String(),
      reason: Type.String(),
    },
    { additionalProperties: false },
  );
const SyncResult = <R extends ResourceTypeSchema>(resourceType: R) =>
  Type.Object(
    {
      ...resourceTypeProperty(resourceType),
      successful: Type.Array(Synced(resourceType)),
      failed: Type.Array(Type.Never(), { description: "Always empty: a publish lands whole or not at all" }),
      skipped: Type.Array(Skipped(resourceType)),
      totalProcessed: Type.Integer(),
    },
    { additionalProperties: false },
  );

export const PublishResultSchema = Type.Object(
  {
    results: Type.Array(SyncResult(WORKFLOW_RESOURCE), { description: "The workflows" }),
    notificationGroups: SyncResult(undefined),
    layouts: SyncResult(LAYOUT_RESOURCE),
    summary: Type.Object(
      {
        resources: Type.Integer(),
        successful: Type.Integer(),
        failed: Type.Integer(),
        skipped: Type.Integer(),
      },
      { additionalProperties: false },
    ),
    dryRun: Type.Boolean(),
  },
  { title: "PublishResult", additionalProperties: false },
);
export type PublishResultValue = Static<typeof PublishResultSchema>;

// ---------------------------------------------------------------- Novu's v1 change list

export const ChangeResource = Type.Object(
  {
    _id: Type.String({ description: "The change's id: its record's id in the key's environment" }),
    _entityId: Type.String(),
    _environmentId: ObjectIdString("The environment the change was made in"),
    _organizationId: ObjectIdString("The organization"),
    _creatorId: Type.String(),
    _parentId: Type.String({ description: "Empty" }),
    type: Enum(
      ["NotificationTemplate", "NotificationGroup", "Layout", "DefaultLayout"] as const,
      "What changed: a workflow, a group, or an email layout (DefaultLayout when the change makes it the " +
        "default or stops it being one)",
    ),
    enabled: Type.Boolean({ description: "Whether it is applied: false while pending" }),
    change: Type.Object(
      {
        action: Enum(ACTIONS),
        name: Type.String(),
        fields: Type.Array(Type.String(), { description: "Modified: what differs" }),
      },
      { additionalProperties: false },
    ),
    createdAt: Type.String({ format: "date-time", description: "When the record last changed" }),
  },
  { title: "Change", additionalProperties: false },
);
export type ChangeValue = Static<typeof ChangeResource>;

export const ListChangesQuery = Type.Object({
  page: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000, description: "Default 0" })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: "Default 10" })),
  promoted: Type.Optional(
    Type.Union([Type.Boolean(), Type.Literal("true"), Type.Literal("false")], {
      description: "true: the applied changes, which are not kept (always empty); default false",
    }),
  ),
});

export const ChangePage = Type.Object(
  {
    page: Type.Integer(),
    pageSize: Type.Integer(),
    totalCount: Type.Integer(),
    data: Type.Array(ChangeResource, { description: "Newest first" }),
  },
  { title: "ChangePage", additionalProperties: false },
);

export const ChangeIdParams = Type.Object({ changeId: ObjectIdString("A pending change's _id") });

export const BulkApplyBody = Type.Object(
  { changeIds: Type.Array(ObjectIdString("A pending change's _id"), { minItems: 1, maxItems: 1000 }) },
  { additionalProperties: false },
);
