import { Type } from "typebox";
import { described, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePluginWith } from "../http/types.ts";
import type { KeySealer } from "./domain.ts";
import { presentApiKey } from "./presenter.ts";
import { ApiKeyResource } from "./schemas.ts";
import { regenerateApiKey } from "./service.ts";

export const regenerateApiKeyRoute: RoutePluginWith<{ sealer?: KeySealer | undefined }> = async (
  app,
  options,
) => {
  app.post(
    "/environments/api-keys/regenerate",
    {
      schema: {
        operationId: "regenerateApiKey",
        tags: ["Environments"],
        summary: "Replace the calling API key with a new one",
        description:
          "A new key for the environment, shown this once, and the key that made the call revoked at once (its " +
          "next request is a 401). Takes no Idempotency-Key: a stored response would keep the new key in " +
          "plaintext, and a retry with the revoked key is refused anyway.",
        response: {
          201: described(
            Type.Object({ data: Type.Array(ApiKeyResource) }, { additionalProperties: false }),
            "The new key, whole (a one-element list, as Novu answers)",
          ),
          ...errorResponsesOf({}),
        },
      },
    },
    async (request, reply) => {
      const created = await regenerateApiKey(depsOf(app), request.tenant, options.sealer);
      reply.code(201);
      return { data: [presentApiKey(created)] };
    },
  );
};
