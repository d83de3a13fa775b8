import type { Deps } from "../deps.ts";
import type { ChannelSenders, ChatSender, DeliveryResult, EmailSender } from "../engine/service.ts";
import { type ChatProviderId, ProviderError, postWebhook } from "../providers/index.ts";
import type { Integration } from "./domain.ts";
import * as repo from "./repository.ts";
import { smtpSettingsOf } from "./smtp-settings.ts";
import { type IntegrationTools, sealing } from "./tools.ts";

/** A provider's failure as the engine's answer; anything else is a bug and propagates. */
function failed(error: unknown): DeliveryResult {
  if (error instanceof ProviderError) {
    return { ok: false, retryable: error.retryable, error: error.message, response: error.response };
  }
  throw error;
}

// A configuration the integration's owner can still fix: the step waits for it, with backoff.
const unusable = (error: string): DeliveryResult => ({ ok: false, retryable: true, error, response: "" });

const UNOPENED = "its credentials cannot be decrypted with this server's TIDINGS_SECRET_KEY";

/** An email integration as a sender (a test email goes through it as a step's email would). */
export function emailSender(integration: Integration, tools: IntegrationTools): EmailSender {
  return {
    integrationId: integration.id,
    identifier: integration.identifier,
    providerId: integration.providerId,
    async send(email) {
      if (!integration.credentials) return unusable(UNOPENED);
      const { settings, problems } = smtpSettingsOf(integration.credentials);
      if (!settings) {
        const [field, problem] = Object.entries(problems)[0] ?? ["credentials", "are incomplete"];
        return unusable(`its credentials.${field} ${problem}`);
      }
      const domain = settings.from.slice(settings.from.lastIndexOf("@") + 1);
      try {
        const sent = await tools.pools.send(integration.id, settings.smtp, {
          from: { name: email.senderName || settings.senderName, address: settings.from },
          to: email.to,
          subject: email.subject,
          html: email.html,
          messageId: `<${email.deliveryKey}@${domain}>`,
        });
        return { ok: true, ...sent };
      } catch (error) {
        return failed(error);
      }
    },
  };
}

function chatSender(integration: Integration, tools: IntegrationTools): ChatSender {
  return {
    integrationId: integration.id,
    identifier: integration.identifier,
    providerId: integration.providerId,
    async send(webhookUrl, text) {
      try {
        const sent = await postWebhook(integration.providerId as ChatProviderId, webhookUrl, text, {
          timeoutMs: tools.webhookTimeoutMs,
          outbound: tools.outbound,
        });
        return { ok: true, ...sent };
      } catch (error) {
        return failed(error);
      }
    },
  };
}

/**
 * The engine's ChannelSenders over the environment's integrations: read (and unsealed) for each
 * step, so an integration changed by any process is what the next message goes through.
 */
export function channelSenders(deps: Deps, tools: IntegrationTools): ChannelSenders | undefined {
  if (!tools.box) return undefined;
  const { unseal } = sealing(tools);
  return {
    async email(environmentId) {
      const [integration] = await repo.listIntegrations(deps.db, environmentId, unseal, {
        active: true,
        channel: "email",
        primaryFirst: true,
      });
      return integration ? emailSender(integration, tools) : undefined;
    },
    async chat(environmentId) {
      const integrations = await repo.listIntegrations(deps.db, environmentId, unseal, {
        active: true,
        channel: "chat",
        primaryFirst: true,
      });
      return integrations.map((integration) => chatSender(integration, tools));
    },
  };
}
