import { described, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { presentTopic } from "./presenter.ts";
import { ListTopicsQuery, TopicPage } from "./schemas.ts";
import { listTopics } from "./service.ts";

export const listTopicsRoute: RoutePlugin = async (app) => {
  app.get(
    "/topics",
    {
      schema: {
        operationId: "listTopics",
        tags: ["Topics"],
        summary: "List topics, oldest first",
        description:
          "`key` keeps only the topic with that key. Each topic lists its subscribers' subscriberIds.",
        querystring: ListTopicsQuery,
        response: {
          200: described(TopicPage, "One page of topics, the total and whether more follow"),
          ...errorResponsesOf({ 400: "page or pageSize out of range (pageSize 1–100)" }),
        },
      },
    },
    async (request) => {
      const page = await listTopics(depsOf(app), request.tenant, request.query);
      return { ...page, data: page.data.map((t) => presentTopic(t.topic, t.subscribers)) };
    },
  );
};
