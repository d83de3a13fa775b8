import { type Static, Type } from "typebox";
import { FreeObject, ObjectIdString, Page } from "../http/schema-helpers.ts";
import { Step, Trigger } from "../workflows/schemas.ts";
import { NOTIFICATION_STATUSES, type NotificationStatus } from "./status.ts";

const StringList = Type.Union([
  Type.String({ maxLength: 200 }),
  Type.Array(Type.String({ maxLength: 200 }), { maxItems: 100 }),
]);

const Status = Type.Unsafe<NotificationStatus>({
  type: "string",
  enum: [...NOTIFICATION_STATUSES],
  description: "A notification's status, as its jobs make it (see `status` on a notification)",
});

export const ListNotificationsQuery = Type.Object({
  page: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
  channels: Type.Optional(StringList),
  templates: Type.Optional(StringList),
  subscriberIds: Type.Optional(StringList),
  emails: Type.Optional(StringList),
  search: Type.Optional(Type.String({ maxLength: 200 })),
  transactionId: Type.Optional(Type.String({ maxLength: 255 })),
  status: Type.Optional(
    Type.Union([Status, Type.Array(Status, { maxItems: 5 })], {
      description: "Only notifications in this status, or in any of these",
    }),
  ),
});
export type ListNotificationsQueryValue = Static<typeof ListNotificationsQuery>;

export const ExecutionDetail = Type.Object(
  {
    _id: ObjectIdString("The detail's id"),
    _jobId: ObjectIdString("The job"),
    _notificationId: ObjectIdString("The notification"),
    _subscriberId: ObjectIdString("The subscriber's _id"),
    _environmentId: ObjectIdString("The environment"),
    _organizationId: ObjectIdString("The organization"),
    channel: Type.String({ description: "The step type of its job (in_app, email, delay...)" }),
    status: Type.String({ description: "Pending, Success, Failed, Queued or Warning" }),
    detail: Type.String(),
    raw: Type.String(),
    isRetry: Type.Boolean(),
    isTest: Type.Boolean(),
    source: Type.String(),
    createdAt: Type.String({ format: "date-time" }),
  },
  { title: "ExecutionDetail", additionalProperties: false },
);

export const Job = Type.Object(
  {
    _id: ObjectIdString("The job's id"),
    _notificationId: ObjectIdString("The notification"),
    _subscriberId: ObjectIdString("The subscriber's _id"),
    _templateId: ObjectIdString("The workflow"),
    transactionId: Type.String(),
    type: Type.String({ description: "The step's type" }),
    status: Type.String({
      description: "pending, queued, running, completed, failed, delayed, canceled, merged or skipped",
    }),
    step: Type.Omit(Step, ["_parentId"], { description: "The step as the run took it" }),
    digest: Type.Optional(
      FreeObject(
        "A digest job's: the step's timing (type, amount, unit, digestKey, backoff...) and its window; other jobs have none",
      ),
    ),
    providerId: Type.String({
      description:
        "`nodemailer` for email, `novu` otherwise (each message of a chat step names its provider)",
    }),
    runAt: Type.String({ description: "When a delayed job is due; empty otherwise" }),
    attempts: Type.Integer(),
    executionDetails: Type.Array(ExecutionDetail),
    createdAt: Type.String({ format: "date-time" }),
    updatedAt: Type.String({ format: "date-time" }),
  },
  { title: "Job", additionalProperties: false },
);

export const Notification = Type.Object(
  {
    _id: ObjectIdString("The notification's id"),
    _environmentId: ObjectIdString("The environment"),
    _organizationId: ObjectIdString("The organization"),
    _templateId: ObjectIdString("The workflow"),
    _subscriberId: ObjectIdString("The subscriber's _id"),
    transactionId: Type.String(),
    payload: FreeObject(),
    to: FreeObject(
      "Whom it went to, as the trigger named them: `{subscriberId, ...}`, or the topic or broadcast it came through",
    ),
    tenant: FreeObject(
      "The trigger's tenant (_id, identifier, name, data) as it was then; {} when it named none",
    ),
    channels: Type.Array(Type.String()),
    template: Type.Object(
      { _id: Type.String(), name: Type.String(), triggers: Type.Array(Trigger) },
      { additionalProperties: false },
    ),
    subscriber: Type.Object(
      {
        _id: Type.String(),
        subscriberId: Type.String(),
        firstName: Type.String(),
        lastName: Type.String(),
        email: Type.String(),
        phone: Type.String(),
      },
      { additionalProperties: false },
    ),
    status: Type.Unsafe<NotificationStatus>({
      type: "string",
      enum: [...NOTIFICATION_STATUSES],
      description:
        "At a glance, from its jobs: failed when one failed; else pending while one has still to run; else " +
        "canceled when one was canceled; else delivered when one completed (or was merged into a digest); " +
        "else skipped (every step skipped)",
    }),
    jobs: Type.Array(Job),
    createdAt: Type.String({ format: "date-time" }),
    updatedAt: Type.String({ format: "date-time" }),
  },
  { title: "Notification", additionalProperties: false },
);

export const NotificationPage = Page("NotificationPage", Notification, {
  things: "notifications",
  order: "Newest first",
});

export const NotificationIdParams = Type.Object({ notificationId: ObjectIdString("The notification") });
export const NotificationResponse = Type.Object({ data: Notification }, { additionalProperties: false });

export const ExecutionDetailsQuery = Type.Object({
  notificationId: Type.Optional(ObjectIdString("The notification")),
  subscriberId: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
});
export const ExecutionDetailsResponse = Type.Object(
  { data: Type.Array(ExecutionDetail) },
  { additionalProperties: false },
);

export const ActivityStats = Type.Object(
  {
    weeklySent: Type.Integer({ description: "Notifications in the last 7 days" }),
    monthlySent: Type.Integer({ description: "Notifications since this day last month" }),
  },
  { title: "ActivityStats", additionalProperties: false },
);
export const ActivityStatsResponse = Type.Object({ data: ActivityStats }, { additionalProperties: false });

export const ActivityGraphQuery = Type.Object({
  days: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 366,
      description: "How many days back, from now (24 hours each; default 32)",
    }),
  ),
});

export const ActivityDay = Type.Object(
  {
    _id: Type.String({ description: "The UTC day, YYYY-MM-DD", examples: ["2026-01-31"] }),
    count: Type.Integer({
      description: "The day's notifications, each counted once per channel of its workflow",
    }),
    templates: Type.Array(ObjectIdString("A workflow"), { description: "The workflows triggered that day" }),
    channels: Type.Array(Type.String(), { description: "The channels (step types) of those workflows" }),
  },
  { title: "ActivityDay", additionalProperties: false },
);
export const ActivityGraphResponse = Type.Object(
  {
    data: Type.Array(ActivityDay, { description: "Newest day first; days without notifications are absent" }),
  },
  { additionalProperties: false },
);
