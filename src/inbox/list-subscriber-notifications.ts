import { described, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { SubscriberIdParams } from "../subscribers/schemas.ts";
import { getSubscriber } from "../subscribers/service.ts";
import { readListQuery } from "./list-query.ts";
import { NotificationsPage } from "./notification-schemas.ts";
import { presentInboxNotification } from "./presenter.ts";
import { listNotifications, ownerOf } from "./service.ts";
import { SubscriberNotificationsQuery } from "./subscriber-notification-schemas.ts";

export const listSubscriberNotificationsRoute: RoutePlugin = async (app) => {
  app.get(
    "/subscribers/:subscriberId/notifications",
    {
      schema: {
        operationId: "listSubscriberNotifications",
        tags: ["Inbox"],
        summary: "A subscriber's notifications as its inbox lists them, newest first",
        description:
          "The inbox's list (GET /v1/inbox/notifications) for the subscriber named: the same filters and " +
          "pages, not snoozed ones unless `snoozed=true`.",
        params: SubscriberIdParams,
        querystring: SubscriberNotificationsQuery,
        response: {
          200: described(NotificationsPage, "One page, whether more follow, and the filter as read"),
          ...errorResponsesOf({
            400: "A query value that is not a filter, or an unknown `after`",
            404: "No such subscriber",
          }),
        },
      },
    },
    async (request) => {
      const { query, echo } = readListQuery(request.query as Record<string, unknown>);
      const deps = depsOf(app);
      const subscriber = await getSubscriber(deps, request.tenant, request.params.subscriberId);
      const page = await listNotifications(deps, request.tenant, ownerOf(subscriber), query);
      return {
        data: page.notifications.map((n) => presentInboxNotification(n, subscriber)),
        hasMore: page.hasMore,
        filter: echo,
      };
    },
  );
};
