import { described, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { WORKFLOW_PREFIXES } from "./prefixes.ts";
import { DeletedWorkflow, WorkflowIdParams } from "./schemas.ts";
import { deleteWorkflow } from "./service.ts";

export const deleteWorkflowRoute: RoutePlugin = async (app) => {
  for (const { prefix, legacy } of WORKFLOW_PREFIXES) {
    app.delete(
      `${prefix}/:workflowId`,
      {
        schema: {
          operationId: legacy ? "deleteNotificationTemplate" : "deleteWorkflow",
          tags: ["Workflows"],
          summary: "Delete a workflow",
          description:
            "A soft delete: the workflow is kept with `deleted`, `deletedAt` and `deletedBy` set, and disappears " +
            "from every read; its status can no longer be set (404), and its trigger identifier is free again.",
          deprecated: legacy,
          params: WorkflowIdParams,
          response: {
            200: described(DeletedWorkflow, "The workflow is deleted"),
            ...errorResponsesOf({
              400: "The path names neither an id nor a trigger identifier",
              404: "No such workflow in the environment (or it was already deleted)",
            }),
          },
        },
      },
      async (request) => ({
        data: await deleteWorkflow(depsOf(app), request.tenant, request.params.workflowId),
      }),
    );
  }
};
