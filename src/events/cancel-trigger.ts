import { described, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { CancelResponse, TransactionParams } from "./schemas.ts";
import { cancel } from "./service.ts";

export const cancelTriggerRoute: RoutePlugin = async (app) => {
  app.delete(
    "/events/trigger/:transactionId",
    {
      schema: {
        operationId: "cancelTriggeredEvent",
        tags: ["Events"],
        summary: "Cancel what a trigger has not run yet",
        description:
          "Every job of the transaction that has not run (pending, queued, delayed, and events still waiting in a digest window) becomes `canceled`. A digest window that has closed is delivered: its events are no longer canceled.",
        params: TransactionParams,
        response: {
          200: described(CancelResponse, "Whether anything was canceled"),
          ...errorResponsesOf({ 400: "The transactionId is empty or over 255 characters" }),
        },
      },
    },
    async (request) => ({ data: await cancel(depsOf(app), request.tenant, request.params.transactionId) }),
  );
};
