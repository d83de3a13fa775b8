import { Type } from "typebox";
import { described, Envelope, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { mxRecordStatus } from "./service.ts";

export const getMxRecordStatusRoute: RoutePlugin = async (app) => {
  app.get(
    "/inbound-parse/mx/status",
    {
      schema: {
        operationId: "getMxRecordStatus",
        tags: ["Inbound Parse"],
        summary: "Whether the MX record for inbound email is set up: never (Tidings receives no email)",
        description:
          "Novu checks the MX record of the environment's inbound-parse domain. Tidings receives no email, so " +
          "no environment has one, and the answer is what Novu answers then: `mxRecordConfigured: false`.",
        response: {
          200: described(
            Envelope(
              Type.Object(
                { mxRecordConfigured: Type.Boolean({ description: "Always false" }) },
                { additionalProperties: false },
              ),
            ),
            "The MX record's status",
          ),
          ...errorResponsesOf({}),
        },
      },
    },
    async (request) => ({ data: await mxRecordStatus(depsOf(app), request.tenant) }),
  );
};
