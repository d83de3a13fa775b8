import { type Static, Type } from "typebox";
import { ErrorBodyWith } from "../errors.ts";
import { CursorPageOf, cursorQueryFields, FreeObject, ObjectIdString, Page } from "../http/schema-helpers.ts";
import { TOPIC_KEY_PATTERN } from "../http/validation.ts";

export const MAX_TOPIC_SUBSCRIBERS_PER_CALL = 10_000;
/**
 * The same, written with thousands separators for the API's descriptions. Not `toLocaleString`:
 * that loads ICU's number formatting at start-up, some 5 MB of resident memory for two strings.
 */
export const MAX_TOPIC_SUBSCRIBERS_TEXT = String(MAX_TOPIC_SUBSCRIBERS_PER_CALL).replace(
  /\B(?=(\d{3})+$)/g,
  ",",
);

const TopicKey = Type.String({
  pattern: TOPIC_KEY_PATTERN,
  description: "The topic's key: 1–100 letters, digits or the characters _ : . -",
  examples: ["team:engineering"],
});

export const Topic = Type.Object(
  {
    _id: ObjectIdString("The topic's id"),
    _organizationId: ObjectIdString("The organization"),
    _environmentId: ObjectIdString("The environment"),
    key: Type.String(),
    name: Type.String(),
    subscribers: Type.Array(Type.String(), { description: "The subscriberIds of the topic's subscribers" }),
    createdAt: Type.String({ format: "date-time" }),
    updatedAt: Type.String({ format: "date-time" }),
  },
  { title: "Topic", additionalProperties: false },
);
export type TopicResource = Static<typeof Topic>;

export const CreatedTopic = Type.Object(
  {
    data: Type.Object(
      { _id: ObjectIdString("The topic's id"), key: Type.String() },
      { additionalProperties: false },
    ),
  },
  { title: "TopicCreated", additionalProperties: false },
);

export const TopicPage = Page("TopicPage", Topic, { things: "topics", order: "Oldest first" });

export const TopicSubscriber = Type.Object(
  {
    _organizationId: ObjectIdString("The organization"),
    _environmentId: ObjectIdString("The environment"),
    _subscriberId: ObjectIdString("Our id for the subscriber"),
    _topicId: ObjectIdString("The topic's id"),
    topicKey: Type.String(),
    externalSubscriberId: Type.String({ description: "Your subscriberId" }),
  },
  { title: "TopicSubscriber", additionalProperties: false },
);

export const AddedSubscribers = Type.Object(
  {
    data: Type.Object(
      {
        succeeded: Type.Array(Type.String(), { description: "The subscriberIds now in the topic" }),
        failed: Type.Object(
          { notFound: Type.Array(Type.String(), { description: "subscriberIds with no subscriber" }) },
          { additionalProperties: false },
        ),
      },
      { additionalProperties: false },
    ),
  },
  { title: "TopicSubscribersAdded", additionalProperties: false },
);

export const CreateTopicBody = Type.Object(
  {
    key: TopicKey,
    name: Type.String({ maxLength: 1000, description: "1–200 characters after trimming" }),
  },
  { additionalProperties: false },
);
export type CreateTopicInput = Static<typeof CreateTopicBody>;

export const RenameTopicBody = Type.Object(
  { name: Type.String({ maxLength: 1000, description: "1–200 characters after trimming" }) },
  { additionalProperties: false },
);

export const TopicSubscribersBody = Type.Object(
  {
    subscribers: Type.Array(Type.String({ maxLength: 1000 }), {
      maxItems: MAX_TOPIC_SUBSCRIBERS_PER_CALL,
      description: `subscriberIds, at most ${MAX_TOPIC_SUBSCRIBERS_TEXT}`,
    }),
  },
  { additionalProperties: false },
);

export const TopicKeyParams = Type.Object({ topicKey: TopicKey });

export const TopicSubscriberParams = Type.Object({
  topicKey: TopicKey,
  subscriberId: Type.String({ maxLength: 1000, description: "Your subscriberId" }),
});

export const ListTopicsQuery = Type.Object({
  page: Type.Optional(
    Type.Integer({ minimum: 0, maximum: 1_000_000, description: "Zero-based page number; default 0" }),
  ),
  pageSize: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 100, description: "Page size, 1–100; default 10" }),
  ),
  key: Type.Optional(Type.String({ maxLength: 100, description: "Only the topic with this key" })),
});

// ---------------------------------------------------------------- subscriptions and their preferences

// A subscription's preferences, as Novu's inbox (/v1/inbox) and its /v2 API (@novu/api) show them.

const Severity = Type.Unsafe<"high" | "medium" | "low" | "none">({
  type: "string",
  enum: ["high", "medium", "low", "none"],
});

