import { Type } from "typebox";
import { described, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { presentApiKey } from "./presenter.ts";
import { ApiKeyResource } from "./schemas.ts";
import { listEnvironmentKeys } from "./service.ts";

export const listApiKeysRoute: RoutePlugin = async (app) => {
  app.get(
    "/environments/api-keys",
    {
      schema: {
        operationId: "listApiKeys",
        tags: ["Environments"],
        summary: "The environment's live API keys, masked",
        description:
          "Keys are stored only as hashes, so a listing shows each key's id and last four characters, never the key.",
        response: {
          200: described(
            Type.Object({ data: Type.Array(ApiKeyResource) }, { additionalProperties: false }),
            "The live keys, oldest first",
          ),
          ...errorResponsesOf({}),
        },
      },
    },
    async (request) => ({
      data: (await listEnvironmentKeys(depsOf(app), request.tenant)).map(presentApiKey),
    }),
  );
};
