import { badRequest } from "../errors.ts";
import { described, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { decodePayloadFilter } from "../inbox/schemas.ts";
import { subscriberFeed } from "../inbox/service.ts";
import { presentWidgetMessage } from "./presenter.ts";
import { WidgetFeedQuery, WidgetMessagePage } from "./schemas.ts";

/** Tidings keeps one feed per subscriber: a widget tab that asks for a named feed gets a 400, not all. */
export function refuseFeeds(feedIdentifier: unknown): void {
  if (
    feedIdentifier !== undefined &&
    feedIdentifier !== "" &&
    !(Array.isArray(feedIdentifier) && feedIdentifier.length === 0)
  ) {
    throw badRequest("feedIdentifier: Tidings has one feed per subscriber; leave it out");
  }
}

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
            400: "A query value out of range, payload not base64 JSON, or a feedIdentifier",
          }),
        },
      },
    },
    async (request) => {
      const { page, limit, seen, read, payload, feedIdentifier } = request.query;
      refuseFeeds(feedIdentifier);
      const { subscriber } = request.subscriberSession;
      const feed = await subscriberFeed(depsOf(app), request.tenant, subscriber.subscriberId, {
        ...(page !== undefined ? { page } : {}),
        ...(limit !== undefined ? { limit } : {}),
        ...(seen !== undefined ? { seen } : {}),
        ...(read !== undefined ? { read } : {}),
        ...(payload !== undefined ? { payload: decodePayloadFilter(payload) ?? {} } : {}),
      });
      return { ...feed, data: feed.data.map((m) => presentWidgetMessage(m, feed.subscriber)) };
    },
  );
};
