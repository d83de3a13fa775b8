import { described, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { presentActivityDay } from "./presenter.ts";
import { ActivityGraphQuery, ActivityGraphResponse, ActivityStatsResponse } from "./schemas.ts";
import { activityGraph, activityStats } from "./service.ts";

/** The dashboard's numbers and chart: Novu's `/v1/notifications/stats` and `/graph/stats`. */
export const activityStatsRoutes: RoutePlugin = async (app) => {
  app.get(
    "/notifications/stats",
    {
      schema: {
        operationId: "getActivityStats",
        tags: ["Activity"],
        summary: "How many notifications the environment had in the last week and month",
        response: {
          200: described(ActivityStatsResponse, "The counts"),
          ...errorResponsesOf({}),
        },
      },
    },
    async (request) => {
      const { weekly, monthly } = await activityStats(depsOf(app), request.tenant);
      return { data: { weeklySent: weekly, monthlySent: monthly } };
    },
  );

  app.get(
    "/notifications/graph/stats",
    {
      schema: {
        operationId: "getActivityGraphStats",
        tags: ["Activity"],
        summary: "The environment's notifications per day, over the last days",
        querystring: ActivityGraphQuery,
        response: {
          200: described(ActivityGraphResponse, "One entry per day that had notifications"),
          ...errorResponsesOf({ 400: "days is not a whole number from 1 to 366" }),
        },
      },
    },
    async (request) => ({
      data: (await activityGraph(depsOf(app), request.tenant, request.query.days)).map(presentActivityDay),
    }),
  );
};
