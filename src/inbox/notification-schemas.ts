import { Type } from "typebox";
import { FreeObject, ObjectIdString } from "../http/schema-helpers.ts";
import { SEVERITIES } from "../workflows/domain.ts";

// Novu's current inbox (@novu/js) and its notifications: what the client sends and reads.

const Severity = Type.Unsafe<(typeof SEVERITIES)[number]>({
  type: "string",
  enum: [...SEVERITIES],
  description: "The workflow's severity when the notification was written",
});
const Moment = Type.String({ format: "date-time" });

const Redirect = Type.Object(
  {
    url: Type.String(),
    target: Type.Optional(
      Type.String({ description: "_self, _blank, _parent, _top or _unfencedTop", maxLength: 20 }),
    ),
  },
  { additionalProperties: false },
);

const Action = Type.Object(
  {
    label: Type.String(),
    isCompleted: Type.Boolean({ description: "Whether the subscriber completed this action" }),
    redirect: Type.Optional(Redirect),
  },
  { additionalProperties: false },
);

export const InboxNotification = Type.Object(
  {
    id: ObjectIdString("The notification's (its in-app message's) id"),
    transactionId: Type.String(),
    subject: Type.Optional(Type.String()),
    body: Type.String({ description: "The rendered content" }),
    to: Type.Object(
      {
        id: ObjectIdString("The subscriber's _id"),
        subscriberId: Type.String(),
        firstName: Type.Optional(Type.String()),
        lastName: Type.Optional(Type.String()),
        avatar: Type.Optional(Type.String()),
      },
      { additionalProperties: false },
    ),
    isRead: Type.Boolean(),
    isSeen: Type.Boolean(),
    isArchived: Type.Boolean(),
    isSnoozed: Type.Boolean(),
    snoozedUntil: Type.Optional(Moment),
    deliveredAt: Type.Array(Moment, { description: "When it was delivered: written, and after each snooze" }),
    createdAt: Moment,
    readAt: Type.Optional(Moment),
    firstSeenAt: Type.Optional(Moment),
    archivedAt: Type.Optional(Moment),
    avatar: Type.Optional(Type.String()),
    primaryAction: Type.Optional(Action),
    secondaryAction: Type.Optional(Action),
    channelType: Type.Literal("in_app"),
    tags: Type.Array(Type.String(), { description: "The workflow's tags when it was written" }),
    data: FreeObject("The in-app step's data, rendered"),
    redirect: Type.Optional(Redirect),
    workflow: Type.Optional(
      Type.Object(
        {
          id: ObjectIdString("The workflow"),
          identifier: Type.String(),
          name: Type.String(),
          critical: Type.Boolean(),
          tags: Type.Array(Type.String()),
          severity: Severity,
        },
        { additionalProperties: false },
      ),
    ),
    severity: Severity,
  },
  { title: "InboxNotification", additionalProperties: false },
);

const BooleanText = Type.Unsafe<"true" | "false" | boolean>({
  anyOf: [{ type: "string", enum: ["true", "false"] }, { type: "boolean" }],
});
const TagList = Type.Union([
  Type.String({ maxLength: 200 }),
  Type.Array(Type.String({ maxLength: 200 }), { maxItems: 100 }),
]);

/**
 * The list's query string. `tags[]` is one OR group; `tags[0][]`, `tags[1][]`... are groups all of
 * which must match (those keys are read beside the schema, which lets them through).
 */
export const NotificationsQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: "Default 10" })),
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 100_000 })),
  after: Type.Optional(ObjectIdString("The id of the last notification of the previous page")),
  tags: Type.Optional(TagList),
  read: Type.Optional(BooleanText),
  seen: Type.Optional(BooleanText),
  archived: Type.Optional(BooleanText),
  snoozed: Type.Optional(BooleanText),
  data: Type.Optional(
    Type.String({ maxLength: 10_000, description: "A JSON object of data fields to match" }),
  ),
  severity: Type.Optional(
    Type.Union([Type.String({ maxLength: 20 }), Type.Array(Type.String({ maxLength: 20 }), { maxItems: 4 })]),
  ),
  createdGte: Type.Optional(Type.String({ maxLength: 20, description: "Epoch milliseconds" })),
  createdLte: Type.Optional(Type.String({ maxLength: 20, description: "Epoch milliseconds" })),
});

export const NotificationsPage = Type.Object(
  {
    data: Type.Array(InboxNotification, { description: "Newest first" }),
    hasMore: Type.Boolean(),
    filter: FreeObject("The filter of the page, as it was read"),
  },
  { title: "InboxNotificationsPage", additionalProperties: false },
);

export const CountQuery = Type.Object({
  filters: Type.String({
    maxLength: 50_000,
    description:
      "A JSON array of at most 30 filters ({tags, read, seen, archived, snoozed, data, severity, createdGte, createdLte})",
  }),
});

export const CountsResponse = Type.Object(
  {
    data: Type.Array(
      Type.Object(
        { count: Type.Integer({ minimum: 0 }), filter: FreeObject("The filter, as sent") },
        { additionalProperties: false },
      ),
      { description: "One count per filter, in the order sent" },
    ),
  },
  { title: "InboxNotificationCounts", additionalProperties: false },
);

export const NotificationParams = Type.Object({ id: ObjectIdString("The notification") });

export const NotificationEnvelope = Type.Object({ data: InboxNotification }, { additionalProperties: false });

export const SnoozeBody = Type.Object(
  {
    snoozeUntil: Type.String({
      format: "date-time",
      description: "When it comes back: in the future, within maxSnoozeDurationHours",
    }),
  },
  { additionalProperties: false },
);

export const ActionBody = Type.Object(
  {
    actionType: Type.Unsafe<"primary" | "secondary">({ type: "string", enum: ["primary", "secondary"] }),
  },
  { additionalProperties: false },
);

const BodyTags = Type.Optional(
  Type.Union([
    Type.Array(Type.String({ maxLength: 200 }), { maxItems: 100 }),
    FreeObject("{or: [tags]} or {and: [{or: [tags]}, ...]}"),
    Type.Null(),
  ]),
);
const BodyData = Type.Optional(
  Type.Union([
    Type.String({ maxLength: 10_000, description: "A JSON object of data fields to match" }),
    FreeObject("Data fields to match"),
    Type.Null(),
  ]),
);

/** What the bulk routes act on: the notifications with these tags and data (all when neither). */
export const BulkBody = Type.Object({ tags: BodyTags, data: BodyData }, { additionalProperties: false });

export const SeenBody = Type.Object(
  {
    notificationIds: Type.Optional(
      Type.Array(ObjectIdString("A notification"), {
        maxItems: 100,
        description: "These, or all that match",
      }),
    ),
    tags: BodyTags,
    data: BodyData,
  },
  { additionalProperties: false },
);
