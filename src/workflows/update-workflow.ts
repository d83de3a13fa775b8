import { described, Envelope, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { WORKFLOW_PREFIXES } from "./prefixes.ts";
import { presentWorkflow } from "./presenter.ts";
import { UpdateWorkflowBody, Workflow, WorkflowIdParams } from "./schemas.ts";
import { updateWorkflow } from "./service.ts";

export const updateWorkflowRoute: RoutePlugin = async (app) => {
  for (const { prefix, legacy } of WORKFLOW_PREFIXES) {
    app.put(
      `${prefix}/:workflowId`,
      {
        schema: {
          operationId: legacy ? "updateNotificationTemplate" : "updateWorkflow",
          tags: ["Workflows"],
          summary: "Update a workflow (the fields sent; the others keep their values)",
          description:
            "Takes the fields of create, all optional, plus `identifier`. The trigger identifier stays as it is " +
            "when the workflow is renamed, unless `identifier` is sent (400 when another workflow has it, or " +
            "when it looks like an id). Sent `steps` replace the steps: a step that names the `_id` of a " +
            "current step keeps its ids, and the trigger variables are recomputed. An update that changes " +
            "nothing leaves `updatedAt` alone.",
          deprecated: legacy,
          params: WorkflowIdParams,
          body: UpdateWorkflowBody,
          response: {
            200: described(Envelope(Workflow), "The workflow as stored after the update"),
            ...errorResponsesOf({
              400: "Invalid body; the identifier is taken or looks like an id; or the group is not in the environment",
              404: "No such workflow in the environment (or it was deleted)",
              409: "The workflow kept changing under concurrent updates; try again",
            }),
          },
        },
      },
      async (request) => ({
        data: presentWorkflow(
          await updateWorkflow(depsOf(app), request.tenant, request.params.workflowId, request.body),
        ),
      }),
    );
  }
};
