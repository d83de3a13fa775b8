import { described, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { SubscriberIdParams } from "../subscribers/schemas.ts";
import { getSubscriber } from "../subscribers/service.ts";
import { readCountFilters } from "./filters.ts";
import { CountsResponse } from "./notification-schemas.ts";
import { countNotifications, ownerOf } from "./service.ts";
import { SubscriberCountQuery } from "./subscriber-notification-schemas.ts";

export const countSubscriberNotificationsRoute: RoutePlugin = async (app) => {
  app.get(
    "/subscribers/:subscriberId/notifications/count",
    {
      schema: {
        operationId: "countSubscriberNotifications",
        tags: ["Inbox"],
        summary: "How many of a subscriber's notifications match each filter",
        description: "The inbox's counts (GET /v1/inbox/notifications/count) for the subscriber named.",
        params: SubscriberIdParams,
        querystring: SubscriberCountQuery,
        response: {
          200: described(CountsResponse, "A count per filter, in the order sent"),
          ...errorResponsesOf({
            400: "filters is not a JSON array of 1–30 filters, or a filter is invalid",
            404: "No such subscriber",
          }),
        },
      },
    },
    async (request) => {
      const filters = readCountFilters(request.query.filters);
      const deps = depsOf(app);
      const subscriber = await getSubscriber(deps, request.tenant, request.params.subscriberId);
      const counts = await countNotifications(
        deps,
        ownerOf(subscriber),
        filters.map(({ filter }) => filter),
      );
      return { data: filters.map(({ sent }, i) => ({ count: counts[i] ?? 0, filter: sent })) };
    },
  );
};
