import { Type } from "typebox";
import { described, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { presentApiKey, presentEnvironment } from "./presenter.ts";
import { ListedEnvironment } from "./schemas.ts";
import { listEnvironmentKeys, listEnvironments } from "./service.ts";

export const listEnvironmentsRoute: RoutePlugin = async (app) => {
  app.get(
    "/environments",
    {
      schema: {
        operationId: "listEnvironments",
        tags: ["Environments"],
        summary: "The organization's environments, with the caller's environment's keys masked",
        response: {
          200: described(
            Type.Object({ data: Type.Array(ListedEnvironment) }, { additionalProperties: false }),
            "The environments, oldest first",
          ),
          ...errorResponsesOf({}),
        },
      },
    },
    async (request) => {
      const deps = depsOf(app);
      const keys = (await listEnvironmentKeys(deps, request.tenant)).map(presentApiKey);
      return {
        data: (await listEnvironments(deps, request.tenant)).map((environment) => ({
          ...presentEnvironment(environment),
          apiKeys: environment.id === request.tenant.environmentId ? keys : [],
        })),
      };
    },
  );
};
