// The providers feature's public face: what the integrations feature delivers through.
export {
  type ChatProviderId,
  type Delivered,
  PROVIDERS,
  type ProviderChannel,
  ProviderError,
  type ProviderId,
  type ProviderInfo,
  providerInfo,
} from "./domain.ts";
export { plainTextOf } from "./plain-text.ts";
export { type OutgoingEmail, type SmtpPoolOptions, SmtpPools, type SmtpSettings } from "./smtp.ts";
export { postWebhook, type WebhookOptions, webhookBody } from "./webhook.ts";
