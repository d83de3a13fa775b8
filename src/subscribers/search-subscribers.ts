import { described, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { presentSubscriber } from "./presenter.ts";
import { SubscriberCursorPage, SubscriberSearchQuery } from "./schemas.ts";
import { searchSubscribers } from "./service.ts";

export const searchSubscribersRoute: RoutePlugin = async (app) => {
  app.get(
    "/subscribers",
    {
      schema: {
        operationId: "searchSubscribers",
        tags: ["Subscribers"],
        summary: "Search subscribers, a page at a time by cursor (newest first by default)",
        description:
          "Novu's /v2 search (what @novu/api's `subscribers.search` calls). Each filter narrows: `email`, `phone` " +
          'and `name` ("firstName lastName") contain the text, in any case; `subscriberId` is exact. A page goes ' +
          "`after` or `before` a subscriber named by its `_id` (a page's `next` and `previous`).",
        querystring: SubscriberSearchQuery,
        response: {
          200: described(SubscriberCursorPage, "One page, the cursors on either side, and how many match"),
          ...errorResponsesOf({
            400: "A query value out of range, after and before together, or a cursor that names no subscriber of the environment",
          }),
        },
      },
    },
    async (request) => {
      const page = await searchSubscribers(depsOf(app), request.tenant, request.query);
      return {
        data: page.rows.map(presentSubscriber),
        next: page.next,
        previous: page.previous,
        totalCount: page.totalCount,
        totalCountCapped: page.totalCountCapped,
      };
    },
  );
};
