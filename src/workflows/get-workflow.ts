import { described, Envelope, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { WORKFLOW_PREFIXES } from "./prefixes.ts";
import { presentWorkflow } from "./presenter.ts";
import { Workflow, WorkflowIdParams } from "./schemas.ts";
import { getWorkflow } from "./service.ts";

export const getWorkflowRoute: RoutePlugin = async (app) => {
  for (const { prefix, legacy } of WORKFLOW_PREFIXES) {
    app.get(
      `${prefix}/:workflowId`,
      {
        schema: {
          operationId: legacy ? "getNotificationTemplate" : "getWorkflow",
          tags: ["Workflows"],
          summary: "Get a workflow by id or trigger identifier",
          deprecated: legacy,
          params: WorkflowIdParams,
          response: {
            200: described(Envelope(Workflow), "The workflow"),
            ...errorResponsesOf({
              400: "The path names neither an id nor a trigger identifier",
              404: "No such workflow in the environment (or it was deleted)",
            }),
          },
        },
      },
      async (request) => ({
        data: presentWorkflow(await getWorkflow(depsOf(app), request.tenant, request.params.workflowId)),
      }),
    );
  }
};
