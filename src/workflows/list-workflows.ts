import { described, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { WORKFLOW_PREFIXES } from "./prefixes.ts";
import { presentWorkflow } from "./presenter.ts";
import { ListWorkflowsQuery, WorkflowPage } from "./schemas.ts";
import { listWorkflows } from "./service.ts";

export const listWorkflowsRoute: RoutePlugin = async (app) => {
  for (const { prefix, legacy } of WORKFLOW_PREFIXES) {
    app.get(
      prefix,
      {
        schema: {
          operationId: legacy ? "listNotificationTemplates" : "listWorkflows",
          tags: ["Workflows"],
          summary: "List workflows, newest first",
          description:
            "One page of the environment's workflows (deleted ones never appear). `query` keeps those whose " +
            "name or trigger identifier contains the text, in any case.",
          deprecated: legacy,
          querystring: ListWorkflowsQuery,
          response: {
            200: described(WorkflowPage, "One page of workflows and the total count"),
            ...errorResponsesOf({ 400: "page, limit or query out of range" }),
          },
        },
      },
      async (request) => {
        const page = await listWorkflows(depsOf(app), request.tenant, request.query);
        return { ...page, data: page.data.map(presentWorkflow) };
      },
    );
  }
};
