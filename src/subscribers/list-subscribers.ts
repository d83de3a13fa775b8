import { described, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { presentSubscriber } from "./presenter.ts";
import { ListSubscribersQuery, SubscriberPage } from "./schemas.ts";
import { listSubscribers } from "./service.ts";

export const listSubscribersRoute: RoutePlugin = async (app) => {
  app.get(
    "/subscribers",
    {
      schema: {
        operationId: "listSubscribers",
        tags: ["Subscribers"],
        summary: "List subscribers, oldest first; `search` narrows them",
        querystring: ListSubscribersQuery,
        response: {
          200: described(SubscriberPage, "One page of subscribers, the total and whether more follow"),
          ...errorResponsesOf({
            400: "page or limit out of range (limit 1–100), or search over 200 characters",
          }),
        },
      },
    },
    async (request) => {
      const page = await listSubscribers(depsOf(app), request.tenant, request.query);
      return { ...page, data: page.data.map(presentSubscriber) };
    },
  );
};
