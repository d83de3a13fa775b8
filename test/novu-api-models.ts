// What @novu/api 3.19 parses the answers of /v2/subscribers/:subscriberId/notifications with: its zod
// models (src/models/components/inboxnotificationdto.ts and the models it names,
// getsubscribernotificationsresponsedto.ts, getsubscribernotificationscountresponsedto.ts), written
// out as JSON schemas. A required field missing, or a value of another type or outside an enum, makes
// the SDK throw; fields the models do not name are let through, as zod lets them through. The SDK
// unwraps a body whose one key is `data` before it parses it (its hooks/novu-custom-hook.ts).
import assert from "node:assert/strict";
import { Ajv } from "ajv";

const string = { type: "string" };
const nullableString = { type: ["string", "null"] };
const boolean = { type: "boolean" };
const record = { type: "object" };
const severity = { enum: ["high", "medium", "low", "none"] };
const redirect = {
  type: "object",
  required: ["url"],
  properties: { url: string, target: { enum: ["_self", "_blank", "_parent", "_top", "_unfencedTop"] } },
};
const action = {
  type: "object",
  required: ["label", "isCompleted"],
  properties: { label: string, isCompleted: boolean, redirect },
};

const InboxNotificationDto = {
  type: "object",
  required: [
    "id",
    "transactionId",
    "body",
    "to",
    "isRead",
    "isSeen",
    "isArchived",
    "isSnoozed",
    "createdAt",
    "channelType",
    "severity",
  ],
  properties: {
    id: string,
    transactionId: string,
    subject: string,
    body: string,
    to: {
      type: "object",
      required: ["id", "subscriberId"],
      properties: { id: string, firstName: string, lastName: string, avatar: string, subscriberId: string },
    },
    isRead: boolean,
    isSeen: boolean,
    isArchived: boolean,
    isSnoozed: boolean,
    snoozedUntil: nullableString,
    deliveredAt: { type: "array", items: string },
    createdAt: string,
    readAt: nullableString,
    firstSeenAt: nullableString,
    archivedAt: nullableString,
    avatar: string,
    primaryAction: action,
    secondaryAction: action,
    channelType: { enum: ["in_app", "email", "sms", "chat", "push", "tool"] },
    tags: { type: "array", items: string },
    data: record,
    redirect,
    workflow: {
      type: "object",
      required: ["id", "identifier", "name", "critical", "severity"],
      properties: {
        id: string,
        identifier: string,
        name: string,
        critical: boolean,
        tags: { type: "array", items: string },
        data: record,
        severity,
      },
    },
    severity,
  },
};

const GetSubscriberNotificationsResponseDto = {
  type: "object",
  required: ["data", "hasMore", "filter"],
  properties: { data: { type: "array", items: InboxNotificationDto }, hasMore: boolean, filter: record },
};

const CountsResponse = {
  type: "array",
  items: {
    type: "object",
    required: ["count", "filter"],
    properties: { count: { type: "number" }, filter: record },
  },
};

/** The error body @novu/api reads a 4xx with (src/models/errors/errordto.ts). */
const ErrorDto = {
  type: "object",
  required: ["statusCode", "timestamp", "path", "message"],
  properties: { statusCode: { type: "number" }, timestamp: string, path: string, message: string },
};

const ajv = new Ajv({ strict: false, allErrors: true });
const validators = {
  notification: ajv.compile(InboxNotificationDto),
  list: ajv.compile(GetSubscriberNotificationsResponseDto),
  counts: ajv.compile(CountsResponse),
  error: ajv.compile(ErrorDto),
};

/** The body as the SDK hands it to its model: a body whose one key is `data` is unwrapped. */
function unwrapped(body: unknown): unknown {
  if (body !== null && typeof body === "object" && !Array.isArray(body)) {
    const keys = Object.keys(body);
    if (keys.length === 1 && keys[0] === "data") return (body as { data: unknown }).data;
  }
  return body;
}

/**
 * The answer as @novu/api would hand it out, after checking it against the model the SDK parses it
 * with (`kind`): a single notification (its routes answer `{data: notification}`), a list page, the
 * counts, or an error.
 */
export function asNovuApiReads<T = unknown>(kind: keyof typeof validators, body: unknown): T {
  const value = unwrapped(body);
  const validate = validators[kind];
  assert.ok(
    validate(value),
    `@novu/api's ${kind} model refuses ${JSON.stringify(value)}: ${JSON.stringify(validate.errors)}`,
  );
  return value as T;
}
