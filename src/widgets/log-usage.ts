import { described, errorResponsesOf } from "../http/schema-helpers.ts";
import type { RoutePluginWith } from "../http/types.ts";
import type { WidgetRouteOptions } from "./options.ts";
import { UsageLogBody, UsageLogResponse } from "./schemas.ts";

/** The widget's usage events ("[Widget] - Notification Click"...): counted in the metrics, nothing stored. */
export const logUsageRoute: RoutePluginWith<WidgetRouteOptions> = async (app, options) => {
  app.post(
    "/usage/log",
    {
      schema: {
        operationId: "logWidgetUsage",
        tags: ["Widget"],
        summary: "Record a widget usage event (counted by name in /metrics)",
        body: UsageLogBody,
        response: {
          201: described(UsageLogResponse, "Recorded"),
          ...errorResponsesOf({ 400: "Invalid body" }),
        },
      },
    },
    async (request, reply) => {
      options.onUsage?.(request.body.name);
      return reply.code(201).send({ data: { success: true as const } });
    },
  );
};
