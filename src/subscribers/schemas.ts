import { type Static, Type } from "typebox";
import { ErrorBodyWith } from "../errors.ts";
import {
  CursorPageOf,
  cursorQueryFields,
  described,
  FreeObject,
  ObjectIdString,
  Page,
} from "../http/schema-helpers.ts";
import { SUBSCRIBER_ID_PATTERN } from "../http/validation.ts";
import { Trigger } from "../workflows/schemas.ts";

export const MAX_BULK_SUBSCRIBERS = 500;

// ---------------------------------------------------------------- responses

export const ChannelCredentials = Type.Object(
  {
    webhookUrl: Type.String({
      description:
        "The chat webhook, masked: its scheme, host and port, then `/********` (the path is the secret); empty when unset",
    }),
    deviceTokens: Type.Array(Type.String(), { description: "Push device tokens, each masked as `********`" }),
  },
  { additionalProperties: false },
);

export const SubscriberChannel = Type.Object(
  {
    providerId: Type.String({ description: "The provider the credentials are for" }),
    integrationIdentifier: Type.String({ description: "The integration named when they were set, or empty" }),
    _integrationId: Type.String({ description: "The integration they are bound to, or empty" }),
    credentials: described(
      ChannelCredentials,
      "Sealed at rest and masked in every answer; sent back masked, a credential keeps its stored value",
    ),
  },
  { additionalProperties: false },
);

export const Subscriber = Type.Object(
  {
    _id: ObjectIdString("Our id for the subscriber (not your subscriberId)"),
    _organizationId: ObjectIdString("The organization"),
    _environmentId: ObjectIdString("The environment"),
    subscriberId: Type.String({ description: "Your id for the subscriber, unique in the environment" }),
    firstName: Type.String(),
    lastName: Type.String(),
    email: Type.String(),
    phone: Type.String(),
    avatar: Type.String(),
    locale: Type.String(),
    timezone: Type.String({
      description:
        "An IANA timezone (`Europe/Paris`); the subscriber's schedule is read on its clocks. Empty: UTC",
    }),
    data: FreeObject("Your own data about the subscriber"),
    channels: Type.Array(SubscriberChannel, { description: "Delivery credentials, one entry per provider" }),
    isOnline: Type.Boolean(),
    lastOnlineAt: Type.String({ description: "When the online status was last set; empty until then" }),
    deleted: Type.Boolean({ description: "Always false: a deleted subscriber is gone" }),
    createdAt: Type.String({ format: "date-time" }),
    updatedAt: Type.String({ format: "date-time" }),
  },
  { title: "Subscriber", additionalProperties: false },
);
export type SubscriberResource = Static<typeof Subscriber>;

export const SubscriberPage = Page("SubscriberPage", Subscriber, {
  things: "subscribers",
  order: "Oldest first",
});

export const SubscriberDeleted = Type.Object(
  {
    data: Type.Object(
      { acknowledged: Type.Literal(true), status: Type.Literal("deleted") },
      { additionalProperties: false },
    ),
  },
  { title: "SubscriberDeleted", additionalProperties: false },
);

const SubscriberRef = Type.Object({ subscriberId: Type.String() }, { additionalProperties: false });

export const BulkResult = Type.Object(
  {
    data: Type.Object(
      {
        created: Type.Array(SubscriberRef, { description: "Subscribers that did not exist before" }),
        updated: Type.Array(SubscriberRef, { description: "Subscribers that existed and were updated" }),
        failed: Type.Array(
          Type.Object(
            {
              subscriberId: Type.String(),
              message: Type.String({ description: "Why the item was refused" }),
            },
            { additionalProperties: false },
          ),
          { description: "Items that were refused; nothing was written for them" },
        ),
      },
      { additionalProperties: false },
    ),
  },
  { title: "BulkSubscribersResult", additionalProperties: false },
);

export const PreferenceChannels = Type.Object(
  {
    email: Type.Boolean(),
    sms: Type.Boolean(),
    in_app: Type.Boolean(),
    chat: Type.Boolean(),
    push: Type.Boolean(),
  },
  { additionalProperties: false },
);

export const PreferenceTemplate = Type.Object(
  {
    _id: ObjectIdString("The workflow's id"),
    name: Type.String(),
    critical: Type.Boolean({
      description: "A critical workflow is always delivered and cannot be turned off",
    }),
    triggers: Type.Array(Trigger),
    tags: Type.Array(Type.String()),
  },
  { additionalProperties: false },
);

export const EffectivePreference = Type.Object(
  {
    enabled: Type.Boolean(),
    channels: PreferenceChannels,
  },
  { additionalProperties: false },
);

/**
 * A workflow's preference: only the channels its active steps use, and for each, where its value
 * comes from (`template`: the workflow's settings; `subscriber`: the subscriber's own choice).
 */
