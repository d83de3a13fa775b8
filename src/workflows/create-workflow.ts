import { described, Envelope, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { IdempotencyKeyHeaders, idempotent, replayable } from "../idempotency/idempotency.ts";
import { WORKFLOW_PREFIXES } from "./prefixes.ts";
import { presentWorkflow } from "./presenter.ts";
import { CreateWorkflowBody, Workflow } from "./schemas.ts";
import { createWorkflow } from "./service.ts";

export const createWorkflowRoute: RoutePlugin = async (app) => {
  for (const { prefix, legacy } of WORKFLOW_PREFIXES) {
    app.post(
      prefix,
      {
        schema: {
          operationId: legacy ? "createNotificationTemplate" : "createWorkflow",
          tags: ["Workflows"],
          summary: "Create a workflow",
          description:
            "The trigger identifier is derived from the name (slugified, unique in the environment). A new " +
            "workflow is inactive (a draft) unless `active: true` is sent.",
          deprecated: legacy,
          headers: IdempotencyKeyHeaders,
          body: CreateWorkflowBody,
          response: {
            201: replayable(described(Envelope(Workflow), "The workflow as stored")),
            ...errorResponsesOf({
              400: "Invalid body, or notificationGroupId names no group of the environment",
              409: "A request with this Idempotency-Key is still running (with `Retry-After`)",
              422: "This Idempotency-Key was used for a different request",
            }),
          },
        },
      },
      async (request, reply) =>
        idempotent(app.store.db, request, reply, 201, async (db) => ({
          data: presentWorkflow(await createWorkflow(depsOf(app, db), request.tenant, request.body)),
        })),
    );
  }
};
