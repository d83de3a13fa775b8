import { type Static, Type } from "typebox";
import { TOPIC_KEY_PATTERN } from "../http/validation.ts";
import { ScheduleSchema } from "../subscribers/schemas.ts";
import {
  Condition,
  InboxWorkflow,
  PreferenceFilter,
  SubscriptionPreferenceSchema,
  SubscriptionSchema,
} from "../topics/schemas.ts";

export { InboxWorkflow, SubscriptionPreferenceSchema, SubscriptionSchema };

// Novu's current inbox (@novu/js) reading and changing preferences and topic subscriptions: what it
// sends and what it reads back (docs/engine.md, "Subscribers, topics and preferences").

const Bool = (description?: string) => Type.Optional(Type.Boolean(description ? { description } : {}));

const channelFields = {
  email: Bool(),
  sms: Bool(),
  in_app: Bool(),
  chat: Bool(),
  push: Bool(),
};

export const InboxChannels = Type.Object(channelFields, {
  additionalProperties: false,
  description: "The channels the preference can turn off, each on or off",
});

export const InboxPreference = Type.Object(
  {
    level: Type.Unsafe<"global" | "template">({ type: "string", enum: ["global", "template"] }),
    enabled: Type.Boolean(),
    channels: InboxChannels,
    workflow: Type.Optional(InboxWorkflow),
    schedule: Type.Optional(ScheduleSchema),
  },
  { title: "InboxPreference", additionalProperties: false },
);
export type InboxPreferenceResource = Static<typeof InboxPreference>;

const StringOrList = <T extends ReturnType<typeof Type.String> | ReturnType<typeof Type.Unsafe<string>>>(
  item: T,
  maxItems: number,
) => Type.Optional(Type.Union([item, Type.Array(item, { maxItems })]));

export const InboxPreferencesQuery = Type.Object({
  tags: StringOrList(Type.String({ maxLength: 200 }), 50),
  severity: StringOrList(Type.Unsafe<string>({ type: "string", enum: ["high", "medium", "low", "none"] }), 4),
  criticality: Type.Optional(
    Type.Unsafe<"critical" | "nonCritical" | "all">({
      type: "string",
      enum: ["critical", "nonCritical", "all"],
      description: "Which workflows: `nonCritical` (the default), `critical`, or `all`",
    }),
  ),
});

export const UpdateInboxGlobalBody = Type.Object(
  { ...channelFields, schedule: Type.Optional(ScheduleSchema) },
  { additionalProperties: false },
);

export const UpdateInboxWorkflowBody = Type.Object(
  { ...channelFields, enabled: Bool("The whole workflow on or off") },
  { additionalProperties: false },
);

export const BulkPreferenceItem = Type.Object(
  {
    workflowId: Type.String({
      minLength: 1,
      maxLength: 200,
      description: "The workflow's _id or identifier",
    }),
    subscriptionIdentifier: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 255,
        description: "When given: the preference of this topic subscription, not the subscriber's own",
      }),
    ),
    ...channelFields,
    enabled: Bool(),
    condition: Condition,
  },
  { additionalProperties: false },
);

export const BulkPreferencesBody = Type.Object(
  { preferences: Type.Array(BulkPreferenceItem, { maxItems: 100 }) },
  { additionalProperties: false },
);

export const WorkflowParams = Type.Object({
  workflowIdOrIdentifier: Type.String({
    pattern: "^[A-Za-z0-9_-]{1,100}$",
    description: "The workflow's _id or its trigger identifier",
  }),
});

// ---------------------------------------------------------------- topic subscriptions

export const TopicParams = Type.Object({
  topicKey: Type.String({ pattern: TOPIC_KEY_PATTERN, description: "The topic's key" }),
});

const Identifier = Type.String({
  minLength: 1,
  maxLength: 255,
  description: "The subscription's identifier (or its id)",
});

export const SubscriptionParams = Type.Object({
  topicKey: TopicParams.properties.topicKey,
  identifier: Identifier,
});

