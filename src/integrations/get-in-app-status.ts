import { Type } from "typebox";
import { described, Envelope, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { inAppStatus } from "./service.ts";

export const getInAppStatusRoute: RoutePlugin = async (app) => {
  app.get(
    "/integrations/in-app/status",
    {
      schema: {
        operationId: "getInAppStatus",
        tags: ["Integrations"],
        summary: "Whether the in-app onboarding's inbox has connected",
        description:
          "Novu's rule: `active` once a subscriber whose subscriberId contains `on-boarding-subscriber` (any " +
          "case) is online in the key's environment: the status `PATCH /v1/subscribers/{id}/online-status` sets " +
          "(Tidings' sockets do not set it, as Novu's do when the inbox connects). The in-app channel itself " +
          "needs no integration.",
        response: {
          200: described(
            Envelope(
              Type.Object(
                { active: Type.Boolean({ description: "An onboarding subscriber is online" }) },
                { additionalProperties: false },
              ),
            ),
            "The in-app onboarding's status",
          ),
          ...errorResponsesOf({}),
        },
      },
    },
    async (request) => ({ data: await inAppStatus(depsOf(app), request.tenant) }),
  );
};
