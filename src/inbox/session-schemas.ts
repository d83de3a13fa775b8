import { Type } from "typebox";
import { FreeObject } from "../http/schema-helpers.ts";
import { SUBSCRIBER_ID_TEXT_PATTERN } from "../http/validation.ts";
import { ScheduleSchema } from "../subscribers/schemas.ts";

// Novu's current inbox (@novu/js) starting its session: what it sends and what it reads back.

const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) =>
  Type.Optional(Type.Union([schema, Type.Null()]));

const subscriberIdOf = (description: string) =>
  Type.String({ pattern: SUBSCRIBER_ID_TEXT_PATTERN, description });

/** The subscriber as the client names it; the profile fields apply only with a valid hash. */
export const SessionSubscriber = Type.Object(
  {
    subscriberId: subscriberIdOf("Your id for the subscriber"),
    firstName: Nullable(Type.String({ maxLength: 1000 })),
    lastName: Nullable(Type.String({ maxLength: 1000 })),
    email: Nullable(Type.String({ maxLength: 320 })),
    phone: Nullable(Type.String({ maxLength: 100 })),
    avatar: Nullable(Type.String({ maxLength: 2048 })),
    locale: Nullable(Type.String({ maxLength: 35 })),
    timezone: Nullable(
      Type.String({
        maxLength: 100,
        description:
          "An IANA timezone; the browser's inbox sends its own. Kept with a valid hash, as the other fields; " +
          "a zone the service does not know is left out (ours)",
      }),
    ),
    data: Type.Optional(Type.Union([FreeObject("Your own data about the subscriber"), Type.Null()])),
  },
  { additionalProperties: false },
);

/** The schedule a subscriber starts with, as the page gives it (`isEnabled` left out: on). */
const DefaultSchedule = Type.Object(
  {
    isEnabled: Type.Optional(Type.Boolean({ description: "Default true" })),
    weeklySchedule: ScheduleSchema.properties.weeklySchedule,
  },
  {
    additionalProperties: false,
    description:
      "Set as the subscriber's schedule when it has none: for a subscriber the session makes, or with a valid " +
      "subscriberHash",
  },
);

export const InboxSessionBody = Type.Object(
  {
    applicationIdentifier: Type.String({
      minLength: 1,
      maxLength: 64,
      description: "The environment's public identifier (GET /v1/environments/me)",
    }),
    subscriber: Type.Optional(SessionSubscriber),
    subscriberId: Type.Optional(subscriberIdOf("Older clients name the subscriber here")),
    subscriberHash: Type.Optional(
      Type.Union([
        Type.String({
          maxLength: 128,
          description: "Hex HMAC-SHA256 of the subscriberId keyed with the environment's API key",
        }),
        Type.Null(),
      ]),
    ),
    contextHash: Type.Optional(
      Type.Union([
        Type.String({ maxLength: 128, description: "Not used: Tidings has no contexts" }),
        Type.Null(),
      ]),
    ),
    context: Type.Optional(Type.Union([FreeObject("Not used: Tidings has no contexts (ours)"), Type.Null()])),
    defaultSchedule: Type.Optional(Type.Union([DefaultSchedule, Type.Null()])),
  },
  { additionalProperties: false },
);

const Count = Type.Integer({ minimum: 0 });

export const UnreadCount = Type.Object(
  {
    total: Count,
    severity: Type.Object(
      { high: Count, medium: Count, low: Count, none: Count },
      { additionalProperties: false },
    ),
  },
  {
    additionalProperties: false,
    description: "The unread notifications the inbox shows (neither archived nor snoozed), by severity",
  },
);

export const InboxSessionResponse = Type.Object(
  {
    data: Type.Object(
      {
        token: Type.String({
          description: 'The session\'s token: send it as "Bearer <token>", and to the socket',
        }),
        unreadCount: UnreadCount,
        totalUnreadCount: Type.Integer({ description: "unreadCount.total, as older clients read it" }),
        removeNovuBranding: Type.Boolean({ description: "Always false" }),
        isDevelopmentMode: Type.Boolean({ description: "Whether the environment is not Production" }),
        maxSnoozeDurationHours: Type.Integer({
          description: "How far ahead a notification may be snoozed; 0: snoozing is off",
        }),
        applicationIdentifier: Type.String(),
      },
      { additionalProperties: false },
    ),
  },
  { title: "InboxSession", additionalProperties: false },
);