export const InboxWorkflow = Type.Object(
  {
    id: Type.String({ description: "The workflow's _id" }),
    identifier: Type.String({ description: "Its trigger identifier" }),
    name: Type.String(),
    critical: Type.Boolean({ description: "A critical workflow is always delivered" }),
    tags: Type.Array(Type.String()),
    severity: Severity,
  },
  { additionalProperties: false },
);

/** JSON Logic over `{payload}`; null removes the condition. */
export const Condition = Type.Optional(
  Type.Unsafe<unknown>({ description: "A JSON Logic rule over `{payload}` (null removes it)" }),
);

export const SubscriptionPreferenceSchema = Type.Object(
  {
    subscriptionId: Type.String({ description: "The subscription's identifier" }),
    workflow: InboxWorkflow,
    enabled: Type.Boolean(),
    condition: Type.Optional(Type.Unsafe<unknown>({ description: "The JSON Logic rule, when one is set" })),
    channels: Type.Object(
      {
        email: Type.Boolean(),
        sms: Type.Boolean(),
        in_app: Type.Boolean(),
        chat: Type.Boolean(),
        push: Type.Boolean(),
      },
      {
        additionalProperties: false,
        description:
          "Ours: the channels the subscription lets through (a channel turned off here is skipped)",
      },
    ),
  },
  { title: "InboxSubscriptionPreference", additionalProperties: false },
);

/**
 * Which workflows a subscription's preferences name, as Novu's clients send them: an _id or
 * identifier, `{workflowId, enabled?, condition?}`, or `{filter: {workflowIds?, tags?}, enabled?, condition?}`.
 */
export const PreferenceFilter = Type.Union([
  Type.String({ minLength: 1, maxLength: 200, description: "A workflow's _id or identifier" }),
  Type.Object(
    {
      workflowId: Type.String({ minLength: 1, maxLength: 200 }),
      enabled: Type.Optional(Type.Boolean()),
      condition: Condition,
    },
    { additionalProperties: false },
  ),
  Type.Object(
    {
      filter: Type.Object(
        {
          workflowIds: Type.Optional(
            Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 100 }),
          ),
          tags: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 50 })),
        },
        { additionalProperties: false },
      ),
      enabled: Type.Optional(Type.Boolean()),
      condition: Condition,
    },
    { additionalProperties: false },
  ),
]);

export const SubscriptionSchema = Type.Object(
  {
    id: Type.String({ description: "The subscription's id" }),
    identifier: Type.String({
      description: "Unique in its topic; Novu's default is `tk_<topicKey>:si_<subscriberId>`",
    }),
    name: Type.Optional(Type.String()),
    preferences: Type.Array(SubscriptionPreferenceSchema),
  },
  { title: "InboxTopicSubscription", additionalProperties: false },
);

// ---------------------------------------------------------------- Novu's /v2 (@novu/api 3)

export const TopicV2 = Type.Object(
  {
    _id: ObjectIdString("The topic's id"),
    key: Type.String(),
    name: Type.String({ description: "Empty when it was made without one" }),
    data: FreeObject("Your own data about the topic"),
    createdAt: Type.String({ format: "date-time" }),
    updatedAt: Type.String({ format: "date-time" }),
  },
  { title: "TopicV2", additionalProperties: false },
);

export const TopicCursorPage = CursorPageOf("TopicCursorPage", TopicV2, "topics");

export const TopicsV2Query = Type.Object({
  ...cursorQueryFields("topics", ["_id", "createdAt", "updatedAt"]),
  key: Type.Optional(Type.String({ maxLength: 100, description: "Only the topic with this key" })),
  name: Type.Optional(
    Type.String({ maxLength: 1000, description: "Only topics whose name contains it (any case)" }),
  ),
});

const TopicData = Type.Optional(
  Type.Union([
    FreeObject("Your own data about the topic (replaces what it had; null empties it)"),
    Type.Null(),
  ]),
);

export const UpsertTopicBody = Type.Object(
  {
    key: TopicKey,
    name: Type.Optional(Type.String({ maxLength: 1000, description: "1–200 characters after trimming" })),
    data: TopicData,
  },
  { additionalProperties: false },
);

export const UpsertTopicQuery = Type.Object({
  failIfExists: Type.Optional(
    Type.Boolean({ description: "true: a key the environment has already is a 409 (which names the topic)" }),
  ),
});

export const UpdateTopicV2Body = Type.Object(
  {
    name: Type.Optional(Type.String({ maxLength: 1000, description: "1–200 characters after trimming" })),
    data: TopicData,
  },
  { additionalProperties: false },
);

export const TopicExists = ErrorBodyWith("TopicExists", TopicV2.properties);

export const TopicDeletedV2 = Type.Object(
  { data: Type.Object({ acknowledged: Type.Literal(true) }, { additionalProperties: false }) },
  { title: "TopicDeletedV2", additionalProperties: false },
);

