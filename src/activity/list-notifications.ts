import { described, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { presentNotification } from "./presenter.ts";
import { ListNotificationsQuery, type ListNotificationsQueryValue, NotificationPage } from "./schemas.ts";
import { listNotifications } from "./service.ts";

const list = <T extends string>(value: T | T[] | undefined) =>
  value === undefined ? undefined : [value].flat();

function listInput(query: ListNotificationsQueryValue) {
  const workflowIds = list(query.templates);
  const subscriberIds = list(query.subscriberIds);
  const channels = list(query.channels);
  const emails = list(query.emails);
  const statuses = list(query.status);
  return {
    ...(query.page !== undefined ? { page: query.page } : {}),
    ...(query.limit !== undefined ? { limit: query.limit } : {}),
    ...(workflowIds ? { workflowIds } : {}),
    ...(subscriberIds ? { subscriberIds } : {}),
    ...(emails ? { emails } : {}),
    ...(query.search !== undefined ? { search: query.search } : {}),
    ...(channels ? { channels } : {}),
    ...(statuses ? { statuses } : {}),
    ...(query.transactionId !== undefined ? { transactionId: query.transactionId } : {}),
  };
}

export const listNotificationsRoute: RoutePlugin = async (app) => {
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
};
