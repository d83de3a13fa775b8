import { Type } from "typebox";
import { described, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { presentEnvironment } from "./presenter.ts";
import { EnvironmentResource } from "./schemas.ts";
import { listEnvironments } from "./service.ts";

export const listEnvironmentsRoute: RoutePlugin = async (app) => {
  app.get(
    "/environments",
    {
      schema: {
        operationId: "listEnvironments",
        tags: ["Environments"],
        summary: "The organization's environments (without keys)",
        response: {
          200: described(
            Type.Object({ data: Type.Array(EnvironmentResource) }, { additionalProperties: false }),
            "The environments, oldest first",
          ),
          ...errorResponsesOf({}),
        },
      },
    },
    async (request) => ({
      data: (await listEnvironments(depsOf(app), request.tenant)).map(presentEnvironment),
    }),
  );
};