export const WorkflowEffectivePreference = Type.Object(
  {
    enabled: Type.Boolean(),
    channels: Type.Object(
      {
        email: Type.Optional(Type.Boolean()),
        sms: Type.Optional(Type.Boolean()),
        in_app: Type.Optional(Type.Boolean()),
        chat: Type.Optional(Type.Boolean()),
        push: Type.Optional(Type.Boolean()),
      },
      { additionalProperties: false, description: "The channels the workflow's active steps use" },
    ),
    overrides: Type.Array(
      Type.Object(
        {
          channel: Type.Union([
            Type.Literal("email"),
            Type.Literal("sms"),
            Type.Literal("in_app"),
            Type.Literal("chat"),
            Type.Literal("push"),
          ]),
          source: Type.Union([Type.Literal("template"), Type.Literal("subscriber")]),
        },
        { additionalProperties: false },
      ),
      { description: "Where each channel's value comes from" },
    ),
  },
  { additionalProperties: false },
);

export const WorkflowPreference = Type.Object(
  { template: PreferenceTemplate, preference: WorkflowEffectivePreference },
  { title: "SubscriberWorkflowPreference", additionalProperties: false },
);
export type WorkflowPreferenceResource = Static<typeof WorkflowPreference>;

// ---------------------------------------------------------------- the weekly schedule

const TimeText = Type.String({
  maxLength: 16,
  description: "A 12-hour clock time: `09:00 AM`",
  examples: ["09:00 AM"],
});

const DaySchedule = Type.Object(
  {
    isEnabled: Type.Boolean(),
    hours: Type.Optional(
      Type.Array(Type.Object({ start: TimeText, end: TimeText }, { additionalProperties: false }), {
        maxItems: 24,
      }),
    ),
  },
  { additionalProperties: false },
);

export const ScheduleSchema = Type.Object(
  {
    isEnabled: Type.Boolean({ description: "Whether the schedule holds steps outside its hours back" }),
    weeklySchedule: Type.Optional(
      Type.Object(
        {
          monday: Type.Optional(DaySchedule),
          tuesday: Type.Optional(DaySchedule),
          wednesday: Type.Optional(DaySchedule),
          thursday: Type.Optional(DaySchedule),
          friday: Type.Optional(DaySchedule),
          saturday: Type.Optional(DaySchedule),
          sunday: Type.Optional(DaySchedule),
        },
        { additionalProperties: false },
      ),
    ),
  },
  {
    additionalProperties: false,
    description:
      "The hours of each day (on the subscriber's timezone) when steps other than in-app may be delivered",
  },
);

export const GlobalPreference = Type.Object(
  {
    preference: EffectivePreference,
    schedule: Type.Optional(ScheduleSchema),
  },
  { title: "SubscriberGlobalPreference", additionalProperties: false },
);
export type GlobalPreferenceResource = Static<typeof GlobalPreference>;

// ---------------------------------------------------------------- requests

const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) =>
  Type.Optional(Type.Union([schema, Type.Null()]));

export const CredentialsInput = Type.Object(
  {
    webhookUrl: Type.Optional(Type.String({ maxLength: 2048, description: "An http(s) URL" })),
    deviceTokens: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 4096 }), { maxItems: 100 }),
    ),
  },
  { additionalProperties: false },
);
export type CredentialsInputValue = Static<typeof CredentialsInput>;

const ProviderId = Type.String({
  pattern: "^[A-Za-z0-9_-]{1,100}$",
  description: "The provider's id (`slack`, `discord`, `msteams`, `mattermost`, `fcm`...)",
  examples: ["slack"],
});

export const ChannelInput = Type.Object(
  {
    providerId: ProviderId,
    integrationIdentifier: Type.Optional(Type.String({ maxLength: 200 })),
    credentials: CredentialsInput,
  },
  { additionalProperties: false },
);
export type ChannelInputValue = Static<typeof ChannelInput>;

const profileFields = {
  email: Nullable(Type.String({ maxLength: 320, description: "An email address, or empty to clear it" })),
  firstName: Nullable(Type.String({ maxLength: 1000 })),
  lastName: Nullable(Type.String({ maxLength: 1000 })),
  phone: Nullable(Type.String({ maxLength: 100 })),
  avatar: Nullable(Type.String({ maxLength: 2048, description: "A URL of the subscriber's picture" })),
  locale: Nullable(Type.String({ maxLength: 35, description: "A language tag: `en`, `en-US`, `pt_BR`" })),
  timezone: Nullable(
    Type.String({
      maxLength: 64,
      description:
        "An IANA timezone (`Europe/Paris`), or empty: the clocks the subscriber's schedule is read on",
    }),
  ),
  data: Type.Optional(
    Type.Union([FreeObject("Your own data about the subscriber (at most 64 KiB as JSON)"), Type.Null()]),
  ),
  channels: Type.Optional(Type.Array(ChannelInput, { maxItems: 20 })),
};