export const SubscriptionV2 = Type.Object(
  {
    _id: Type.String({ description: "The subscription's id" }),
    identifier: Type.String({
      description: "Unique in its topic; Novu's default is `tk_<topicKey>:si_<subscriberId>`",
    }),
    name: Type.String({ description: "Empty when it has none" }),
    topic: TopicV2,
    subscriber: Type.Union([
      Type.Object(
        {
          _id: ObjectIdString("Our id for the subscriber"),
          subscriberId: Type.String(),
          firstName: Type.String(),
          lastName: Type.String(),
          email: Type.String(),
          avatar: Type.String(),
        },
        { additionalProperties: false },
      ),
      Type.Null(),
    ]),
    preferences: Type.Array(SubscriptionPreferenceSchema, {
      description: "The subscription's own preference per workflow, which a trigger to the topic honours",
    }),
    createdAt: Type.String({ format: "date-time" }),
    updatedAt: Type.String({ format: "date-time", description: "When its name or preferences last changed" }),
  },
  { title: "TopicSubscriptionV2", additionalProperties: false },
);

export const SubscriptionCursorPage = CursorPageOf(
  "TopicSubscriptionCursorPage",
  SubscriptionV2,
  "subscriptions",
);

const ContextKeys = Type.Optional(
  Type.Union(
    [Type.String({ maxLength: 200 }), Type.Array(Type.String({ maxLength: 200 }), { maxItems: 50 })],
    {
      description: "Accepted and not used: Tidings has no contexts",
    },
  ),
);

export const TopicSubscriptionsQuery = Type.Object({
  ...cursorQueryFields("subscriptions", ["_id", "createdAt"]),
  subscriberId: Type.Optional(Type.String({ maxLength: 1000, description: "Only this subscriber's" })),
  contextKeys: ContextKeys,
});

export const SubscriberSubscriptionsQuery = Type.Object({
  ...cursorQueryFields("subscriptions", ["_id", "createdAt"]),
  key: Type.Optional(Type.String({ maxLength: 100, description: "Only the subscription to this topic" })),
  contextKeys: ContextKeys,
});

const Context = Type.Optional(
  Type.Unsafe<Record<string, unknown>>({
    type: "object",
    description: "Accepted and not used: Tidings has no contexts",
  }),
);

const SubscriberIdItem = Type.String({ minLength: 1, maxLength: 1000, description: "A subscriberId" });

export const CreateSubscriptionsBody = Type.Object(
  {
    subscriberIds: Type.Optional(
      Type.Array(SubscriberIdItem, { maxItems: 100, description: "Deprecated by Novu for `subscriptions`" }),
    ),
    subscriptions: Type.Optional(
      Type.Array(
        Type.Union([
          SubscriberIdItem,
          Type.Object(
            {
              subscriberId: SubscriberIdItem,
              identifier: Type.String({ maxLength: 255 }),
              name: Type.Optional(Type.String({ maxLength: 1000 })),
            },
            { additionalProperties: false },
          ),
        ]),
        { maxItems: 100 },
      ),
    ),
    name: Type.Optional(
      Type.String({ maxLength: 1000, description: "The name of the topic, when this call creates it" }),
    ),
    context: Context,
    preferences: Type.Optional(Type.Array(PreferenceFilter, { maxItems: 100 })),
  },
  { additionalProperties: false },
);

export const DeleteSubscriptionsBody = Type.Object(
  {
    subscriberIds: Type.Optional(Type.Array(SubscriberIdItem, { maxItems: 100 })),
    subscriptions: Type.Optional(
      Type.Array(
        Type.Union([
          SubscriberIdItem,
          Type.Object(
            {
              subscriberId: Type.Optional(SubscriberIdItem),
              identifier: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
            },
            { additionalProperties: false },
          ),
        ]),
        { maxItems: 100 },
      ),
    ),
  },
  { additionalProperties: false },
);

const ItemFailureSchema = Type.Object(
  { subscriberId: Type.String(), code: Type.String(), message: Type.String() },
  { additionalProperties: false },
);

export const SubscriptionsOutcome = Type.Object(
  {
    data: Type.Array(SubscriptionV2),
    meta: Type.Object(
      { totalCount: Type.Integer(), successful: Type.Integer(), failed: Type.Integer() },
      { additionalProperties: false },
    ),
    errors: Type.Array(ItemFailureSchema, { description: "The items refused, each with why" }),
  },
  { title: "TopicSubscriptionsOutcome", additionalProperties: false },
);

export const SubscriptionParamsV2 = Type.Object({
  topicKey: TopicKey,
  identifier: Type.String({
    minLength: 1,
    maxLength: 255,
    description: "The subscription's identifier (or id)",
  }),
});

export const UpdateSubscriptionV2Body = Type.Object(
  {
    name: Type.Optional(Type.String({ maxLength: 1000 })),
    preferences: Type.Optional(Type.Array(PreferenceFilter, { maxItems: 100 })),
  },
  { additionalProperties: false },
);
