import { type Static, Type } from "typebox";
import { presentExecutionDetail, presentNotification } from "../engine/presenter.ts";
import { getNotification, listExecutionDetails, listNotifications } from "../engine/service.ts";
import { described, errorResponsesOf, FreeObject, ObjectIdString, Page } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { Step, Trigger } from "../workflows/schemas.ts";

const StringList = Type.Union([
  Type.String({ maxLength: 200 }),
  Type.Array(Type.String({ maxLength: 200 }), { maxItems: 100 }),
]);

const ListNotificationsQuery = Type.Object({
  page: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
  channels: Type.Optional(StringList),
  templates: Type.Optional(StringList),
  subscriberIds: Type.Optional(StringList),
  emails: Type.Optional(StringList),
  search: Type.Optional(Type.String({ maxLength: 200 })),
  transactionId: Type.Optional(Type.String({ maxLength: 255 })),
});
type ListNotificationsQueryValue = Static<typeof ListNotificationsQuery>;

const ExecutionDetail = Type.Object(
  {
    _id: ObjectIdString("The detail's id"),
    _jobId: ObjectIdString("The job"),
    _notificationId: ObjectIdString("The notification"),
    _subscriberId: ObjectIdString("The subscriber's _id"),
    _environmentId: ObjectIdString("The environment"),
    _organizationId: ObjectIdString("The organization"),
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

const Job = Type.Object(
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
    step: Step,
    digest: FreeObject(),
    runAt: Type.String({ description: "When a delayed job is due; empty otherwise" }),
    attempts: Type.Integer(),
    executionDetails: Type.Array(ExecutionDetail),
    createdAt: Type.String({ format: "date-time" }),
    updatedAt: Type.String({ format: "date-time" }),
  },
  { title: "Job", additionalProperties: false },
);

const Notification = Type.Object(
  {
    _id: ObjectIdString("The notification's id"),
    _environmentId: ObjectIdString("The environment"),
    _organizationId: ObjectIdString("The organization"),
    _templateId: ObjectIdString("The workflow"),
    _subscriberId: ObjectIdString("The subscriber's _id"),
    transactionId: Type.String(),
    payload: FreeObject(),
    to: Type.Unknown(),
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
    jobs: Type.Array(Job),
    createdAt: Type.String({ format: "date-time" }),
    updatedAt: Type.String({ format: "date-time" }),
  },
  { title: "Notification", additionalProperties: false },
);

const NotificationPage = Page("NotificationPage", Notification, {
  things: "notifications",
  order: "Newest first",
});

const list = (value: string | string[] | undefined) => (value === undefined ? undefined : [value].flat());

function listInput(query: ListNotificationsQueryValue) {
  const workflowIds = list(query.templates);
  const subscriberIds = list(query.subscriberIds);
  const channels = list(query.channels);
  return {
    ...(query.page !== undefined ? { page: query.page } : {}),
    ...(query.limit !== undefined ? { limit: query.limit } : {}),
    ...(workflowIds ? { workflowIds } : {}),
    ...(subscriberIds ? { subscriberIds } : {}),
    ...(channels ? { channels } : {}),
    ...(query.transactionId !== undefined ? { transactionId: query.transactionId } : {}),
  };
}

/** What happened: notifications with their jobs and execution details (ENGINE.md part 5). */
export const activityRoutes: RoutePlugin = async (app) => {
  app.get(
    "/notifications",
    {
      schema: {
        operationId: "listNotifications",
        tags: ["Activity"],
        summary: "The environment's notifications, newest first, with their jobs",
        querystring: ListNotificationsQuery,
        response: {
          200: described(NotificationPage, "One page"),
          ...errorResponsesOf({ 400: "A query value out of range" }),
        },
      },
    },
    async (request) => {
      const result = await listNotifications(depsOf(app), request.tenant, listInput(request.query));
      return { ...result, data: result.data.map(presentNotification) };
    },
  );

  app.get(
    "/notifications/:notificationId",
    {
      schema: {
        operationId: "getNotification",
        tags: ["Activity"],
        summary: "One notification with its jobs and their execution details",
        params: Type.Object({ notificationId: ObjectIdString("The notification") }),
        response: {
          200: described(
            Type.Object({ data: Notification }, { additionalProperties: false }),
            "The notification",
          ),
          ...errorResponsesOf({ 400: "Not an id", 404: "No such notification in the environment" }),
        },
      },
    },
    async (request) => ({
      data: presentNotification(
        await getNotification(depsOf(app), request.tenant, request.params.notificationId),
      ),
    }),
  );

  app.get(
    "/execution-details",
    {
      schema: {
        operationId: "listExecutionDetails",
        tags: ["Activity"],
        summary: "The execution details of a notification or a subscriber",
        querystring: Type.Object({
          notificationId: Type.Optional(ObjectIdString("The notification")),
          subscriberId: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
        }),
        response: {
          200: described(
            Type.Object({ data: Type.Array(ExecutionDetail) }, { additionalProperties: false }),
            "Oldest first",
          ),
          ...errorResponsesOf({ 400: "Invalid query" }),
        },
      },
    },
    async (request) => {
      const { notificationId, subscriberId } = request.query;
      const details = await listExecutionDetails(depsOf(app), request.tenant, {
        ...(notificationId !== undefined ? { notificationId } : {}),
        ...(subscriberId !== undefined ? { subscriberId } : {}),
      });
      return { data: details.map(presentExecutionDetail) };
    },
  );
};