export const CreateSubscriberBody = Type.Object(
  {
    subscriberId: Type.String({
      maxLength: 1000,
      description: "Your id for the subscriber: 1–128 characters, no control characters",
      examples: ["user-123"],
    }),
    ...profileFields,
  },
  { additionalProperties: false },
);
export type CreateSubscriberInput = Static<typeof CreateSubscriberBody>;

export const UpdateSubscriberBody = Type.Object(profileFields, { additionalProperties: false });
export type UpdateSubscriberInput = Static<typeof UpdateSubscriberBody>;

export const BulkCreateBody = Type.Object(
  {
    subscribers: Type.Array(CreateSubscriberBody, {
      maxItems: MAX_BULK_SUBSCRIBERS,
      description: `At most ${MAX_BULK_SUBSCRIBERS} subscribers`,
    }),
  },
  { additionalProperties: false },
);

export const CredentialsBody = Type.Object(
  {
    providerId: ProviderId,
    integrationIdentifier: Type.Optional(Type.String({ maxLength: 200 })),
    credentials: CredentialsInput,
  },
  { additionalProperties: false },
);

export const OnlineStatusBody = Type.Object(
  {
    isOnline: Type.Optional(Type.Boolean({ description: "Whether the subscriber is online now" })),
    online: Type.Optional(
      Type.Boolean({ description: "The same, as @novu/node's updateOnlineStatus sends it" }),
    ),
  },
  { additionalProperties: false },
);

const ChannelType = Type.Unsafe<"email" | "sms" | "in_app" | "chat" | "push">({
  type: "string",
  enum: ["email", "sms", "in_app", "chat", "push"],
});

export const UpdatePreferenceBody = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean({ description: "The whole workflow on or off for the subscriber" })),
    channel: Type.Optional(
      Type.Object({ type: ChannelType, enabled: Type.Boolean() }, { additionalProperties: false }),
    ),
  },
  { additionalProperties: false },
);
export type UpdatePreferenceInput = Static<typeof UpdatePreferenceBody>;

export const UpdateGlobalPreferenceBody = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean({ description: "Every notification on or off for the subscriber" })),
    preferences: Type.Optional(
      Type.Array(
        Type.Object({ type: ChannelType, enabled: Type.Boolean() }, { additionalProperties: false }),
        {
          maxItems: 20,
        },
      ),
    ),
  },
  { additionalProperties: false },
);
export type UpdateGlobalPreferenceInput = Static<typeof UpdateGlobalPreferenceBody>;

const SubscriberIdParam = Type.String({
  pattern: SUBSCRIBER_ID_PATTERN,
  description: "Your id for the subscriber",
  examples: ["user-123"],
});

export const SubscriberIdParams = Type.Object({ subscriberId: SubscriberIdParam });

export const CredentialsParams = Type.Object({ subscriberId: SubscriberIdParam, providerId: ProviderId });

export const PreferenceParams = Type.Object({
  subscriberId: SubscriberIdParam,
  workflowId: Type.String({
    pattern: "^[A-Za-z0-9_-]{1,100}$",
    description: "The workflow's _id or its trigger identifier",
  }),
});

export const PreferenceLevelParams = Type.Object({
  subscriberId: SubscriberIdParam,
  level: Type.Unsafe<"global" | "template">({
    type: "string",
    enum: ["global", "template"],
    description: "`global`: the subscriber's global preference; `template`: one per active workflow",
  }),
});

export const ListSubscribersQuery = Type.Object({
  page: Type.Optional(
    Type.Integer({ minimum: 0, maximum: 1_000_000, description: "Zero-based page number; default 0" }),
  ),
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 100, description: "Page size, 1–100; default 10" }),
  ),
  search: Type.Optional(
    Type.String({
      maxLength: 200,
      description:
        "Only subscribers whose subscriberId, firstName, lastName, email or phone contains this text (any case)",
    }),
  ),
});

// ---------------------------------------------------------------- /v2 (Novu's current API, @novu/api 3)

export const SubscriberSearchQuery = Type.Object({
  ...cursorQueryFields("subscribers", ["_id", "createdAt", "updatedAt"]),
  email: Type.Optional(
    Type.String({ maxLength: 320, description: "Only those whose email contains it (any case)" }),
  ),
  phone: Type.Optional(Type.String({ maxLength: 100, description: "Only those whose phone contains it" })),
  subscriberId: Type.Optional(
    Type.String({ maxLength: 1000, description: "Only the one with this subscriberId" }),
  ),
  name: Type.Optional(
    Type.String({
      maxLength: 2001,
      description: 'Only those whose "firstName lastName" contains it (any case)',
    }),
  ),
});

export const SubscriberCursorPage = CursorPageOf("SubscriberCursorPage", Subscriber, "subscribers");

export const CreateSubscriberQuery = Type.Object({
  failIfExists: Type.Optional(
    Type.Boolean({
      description:
        "true: a subscriberId the environment has already is a 409 (which names it), not an update",
    }),
  ),
});

export const SubscriberExists = ErrorBodyWith("SubscriberExists", Subscriber.properties);
