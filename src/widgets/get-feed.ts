import { described, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { decodePayloadFilter, feedIdentifiersOf } from "../inbox/schemas.ts";
import { subscriberFeed } from "../inbox/service.ts";
import { presentWidgetMessage } from "./presenter.ts";
import { WidgetFeedQuery, WidgetMessagePage } from "./schemas.ts";

export const getFeedRoute: RoutePlugin = async (app) => {
  app.get(
    "/notifications/feed",
    {
      schema: {
        operationId: "getWidgetFeed",
        tags: ["Widget"],
        summary: "The session's subscriber's in-app messages, newest first",
        querystring: WidgetFeedQuery,
        response: {
          200: described(WidgetMessagePage, "One page of the feed"),
          ...errorResponsesOf({
            400: "A query value out of range, or payload not base64 JSON",
          }),
        },
      },
    },
    async (request) => {
      const { page, limit, seen, read, payload, feedIdentifier } = request.query;
      const feedIdentifiers = feedIdentifiersOf(feedIdentifier);
      const { subscriber } = request.subscriberSession;
      const feed = await subscriberFeed(depsOf(app), request.tenant, subscriber.subscriberId, {
        ...(page !== undefined ? { page } : {}),
        ...(limit !== undefined ? { limit } : {}),
        ...(seen !== undefined ? { seen } : {}),
        ...(read !== undefined ? { read } : {}),
        ...(payload !== undefined ? { payload: decodePayloadFilter(payload) ?? {} } : {}),
        ...(feedIdentifiers ? { feedIdentifiers } : {}),
      });
      return { ...feed, data: feed.data.map((m) => presentWidgetMessage(m, feed.subscriber)) };
    },
  );
};
