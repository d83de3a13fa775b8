import { described, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePluginWith } from "../http/types.ts";
import { TestEmailBody, TestEmailSent } from "./schemas.ts";
import { type IntegrationTools, sendTestEmail } from "./service.ts";

export const sendTestEmailRoute: RoutePluginWith<{ tools: IntegrationTools }> = async (app, { tools }) => {
  app.post(
    "/events/test/email",
    {
      schema: {
        operationId: "sendTestEmail",
        tags: ["Integrations"],
        summary: "Send a test email now, through an email integration",
        description:
          "Novu's test email: `subject` and `content` are rendered with `payload` as an email step's are, and sent " +
          "at once through `integrationId` (active or not, so a new integration can be tried first) or, without " +
          "it, the primary active email integration. Nothing is recorded in the activity. Takes no " +
          "Idempotency-Key: each call sends an email, which a replay could not take back.",
        body: TestEmailBody,
        response: {
          201: described(TestEmailSent, "Sent: the SMTP server accepted it"),
          ...errorResponsesOf({
            400: "Invalid body, no active email integration, a template that does not render, or the provider refused the email (its reason)",
            404: "No such integration in the environment",
          }),
        },
      },
    },
    async (request, reply) => {
      const { integration, to } = await sendTestEmail(depsOf(app), request.tenant, request.body, tools);
      reply.code(201);
      return { data: { integrationId: integration.id, identifier: integration.identifier, to } };
    },
  );
};
