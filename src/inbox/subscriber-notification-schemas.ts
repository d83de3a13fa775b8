import { Type } from "typebox";
import { ObjectIdString } from "../http/schema-helpers.ts";
import { SubscriberIdParams } from "../subscribers/schemas.ts";
import { BulkBody, CountQuery, NotificationsQuery, SeenBody } from "./notification-schemas.ts";

// The API key's mirror of Novu's current inbox (/v2/subscribers/:subscriberId/notifications), as
// @novu/api 3 calls it: the inbox's filters and bodies, with the subscriber named in the path.

const ContextKey = Type.String({ maxLength: 200 });

/** Novu's contexts narrow what a call sees; Tidings has none, so every notification is in scope. */
const ContextKeys = Type.Optional(
  Type.Union([ContextKey, Type.Array(ContextKey, { maxItems: 100 })], {
    description: "Accepted and not used: Tidings has no contexts (ours)",
  }),
);

export const SubscriberNotificationParams = Type.Object({
  ...SubscriberIdParams.properties,
  notificationId: ObjectIdString("The notification (its in-app message's id)"),
});

export const SubscriberNotificationActionParams = Type.Object({
  ...SubscriberNotificationParams.properties,
  actionType: Type.Unsafe<"primary" | "secondary">({
    type: "string",
    enum: ["primary", "secondary"],
    description: "Which of the notification's two actions",
  }),
});

export const ContextQuery = Type.Object({ contextKeys: ContextKeys });

export const SubscriberNotificationsQuery = Type.Object({
  ...NotificationsQuery.properties,
  contextKeys: ContextKeys,
});

export const SubscriberCountQuery = Type.Object({ ...CountQuery.properties, contextKeys: ContextKeys });

export const SubscriberBulkBody = Type.Object(
  { ...BulkBody.properties, contextKeys: ContextKeys },
  { additionalProperties: false },
);

export const SubscriberSeenBody = Type.Object(
  { ...SeenBody.properties, contextKeys: ContextKeys },
  { additionalProperties: false },
);
