import { described, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { presentExecutionDetail } from "./presenter.ts";
import { ExecutionDetailsQuery, ExecutionDetailsResponse } from "./schemas.ts";
import { listExecutionDetails } from "./service.ts";

export const listExecutionDetailsRoute: RoutePlugin = async (app) => {
  app.get(
    "/execution-details",
    {
      schema: {
        operationId: "listExecutionDetails",
        tags: ["Activity"],
        summary: "The execution details of a notification or a subscriber",
        querystring: ExecutionDetailsQuery,
        response: {
          200: described(ExecutionDetailsResponse, "Oldest first"),
          ...errorResponsesOf({ 400: "Invalid query" }),
        },
      },
    },
    async (request) => {
      const { notificationId, subscriberId } = request.query;
      const details = await listExecutionDetails(depsOf(app), request.tenant, {
        ...(notificationId !== undefined ? { notificationId } : {}),
        ...(subscriberId !== undefined ? { subscriberId } : {}),
      });
      return { data: details.map(presentExecutionDetail) };
    },
  );
};
