import { Type } from "typebox";
import { described, Envelope, errorResponsesOf } from "../http/schema-helpers.ts";
import type { RoutePlugin } from "../http/types.ts";
import { SYSTEM_VARIABLES } from "./templates.ts";

const TypedFields = Type.Record(Type.String(), Type.String(), {
  description: "Field name to its type (string, number, boolean, array, object)",
});

const Variables = Type.Object(
  {
    translations: Type.Record(Type.String(), Type.Unknown(), {
      description: "Translation keys by locale: always empty (Tidings has no translations)",
    }),
    system: Type.Record(Type.String(), TypedFields, {
      description:
        "What the engine gives every template besides the payload: subscriber, actor, step, branding, tenant",
    }),
  },
  { title: "WorkflowVariables", additionalProperties: false },
);

/**
 * The variables a step template may use besides its payload (Novu's `GET /v1/workflows/variables`,
 * which its editor offers). Registered before `/workflows/:workflowId`, whose path it shadows for a
 * workflow whose identifier is `variables`, as in Novu.
 */
export const getVariablesRoute: RoutePlugin = async (app) => {
  app.get(
    "/workflows/variables",
    {
      schema: {
        operationId: "getWorkflowVariables",
        tags: ["Workflows"],
        summary: "The system variables templates may use",
        response: {
          200: described(Envelope(Variables), "The variables, by root"),
          ...errorResponsesOf({}),
        },
      },
    },
    async () => ({ data: { translations: {}, system: SYSTEM_VARIABLES } }),
  );
};
