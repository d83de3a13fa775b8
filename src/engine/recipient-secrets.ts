import { type Deps, secretsOf } from "../deps.ts";
import { type ChannelCredentials, maskedCredentials } from "../subscribers/domain.ts";

/**
 * A trigger's recipients (and its actor) may be subscriber objects with channel credentials, which
 * are secrets (docs/engine.md, "Subscribers, topics and preferences"). What the trigger's records
 * keep of them is masked (`to` and `actor`, which the activity shows) or sealed (the recipients a
 * fan-out job upserts later), never in the clear.
 */

interface ChannelOfRecipient {
  providerId: string;
  integrationIdentifier?: string;
  credentials: Partial<ChannelCredentials>;
  /** The credentials, sealed, in a fan-out's stored recipients (`credentials` is then empty). */
  sealed?: string;
}

function channelsOf(value: unknown): ChannelOfRecipient[] | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const channels = (value as { channels?: unknown }).channels;
  return Array.isArray(channels) && channels.length > 0 ? (channels as ChannelOfRecipient[]) : undefined;
}

const clearOf = (credentials: Partial<ChannelCredentials>): ChannelCredentials => ({
  webhookUrl: credentials.webhookUrl ?? "",
  deviceTokens: credentials.deviceTokens ?? [],
});

/** A recipient, a list of them or an actor, with each channel's credentials masked as answers show them. */
export function withMaskedChannels<T>(value: T): T {
  if (Array.isArray(value)) return value.map(withMaskedChannels) as T;
  const channels = channelsOf(value);
  if (!channels) return value;
  return {
    ...value,
    channels: channels.map((channel) => ({
      ...channel,
      credentials: maskedCredentials(clearOf(channel.credentials)),
    })),
  };
}

const boundTo = (triggerId: string) => `trigger-recipients:${triggerId}`;

/** A fan-out trigger's direct recipients as it keeps them until its job upserts them: credentials sealed. */
export function sealRecipients<T>(deps: Deps, triggerId: string, recipients: readonly T[]): T[] {
  return recipients.map((recipient) => {
    const channels = channelsOf(recipient);
    if (!channels) return recipient;
    const box = secretsOf(deps);
    return {
      ...recipient,
      channels: channels.map(({ credentials, ...channel }) => ({
        ...channel,
        credentials: {},
        sealed: box.seal(JSON.stringify(clearOf(credentials)), boundTo(triggerId)),
      })),
    };
  });
}

/**
 * The recipients sealRecipients kept, opened for their upsert. A channel whose credentials no
 * longer open (another key) is left out: the subscriber keeps what it had for that provider.
 */
export function openRecipients<T>(deps: Deps, triggerId: string, recipients: readonly T[]): T[] {
  return recipients.map((recipient) => {
    const channels = channelsOf(recipient);
    if (!channels?.some((channel) => channel.sealed !== undefined)) return recipient;
    const box = secretsOf(deps);
    const opened: ChannelOfRecipient[] = [];
    for (const { sealed, ...channel } of channels) {
      if (sealed === undefined) opened.push(channel);
      else {
        try {
          opened.push({ ...channel, credentials: JSON.parse(box.open(sealed, boundTo(triggerId))) });
        } catch {
          // Sealed with another key: nothing to set.
        }
      }
    }
    return { ...recipient, channels: opened };
  });
}
