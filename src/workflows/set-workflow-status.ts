import { keyGuardedRoute } from "../auth/guarded-route.ts";
import { described, Envelope, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { WORKFLOW_PREFIXES } from "./prefixes.ts";
import { presentWorkflow } from "./presenter.ts";
import { StatusBody, Workflow, WorkflowIdParams } from "./schemas.ts";
import { setWorkflowStatus } from "./service.ts";

export const setWorkflowStatusRoute: RoutePlugin = async (app) => {
  for (const { prefix, legacy } of WORKFLOW_PREFIXES) {
    app.put(
      `${prefix}/:workflowId/status`,
      // The status change is one statement, and it re-checks the API key: no separate key lookup.
      keyGuardedRoute({
        schema: {
          operationId: legacy ? "setNotificationTemplateStatus" : "setWorkflowStatus",
          tags: ["Workflows"],
          summary: "Switch a workflow on or off",
          description:
            "`active: true` also sets `draft: false`, and `active: false` sets `draft: true`. Setting the state the " +
            "workflow already has succeeds and changes nothing (not even updatedAt).",
          deprecated: legacy,
          params: WorkflowIdParams,
          body: StatusBody,
          response: {
            200: described(Envelope(Workflow), "The workflow as stored after the change"),
            ...errorResponsesOf({
              400: "active missing or not a boolean, or a path that names neither an id nor an identifier",
              404: "No such workflow in the environment (or it was deleted)",
            }),
          },
        },
        handler: async (request, _reply, claim) => ({
          data: presentWorkflow(
            await setWorkflowStatus(depsOf(app), claim, request.params.workflowId, request.body.active),
          ),
        }),
      }),
    );
  }
};
