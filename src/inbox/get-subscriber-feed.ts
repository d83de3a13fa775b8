import { described, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { presentMessage } from "./presenter.ts";
import {
  decodePayloadFilter,
  FeedQuery,
  feedIdentifiersOf,
  MessagePage,
  SubscriberIdParams,
} from "./schemas.ts";
import { subscriberFeed } from "./service.ts";

export const getSubscriberFeedRoute: RoutePlugin = async (app) => {
  app.get(
    "/subscribers/:subscriberId/notifications/feed",
    {
      schema: {
        operationId: "getSubscriberFeed",
        tags: ["Inbox"],
        summary: "A subscriber's in-app messages, newest first",
        params: SubscriberIdParams,
        querystring: FeedQuery,
        response: {
          200: described(MessagePage, "One page of the feed"),
          ...errorResponsesOf({
            400: "A query value out of range, or payload not base64 JSON",
            404: "No such subscriber",
          }),
        },
      },
    },
    async (request) => {
      const { page, limit, seen, read, payload, feedIdentifier } = request.query;
      const feedIdentifiers = feedIdentifiersOf(feedIdentifier);
      const feed = await subscriberFeed(depsOf(app), request.tenant, request.params.subscriberId, {
        ...(page !== undefined ? { page } : {}),
        ...(limit !== undefined ? { limit } : {}),
        ...(seen !== undefined ? { seen } : {}),
        ...(read !== undefined ? { read } : {}),
        ...(payload !== undefined ? { payload: decodePayloadFilter(payload) ?? {} } : {}),
        ...(feedIdentifiers ? { feedIdentifiers } : {}),
      });
      return { ...feed, data: feed.data.map((m) => presentMessage(m, feed.subscriber)) };
    },
  );
};
