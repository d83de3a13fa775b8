import { described, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { readCountFilters } from "./filters.ts";
import { CountQuery, CountsResponse } from "./notification-schemas.ts";
import { countNotifications } from "./service.ts";
import { alongsideSubscriber, readsSubscriberAlongside } from "./session-check.ts";

export const countNotificationsRoute: RoutePlugin = async (app) => {
  app.get(
    "/notifications/count",
    {
      config: readsSubscriberAlongside,
      schema: {
        operationId: "countInboxNotifications",
        tags: ["Inbox session"],
        summary: "How many of the session's subscriber's notifications match each filter",
        querystring: CountQuery,
        response: {
          200: described(CountsResponse, "A count per filter, in the order sent"),
          ...errorResponsesOf({ 400: "filters is not a JSON array of 1–30 filters, or a filter is invalid" }),
        },
      },
    },
    async (request) => {
      const [, { filters, counts }] = await alongsideSubscriber(request, async (owner) => {
        const filters = readCountFilters(request.query.filters);
        const counts = await countNotifications(
          depsOf(app),
          owner,
          filters.map(({ filter }) => filter),
        );
        return { filters, counts };
      });
      return { data: filters.map(({ sent }, i) => ({ count: counts[i] ?? 0, filter: sent })) };
    },
  );
};
