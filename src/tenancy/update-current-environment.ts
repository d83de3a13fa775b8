import { described, Envelope, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { presentEnvironment } from "./presenter.ts";
import { EnvironmentResource, UpdateEnvironmentBody } from "./schemas.ts";
import { setEnvironmentHmac } from "./service.ts";

export const updateCurrentEnvironmentRoute: RoutePlugin = async (app) => {
  app.put(
    "/environments/me",
    {
      schema: {
        operationId: "updateCurrentEnvironment",
        tags: ["Environments"],
        summary: "Turn HMAC for subscriber sessions on or off (Development; Production keeps it on)",
        description:
          "With `hmac: true`, a subscriber session (the inbox widget) must carry the hex HMAC-SHA256 of the " +
          "subscriberId keyed with the environment's API key. Production has it on and cannot turn it off " +
          "(403); Development starts with it off and may switch it either way.",
        body: UpdateEnvironmentBody,
        response: {
          200: described(Envelope(EnvironmentResource), "The environment after the change"),
          ...errorResponsesOf({
            400: "hmac missing or not a boolean",
            403: "hmac: false in Production, whose subscriber sessions always need the HMAC",
          }),
        },
      },
    },
    async (request) => ({
      data: presentEnvironment(await setEnvironmentHmac(depsOf(app), request.tenant, request.body.hmac)),
    }),
  );
};
