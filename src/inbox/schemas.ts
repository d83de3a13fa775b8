import { type Static, Type } from "typebox";
import { badRequest } from "../errors.ts";
import { FreeObject, ObjectIdString, Page } from "../http/schema-helpers.ts";
import { Subscriber, SubscriberIdParams } from "../subscribers/schemas.ts";

const MARK_AS = ["read", "seen", "unread", "unseen"] as const;

export const MessageCta = Type.Object(
  {
    type: Type.String({ description: "redirect" }),
    data: Type.Object(
      { url: Type.Optional(Type.String()), target: Type.Optional(Type.String()) },
      { additionalProperties: false },
    ),
    action: Type.Optional(
      FreeObject("The message's action buttons, and the action's status and result once one was taken"),
    ),
  },
  { additionalProperties: false },
);

export const Message = Type.Object(
  {
    _id: ObjectIdString("The message's id"),
    _environmentId: ObjectIdString("The environment"),
    _organizationId: ObjectIdString("The organization"),
    _notificationId: ObjectIdString("The notification it delivers"),
    _jobId: ObjectIdString("The job that wrote it"),
    _templateId: ObjectIdString("The workflow"),
    _messageTemplateId: ObjectIdString("The workflow (Novu's step template id)"),
    _subscriberId: ObjectIdString("The subscriber's _id"),
    _feedId: Type.Union([Type.String(), Type.Null()], {
      description: "The feed (its _id) its in-app step named; null for none",
    }),
    subscriberId: Type.String({ description: "Your subscriberId" }),
    templateIdentifier: Type.String({ description: "The workflow's trigger identifier" }),
    transactionId: Type.String(),
    channel: Type.String(),
    content: Type.String({ description: "Rendered" }),
    subject: Type.String(),
    cta: MessageCta,
    payload: FreeObject("The trigger's payload"),
    providerId: Type.String(),
    identifier: Type.String({ description: "The provider's id for the message; empty for in-app" }),
    status: Type.String(),
    seen: Type.Boolean(),
    read: Type.Boolean(),
    archived: Type.Boolean({ description: "Archived in the subscriber's inbox" }),
    lastSeenDate: Type.String({ description: "When it was last marked seen; empty until then" }),
    lastReadDate: Type.String({ description: "When it was last marked read; empty until then" }),
    deleted: Type.Boolean(),
    createdAt: Type.String({ format: "date-time" }),
    updatedAt: Type.String({ format: "date-time" }),
    subscriber: Type.Optional(Subscriber),
  },
  { title: "Message", additionalProperties: false },
);
export type MessageResource = Static<typeof Message>;

export const MessagePage = Page("MessagePage", Message, { things: "messages", order: "Newest first" });

const BooleanText = Type.Union([
  Type.Boolean(),
  Type.Unsafe<"true" | "false">({ type: "string", enum: ["true", "false"] }),
]);

/** Novu's `feedIdentifier`: the identifier of a feed, or several (`?feedIdentifier=a&feedIdentifier=b`). */
export const FeedIdentifierQuery = Type.Optional(
  Type.Union(
    [Type.String({ maxLength: 200 }), Type.Array(Type.String({ maxLength: 200 }), { maxItems: 20 })],
    {
      description:
        "Only the messages of these feeds (by identifier, their name): one or several; one no feed has matches nothing",
    },
  ),
);

/** `feedIdentifier` as a list: empty strings dropped, an absent or empty one filtering nothing. */
export function feedIdentifiersOf(value: string | readonly string[] | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  const identifiers = (typeof value === "string" ? [value] : [...value]).filter((id) => id !== "");
  return identifiers.length > 0 ? identifiers : undefined;
}

