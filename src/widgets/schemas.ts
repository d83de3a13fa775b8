import { Type } from "typebox";
import { FreeObject, ObjectIdString, Page } from "../http/schema-helpers.ts";
import { FeedIdentifierQuery, Message } from "../inbox/schemas.ts";

const text = (maxLength: number, description?: string) =>
  Type.String({ maxLength, ...(description ? { description } : {}) });

export const SessionBody = Type.Object(
  {
    applicationIdentifier: Type.String({
      minLength: 1,
      maxLength: 64,
      description: "The environment's public identifier (GET /v1/environments/me)",
    }),
    subscriberId: Type.String({
      pattern: "^[A-Za-z0-9_.:@+=-]{1,128}$",
      description: "Your id for the subscriber",
    }),
    hmacHash: Type.Optional(
      Type.Union([
        Type.String({
          maxLength: 128,
          description: "Hex HMAC-SHA256 of the subscriberId keyed with the environment's API key",
        }),
        Type.Null(),
      ]),
    ),
    firstName: Type.Optional(text(200)),
    lastName: Type.Optional(text(200)),
    email: Type.Optional(text(320)),
    phone: Type.Optional(text(50)),
  },
  { additionalProperties: false },
);

export const Profile = Type.Object(
  {
    _id: ObjectIdString("The subscriber's _id"),
    subscriberId: Type.String(),
    firstName: Type.String(),
    lastName: Type.String(),
    email: Type.String(),
    phone: Type.String(),
    avatar: Type.String(),
  },
  { title: "WidgetProfile", additionalProperties: false },
);

export const SessionResponse = Type.Object(
  {
    data: Type.Object(
      {
        token: Type.String({
          description: 'The session\'s token: send it as "Bearer <token>" and to the socket',
        }),
        expiresAt: Type.String({ format: "date-time" }),
        profile: Profile,
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

/** A message as the widget gets it: the subscriber's profile only, never its credentials. */
export const WidgetMessage = Type.Object(
  { ...Message.properties, subscriber: Type.Optional(Profile) },
  { title: "WidgetMessage", additionalProperties: false },
);

export const WidgetMessagePage = Page("WidgetMessagePage", WidgetMessage, {
  things: "messages",
  order: "Newest first",
});

export const WidgetMessages = Type.Object(
  { data: Type.Array(WidgetMessage) },
  { additionalProperties: false },
);

export const WidgetFeedQuery = Type.Object({
  page: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
  seen: Type.Optional(Type.Boolean()),
  read: Type.Optional(Type.Boolean()),
  payload: Type.Optional(
    Type.String({
      maxLength: 10_000,
      description: "Base64 of a JSON object the messages' payload must contain",
    }),
  ),
  feedIdentifier: FeedIdentifierQuery,
});

export const WidgetCountQuery = Type.Object({
  seen: Type.Optional(Type.Boolean()),
  read: Type.Optional(Type.Boolean()),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: "Count up to this many" })),
  feedIdentifier: FeedIdentifierQuery,
});

export const WidgetMarkAllBody = Type.Object(
  {
    feedId: Type.Optional(
      Type.Union(
        [
          Type.String({ maxLength: 200 }),
          Type.Array(Type.String({ maxLength: 200 }), { maxItems: 20 }),
          Type.Null(),
        ],
        { description: "Only the messages of these feeds (by identifier); all when absent or null" },
      ),
    ),
  },
  { additionalProperties: false },
);

export const WidgetDeleteAllQuery = Type.Object({ feedId: Type.Optional(Type.String({ maxLength: 200 })) });

export const BulkDeleteBody = Type.Object(
  { messageIds: Type.Array(ObjectIdString("A message id"), { minItems: 1, maxItems: 100 }) },
  { additionalProperties: false },
);

export const WidgetActionParams = Type.Object({
  messageId: ObjectIdString("The message"),
  type: Type.Unsafe<"primary" | "secondary">({ type: "string", enum: ["primary", "secondary"] }),
});

export const WidgetActionBody = Type.Object(
  {
    executedType: Type.Optional(
      Type.Unsafe<"primary" | "secondary">({ type: "string", enum: ["primary", "secondary"] }),
    ),
    status: Type.Unsafe<"pending" | "done">({ type: "string", enum: ["pending", "done"] }),
    payload: Type.Optional(FreeObject()),
  },
  { additionalProperties: false },
);

export const WidgetMessageParams = Type.Object({ messageId: ObjectIdString("The message") });

export const Organization = Type.Object(
  {
    data: Type.Object(
      {
        _id: ObjectIdString("The organization"),
        name: Type.String(),
        branding: Type.Object(
          {
            logo: Type.Optional(Type.String()),
            color: Type.Optional(Type.String()),
            fontColor: Type.Optional(Type.String()),
            contentBackground: Type.Optional(Type.String()),
            fontFamily: Type.Optional(Type.String()),
            direction: Type.Optional(Type.String()),
          },
          { additionalProperties: false },
        ),
      },
      { additionalProperties: false },
    ),
  },
  { title: "WidgetOrganization", additionalProperties: false },
);

const ChannelType = Type.Unsafe<"email" | "sms" | "in_app" | "chat" | "push">({
  type: "string",
  enum: ["email", "sms", "in_app", "chat", "push"],
});

/** The widget's global preference body: each preference as it read it, `type` added. */
export const WidgetGlobalPreferenceBody = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean()),
    preferences: Type.Optional(
      Type.Array(
        Type.Object(
          { type: ChannelType, enabled: Type.Boolean(), channelType: Type.Optional(ChannelType) },
          { additionalProperties: false },
        ),
        { maxItems: 20 },
      ),
    ),
  },
  { additionalProperties: false },
);

export const WidgetPreferenceParams = Type.Object({
  templateId: Type.String({
    pattern: "^[A-Za-z0-9_-]{1,100}$",
    description: "The workflow's _id or its trigger identifier",
  }),
});

export const UsageLogBody = Type.Object(
  { name: Type.String({ maxLength: 200 }), payload: Type.Optional(FreeObject()) },
  { additionalProperties: false },
);

export const UsageLogResponse = Type.Object(
  { data: Type.Object({ success: Type.Literal(true) }, { additionalProperties: false }) },
  { additionalProperties: false },
);
