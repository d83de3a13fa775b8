/**
 * The providers Tidings delivers through, and what a provider call answers. One file per provider
 * beside this one (smtp.ts, webhook.ts); no provider code lives anywhere else.
 */

export type ProviderChannel = "email" | "chat";

export interface ProviderInfo {
  /** Novu's provider id. */
  id: string;
  channel: ProviderChannel;
  /** The name an integration gets when it is created without one (as Novu names it). */
  displayName: string;
}

export const PROVIDERS = [
  { id: "nodemailer", channel: "email", displayName: "Custom SMTP" },
  { id: "slack", channel: "chat", displayName: "Slack" },
  { id: "discord", channel: "chat", displayName: "Discord" },
  { id: "msteams", channel: "chat", displayName: "MSTeams" },
  { id: "mattermost", channel: "chat", displayName: "Mattermost" },
] as const satisfies readonly ProviderInfo[];

export type ProviderId = (typeof PROVIDERS)[number]["id"];
export type ChatProviderId = Extract<(typeof PROVIDERS)[number], { channel: "chat" }>["id"];

export const providerInfo = (id: string): ProviderInfo | undefined => PROVIDERS.find((p) => p.id === id);

/** What a delivered message left behind: the provider's id for it and its answer (for the record). */
export interface Delivered {
  messageId: string;
  response: string;
}

/**
 * A provider call that did not deliver. `retryable`: whether trying again later can succeed (the
 * provider is down, slow, or asks for patience) or not (it refused this message for good).
 * `response` is the provider's answer as far as there was one; neither field holds a credential
 * or a webhook URL.
 */
export class ProviderError extends Error {
  override name = "ProviderError";
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly response = "",
  ) {
    super(message);
  }
}