export const FeedQuery = Type.Object({
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

export const UnseenQuery = Type.Object({
  seen: Type.Optional(Type.Boolean({ description: "Default false: count the unseen" })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
});

export const CountResponse = Type.Object(
  { data: Type.Object({ count: Type.Integer() }, { additionalProperties: false }) },
  { title: "MessageCount", additionalProperties: false },
);

const MessageIds = Type.Union([
  ObjectIdString("A message id"),
  Type.Array(ObjectIdString("A message id"), { minItems: 1, maxItems: 100 }),
]);

export const MarkAsBody = Type.Object(
  {
    messageId: MessageIds,
    markAs: Type.Unsafe<(typeof MARK_AS)[number]>({ type: "string", enum: [...MARK_AS] }),
  },
  { additionalProperties: false },
);

export const LegacyMarkBody = Type.Object(
  {
    messageId: MessageIds,
    mark: Type.Object(
      { seen: Type.Optional(Type.Boolean()), read: Type.Optional(Type.Boolean()) },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

export const MarkAllBody = Type.Object(
  {
    // All four, as Novu takes them and @novu/node's markAllMessagesAs types them.
    markAs: Type.Unsafe<(typeof MARK_AS)[number]>({ type: "string", enum: [...MARK_AS] }),
    feedIdentifier: FeedIdentifierQuery,
  },
  { additionalProperties: false },
);

export const MessagesResponse = Type.Object({ data: Type.Array(Message) }, { additionalProperties: false });
export const MarkAllResponse = Type.Object(
  { data: Type.Integer({ description: "How many messages changed" }) },
  { additionalProperties: false },
);

export const ActionParams = Type.Object({
  subscriberId: SubscriberIdParams.properties.subscriberId,
  messageId: ObjectIdString("The message"),
  type: Type.Unsafe<"primary" | "secondary">({ type: "string", enum: ["primary", "secondary"] }),
});

export const ActionBody = Type.Object(
  {
    status: Type.Unsafe<"pending" | "done">({ type: "string", enum: ["pending", "done"] }),
    payload: Type.Optional(FreeObject()),
  },
  { additionalProperties: false },
);

export const MessageParams = Type.Object({ messageId: ObjectIdString("The message") });
export const TransactionParams = Type.Object({
  transactionId: Type.String({ minLength: 1, maxLength: 255 }),
});

const MessageChannel = Type.Unsafe<"in_app" | "email" | "sms" | "chat" | "push">({
  type: "string",
  enum: ["in_app", "email", "sms", "chat", "push"],
});

/** `channel`: only the messages of that channel. */
export const TransactionMessagesQuery = Type.Object({
  channel: Type.Optional({ ...MessageChannel, description: "Only the messages of this channel" }),
});

export const ListMessagesQuery = Type.Object({
  channel: Type.Optional(MessageChannel),
  subscriberId: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
  transactionId: Type.Optional(
    Type.Union([
      Type.String({ maxLength: 255 }),
      Type.Array(Type.String({ maxLength: 255 }), { maxItems: 100 }),
    ]),
  ),
  page: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
});

export const Deleted = Type.Object(
  {
    data: Type.Object(
      { acknowledged: Type.Literal(true), status: Type.Literal("deleted") },
      { additionalProperties: false },
    ),
  },
  { title: "MessageDeleted", additionalProperties: false },
);

/** The body of a successful delete. */
export const deletedBody = { data: { acknowledged: true as const, status: "deleted" as const } };

/** `payload` of the feed: base64 of a JSON object, or a 400 naming the field. */
export function decodePayloadFilter(value: string | undefined): Record<string, unknown> | undefined {
  if (value === undefined || value === "") return undefined;
  try {
    const decoded = JSON.parse(Buffer.from(value, "base64").toString("utf8")) as unknown;
    if (decoded !== null && typeof decoded === "object" && !Array.isArray(decoded))
      return decoded as Record<string, unknown>;
  } catch {
    // reported below
  }
  throw badRequest("payload must be base64 of a JSON object", [
    { field: "payload", message: "must be base64 of a JSON object" },
  ]);
}

export { BooleanText, SubscriberIdParams };
