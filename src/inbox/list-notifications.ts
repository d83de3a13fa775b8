import { described, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { readListQuery } from "./list-query.ts";
import { NotificationsPage, NotificationsQuery } from "./notification-schemas.ts";
import { presentInboxNotification } from "./presenter.ts";
import { listNotifications } from "./service.ts";
import { alongsideSubscriber, readsSubscriberAlongside } from "./session-check.ts";

export const listNotificationsRoute: RoutePlugin = async (app) => {
  app.get(
    "/notifications",
    {
      config: readsSubscriberAlongside,
      schema: {
        operationId: "listInboxNotifications",
        tags: ["Inbox session"],
        summary: "The session's subscriber's notifications, newest first",
        description:
          "Not snoozed ones unless `snoozed=true`. `tags[]` is one group of tags (any of them), `tags[0][]`, " +
          "`tags[1][]`... several (one of each); `data` a JSON object of data fields to match; pages go on " +
          "`after` the last notification of the previous one.",
        querystring: NotificationsQuery,
        response: {
          200: described(NotificationsPage, "One page, whether more follow, and the filter as read"),
          ...errorResponsesOf({ 400: "A query value that is not a filter, or an unknown `after`" }),
        },
      },
    },
    async (request) => {
      const [subscriber, { page, echo }] = await alongsideSubscriber(request, async (owner) => {
        const { query, echo } = readListQuery(request.query as Record<string, unknown>);
        return { page: await listNotifications(depsOf(app), request.tenant, owner, query), echo };
      });
      return {
        data: page.notifications.map((n) => presentInboxNotification(n, subscriber)),
        hasMore: page.hasMore,
        filter: echo,
      };
    },
  );
};
