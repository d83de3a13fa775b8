import { described, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { presentTopicV2 } from "./presenter.ts";
import { TopicCursorPage, TopicsV2Query } from "./schemas.ts";
import { pageTopics } from "./service.ts";

export const listTopicsV2Route: RoutePlugin = async (app) => {
  app.get(
    "/topics",
    {
      schema: {
        operationId: "listTopicsV2",
        tags: ["Topics"],
        summary: "List topics, a page at a time by cursor (newest first by default)",
        description:
          "Novu's /v2 list (@novu/api's `topics.list`): `key` is exact, `name` is contained (any case); a page goes " +
          "`after` or `before` a topic named by its `_id` (a page's `next` and `previous`).",
        querystring: TopicsV2Query,
        response: {
          200: described(TopicCursorPage, "One page, the cursors on either side, and how many match"),
          ...errorResponsesOf({
            400: "A query value out of range, after and before together, or a cursor that names no topic of the environment",
          }),
        },
      },
    },
    async (request) => {
      const page = await pageTopics(depsOf(app), request.tenant, request.query);
      return {
        data: page.rows.map(presentTopicV2),
        next: page.next,
        previous: page.previous,
        totalCount: page.totalCount,
        totalCountCapped: page.totalCountCapped,
      };
    },
  );
};
