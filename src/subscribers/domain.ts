import type { Channel } from "../workflows/domain.ts";
import type { Schedule } from "./schedule.ts";

export type { DaySchedule, Schedule, TimeRange, Weekday, WeeklySchedule } from "./schedule.ts";

/**
 * What a subscriber is, for the services and the engine: the person (or device, or team) a
 * notification goes to, named by the customer's own `subscriberId` within one environment. The
 * presenter makes Novu's response shape from it at the HTTP edge.
 */

/** Delivery credentials for one provider (a chat webhook, push device tokens). */
export interface ChannelCredentials {
  /** "" when unset. */
  webhookUrl: string;
  deviceTokens: string[];
}

/**
 * One provider's credentials as a subscriber keeps them. They are secrets (whoever has a Slack
 * webhook URL can post to its channel), so they are kept sealed, and what reads a subscriber sees
 * only their masked form; the chat step opens them (openChannelCredentials, service.ts).
 */
export interface SubscriberChannel {
  /** The provider the credentials are for (`slack`, `discord`, `fcm`...). */
  providerId: string;
  /** The integration they are for, when the customer named one; "" otherwise. */
  integrationIdentifier: string;
  /** Masked: the webhook's scheme, host and port, each device token `********` (maskedCredentials). */
  credentials: ChannelCredentials;
  /** The credentials themselves, sealed with the service's key, bound to the subscriber and provider. */
  sealed: string;
}

/** What an answer shows in place of a channel secret (as in place of an integration's). */
export const CHANNEL_MASK = "********";

/** A webhook as answers show it: where it goes (scheme, host, port), never the path or query that make it a secret. */
export function maskedWebhookUrl(url: string): string {
  if (url === "") return "";
  try {
    const { origin } = new URL(url);
    if (origin !== "null") return `${origin}/${CHANNEL_MASK}`;
  } catch {
    // Not a URL: nothing of it is shown.
  }
  return CHANNEL_MASK;
}

export function maskedCredentials(credentials: ChannelCredentials): ChannelCredentials {
  return {
    webhookUrl: maskedWebhookUrl(credentials.webhookUrl),
    deviceTokens: credentials.deviceTokens.map(() => CHANNEL_MASK),
  };
}

export interface Subscriber {
  /** Our id (an ObjectId); never changes, whatever the upserts. */
  id: string;
  organizationId: string;
  environmentId: string;
  /** The customer's id for the subscriber: 1–128 characters, unique in the environment. */
  subscriberId: string;
  firstName: string;
  lastName: string;
  email: string;
  phone: string;
  avatar: string;
  locale: string;
  /** An IANA zone name (`Europe/Paris`), "" when unknown: the clocks its schedule is read on. */
  timezone: string;
  data: Record<string, unknown>;
  channels: SubscriberChannel[];
  isOnline: boolean;
  /** ISO 8601; "" until the online status is first set. */
  lastOnlineAt: string;
  createdAt: string;
  updatedAt: string;
}

/**
 * The subscriber as a template or a step filter sees it (`{{subscriber.firstName}}`, `{{json
 * subscriber}}`): everything but its channels, whose credentials are no content's business.
 */
export function subscriberForTemplates(subscriber: Subscriber): Record<string, unknown> {
  const { channels: _channels, ...rest } = subscriber;
  return rest;
}

/** The profile fields a create, upsert or update may set; absent ones are left alone. */
export interface SubscriberProfile {
  firstName?: string;
  lastName?: string;
  email?: string;
  phone?: string;
  avatar?: string;
  locale?: string;
  timezone?: string;
  data?: Record<string, unknown>;
}

export type ProfileField = keyof SubscriberProfile;

/** The channels a subscriber set, and only those: an absent channel defers to the next rule. */
export type ChannelPreferences = Partial<Record<Channel, boolean>>;

/** One stored preference: the subscriber's global one, or the one for a workflow. */
export interface Preference {
  enabled: boolean;
  channels: ChannelPreferences;
  /** The global preference only: the subscriber's weekly schedule, when it set one. */
  schedule?: Schedule;
}

/** What a subscriber set that bears on one workflow: its global preference and the workflow's. */
export interface SubscriberPreferences {
  global?: Preference | undefined;
  workflow?: Preference | undefined;
}
