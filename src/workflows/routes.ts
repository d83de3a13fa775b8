import type { RoutePlugin } from "../http/types.ts";
import { createWorkflowRoute } from "./create-workflow.ts";
import { deleteWorkflowRoute } from "./delete-workflow.ts";
import { getVariablesRoute } from "./get-variables.ts";
import { getWorkflowRoute } from "./get-workflow.ts";
import { listWorkflowsRoute } from "./list-workflows.ts";
import { setWorkflowStatusRoute } from "./set-workflow-status.ts";
import { updateWorkflowRoute } from "./update-workflow.ts";

export const workflowRoutes: RoutePlugin = async (app) => {
  await app.register(createWorkflowRoute);
  await app.register(listWorkflowsRoute);
  await app.register(getVariablesRoute);
  await app.register(getWorkflowRoute);
  await app.register(updateWorkflowRoute);
  await app.register(setWorkflowStatusRoute);
  await app.register(deleteWorkflowRoute);
};

export { bridgeRoutes } from "./bridge-routes.ts";
export { workflowV2Routes } from "./v2-routes.ts";
