import { errorResponsesOf, NoContent } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { CredentialsParams } from "./schemas.ts";
import { deleteCredentials } from "./service.ts";

export const deleteSubscriberCredentialsRoute: RoutePlugin = async (app) => {
  app.delete(
    "/subscribers/:subscriberId/credentials/:providerId",
    {
      schema: {
        operationId: "deleteSubscriberCredentials",
        tags: ["Subscribers"],
        summary: "Remove a subscriber's credentials for one provider",
        description: "Removing credentials the subscriber does not have succeeds too.",
        params: CredentialsParams,
        response: {
          204: NoContent("The credentials are gone"),
          ...errorResponsesOf({
            400: "A malformed subscriberId or providerId",
            404: "No such subscriber in the environment",
          }),
        },
      },
    },
    async (request, reply) => {
      await deleteCredentials(
        depsOf(app),
        request.tenant,
        request.params.subscriberId,
        request.params.providerId,
      );
      return reply.code(204).send(null);
    },
  );
};
