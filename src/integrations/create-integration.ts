import { described, Envelope, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePluginWith } from "../http/types.ts";
import { IdempotencyKeyHeaders, idempotent, replayable } from "../idempotency/idempotency.ts";
import { presentIntegration } from "./presenter.ts";
import { CreateIntegrationBody, IntegrationResource } from "./schemas.ts";
import { createIntegration, type IntegrationTools } from "./service.ts";

export const createIntegrationRoute: RoutePluginWith<{ tools: IntegrationTools }> = async (
  app,
  { tools },
) => {
  app.post(
    "/integrations",
    {
      schema: {
        operationId: "createIntegration",
        tags: ["Integrations"],
        summary: "Configure a provider for the environment",
        description:
          "Providers: `nodemailer` (channel `email`: SMTP `host`, `port`, `secure`, `user`, `password`, `from`, " +
          "`senderName`), and `slack`, `discord`, `msteams`, `mattermost` (channel `chat`: the webhook is each " +
          "subscriber's credential). An active nodemailer integration needs host, port and from. Credentials are " +
          "encrypted at rest; secret fields come back masked. `check: true` connects to the SMTP server first.",
        headers: IdempotencyKeyHeaders,
        body: CreateIntegrationBody,
        response: {
          201: replayable(described(Envelope(IntegrationResource), "The integration as stored")),
          ...errorResponsesOf({
            400: "Invalid body, an unsupported provider, a channel the provider does not serve, missing SMTP settings, or a failed check",
            409: "Another integration of the environment has the identifier, or a request with this Idempotency-Key is still running",
            422: "This Idempotency-Key was used for a different request",
          }),
        },
      },
    },
    async (request, reply) =>
      idempotent(app.store.db, request, reply, 201, async (db) => ({
        data: presentIntegration(
          await createIntegration(depsOf(app, db), request.tenant, request.body, tools),
        ),
      })),
  );
};
