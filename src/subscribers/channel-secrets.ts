import type { SecretBox } from "../store/secret-box.ts";
import { type ChannelCredentials, maskedCredentials, type SubscriberChannel } from "./domain.ts";

// The format is the one migration 0014 seals older rows into: keep them alike.
const boundTo = (subscriberRef: string, providerId: string) =>
  `subscriber-channel:${subscriberRef}:${providerId}`;

/** A provider's credentials as the subscriber (its row id: `subscriberRef`) keeps them: masked, and sealed. */
export function sealChannel(
  box: SecretBox,
  subscriberRef: string,
  providerId: string,
  integrationIdentifier: string,
  credentials: ChannelCredentials,
): SubscriberChannel {
  return {
    providerId,
    integrationIdentifier,
    credentials: maskedCredentials(credentials),
    sealed: box.seal(JSON.stringify(credentials), boundTo(subscriberRef, providerId)),
  };
}

/**
 * The channel's credentials, opened; undefined when they cannot be: no key, another key
 * (TIDINGS_SECRET_KEY changed), or a value copied from another subscriber or provider.
 */
export function openChannel(
  box: SecretBox | undefined,
  subscriberRef: string,
  channel: SubscriberChannel,
): ChannelCredentials | undefined {
  if (!box || channel.sealed === "") return undefined;
  try {
    const opened = JSON.parse(
      box.open(channel.sealed, boundTo(subscriberRef, channel.providerId)),
    ) as Partial<ChannelCredentials>;
    return { webhookUrl: opened.webhookUrl ?? "", deviceTokens: opened.deviceTokens ?? [] };
  } catch {
    return undefined;
  }
}
