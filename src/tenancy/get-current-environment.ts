import { described, Envelope, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { presentEnvironment } from "./presenter.ts";
import { EnvironmentResource } from "./schemas.ts";
import { getCurrentEnvironment } from "./service.ts";

export const getCurrentEnvironmentRoute: RoutePlugin = async (app) => {
  app.get(
    "/environments/me",
    {
      schema: {
        operationId: "getCurrentEnvironment",
        tags: ["Environments"],
        summary: "The API key's environment",
        response: {
          200: described(Envelope(EnvironmentResource), "The environment"),
          ...errorResponsesOf({}),
        },
      },
    },
    async (request) => ({
      data: presentEnvironment(await getCurrentEnvironment(depsOf(app), request.tenant)),
    }),
  );
};