export const CreateSubscriptionBody = Type.Object(
  {
    identifier: Type.Optional(
      Type.String({ maxLength: 255, description: "Empty or absent: `tk_<topicKey>:si_<subscriberId>`" }),
    ),
    name: Type.Optional(Type.String({ maxLength: 1000 })),
    topic: Type.Optional(
      Type.Object(
        {
          name: Type.Optional(
            Type.String({ maxLength: 1000, description: "The name of a topic created here" }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    preferences: Type.Optional(Type.Array(PreferenceFilter, { maxItems: 100 })),
  },
  { additionalProperties: false },
);

export const UpdateSubscriptionBody = Type.Object(
  {
    name: Type.Optional(Type.String({ maxLength: 1000 })),
    preferences: Type.Optional(Type.Array(PreferenceFilter, { maxItems: 100 })),
  },
  { additionalProperties: false },
);

export const SubscriptionQuery = Type.Object({
  workflowIds: StringOrList(Type.String({ minLength: 1, maxLength: 200 }), 100),
  tags: StringOrList(Type.String({ minLength: 1, maxLength: 200 }), 50),
});

export const SubscriptionPreferenceParams = Type.Object({
  identifier: Identifier,
  workflowId: WorkflowParams.properties.workflowIdOrIdentifier,
});

export const UpdateSubscriptionPreferenceBody = Type.Object(
  { ...channelFields, enabled: Bool(), condition: Condition },
  { additionalProperties: false },
);

export const Unsubscribed = Type.Object(
  { data: Type.Object({ success: Type.Literal(true) }, { additionalProperties: false }) },
  { additionalProperties: false },
);

// ---------------------------------------------------------------- /v2 (@novu/api 3, with the API key)

const Source = Type.Unsafe<"subscriber" | "template">({
  type: "string",
  enum: ["subscriber", "template"],
  description: "`subscriber`: its own choice; `template`: the workflow's preference settings",
});

export const SubscriberPreferencesV2 = Type.Object(
  {
    global: Type.Object(
      { enabled: Type.Boolean(), channels: InboxChannels, schedule: Type.Optional(ScheduleSchema) },
      { additionalProperties: false },
    ),
    workflows: Type.Array(
      Type.Object(
        {
          enabled: Type.Boolean(),
          channels: InboxChannels,
          overrides: Type.Array(
            Type.Object(
              {
                channel: Type.Unsafe<"email" | "sms" | "in_app" | "chat" | "push">({
                  type: "string",
                  enum: ["email", "sms", "in_app", "chat", "push"],
                }),
                source: Source,
              },
              { additionalProperties: false },
            ),
            { description: "What decided each channel shown" },
          ),
          workflow: Type.Object(
            {
              slug: Type.String({ description: "`<identifier>_wf_<_id>`, as Novu's dashboard names it" }),
              identifier: Type.String(),
              name: Type.String(),
            },
            { additionalProperties: false },
          ),
        },
        { additionalProperties: false },
      ),
      { description: "One per active workflow of the criticality asked for, oldest first" },
    ),
  },
  { title: "SubscriberPreferences", additionalProperties: false },
);

export const SubscriberPreferencesQuery = Type.Object({
  criticality: InboxPreferencesQuery.properties.criticality,
  contextKeys: Type.Optional(
    Type.Union(
      [Type.String({ maxLength: 200 }), Type.Array(Type.String({ maxLength: 200 }), { maxItems: 50 })],
      {
        description: "Accepted and not used: Tidings has no contexts",
      },
    ),
  ),
});

const Context = Type.Optional(
  Type.Unsafe<Record<string, unknown>>({
    type: "object",
    description: "Accepted and not used: Tidings has no contexts",
  }),
);

export const UpdateSubscriberPreferencesBody = Type.Object(
  {
    channels: Type.Optional(InboxChannels),
    workflowId: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description: "The workflow (its _id or identifier) whose preference changes; absent: the global one",
      }),
    ),
    schedule: Type.Optional(ScheduleSchema),
    context: Context,
  },
  { additionalProperties: false },
);

export const BulkSubscriberPreferencesBody = Type.Object(
  {
    preferences: Type.Array(
      Type.Object(
        {
          channels: InboxChannels,
          workflowId: Type.String({
            minLength: 1,
            maxLength: 200,
            description: "The workflow's _id or identifier",
          }),
        },
        { additionalProperties: false },
      ),
      { maxItems: 100 },
    ),
    context: Context,
  },
  { additionalProperties: false },
);
