import { described, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { CountResponse, feedIdentifiersOf } from "../inbox/schemas.ts";
import { countSubscriberMessages } from "../inbox/service.ts";
import { WidgetCountQuery } from "./schemas.ts";

/**
 * The widget's three counts: `unseen` (unless `seen` says otherwise), `unread` (unless `read` does),
 * and `count` (the messages matching `seen` and `read`, as a tab counts them). `limit` caps the
 * number, as Novu's widget asks for "99+".
 */
export const getCountsRoute: RoutePlugin = async (app) => {
  const counts = [
    {
      path: "unseen",
      operationId: "getWidgetUnseenCount",
      summary: "How many messages are unseen",
      fallback: { seen: false },
    },
    {
      path: "unread",
      operationId: "getWidgetUnreadCount",
      summary: "How many messages are unread",
      fallback: { read: false },
    },
    {
      path: "count",
      operationId: "getWidgetMessageCount",
      summary: "How many messages match seen and read",
      fallback: {},
    },
  ] as const;
  for (const { path, operationId, summary, fallback } of counts) {
    app.get(
      `/notifications/${path}`,
      {
        schema: {
          operationId,
          tags: ["Widget"],
          summary,
          querystring: WidgetCountQuery,
          response: {
            200: described(CountResponse, "The count"),
            ...errorResponsesOf({ 400: "A query value out of range" }),
          },
        },
      },
      async (request) => {
        const { seen, read, limit, feedIdentifier } = request.query;
        const feedIdentifiers = feedIdentifiersOf(feedIdentifier);
        const filter = {
          ...fallback,
          ...(seen !== undefined ? { seen } : {}),
          ...(read !== undefined ? { read } : {}),
          ...(feedIdentifiers ? { feedIdentifiers } : {}),
        };
        const count = await countSubscriberMessages(
          depsOf(app),
          request.tenant,
          request.subscriberSession.subscriber.subscriberId,
          filter,
        );
        return { data: { count: limit !== undefined ? Math.min(count, limit) : count } };
      },
    );
  }
};
