import { CHANNELS, type Channel } from "../workflows/domain.ts";
import type { Preference, Subscriber } from "./domain.ts";
import type { GlobalPreferenceResource, SubscriberResource } from "./schemas.ts";

/** A subscriber in Novu's response shape: every field present, "" or [] where there is no value. */
export function presentSubscriber(subscriber: Subscriber): SubscriberResource {
  return {
    _id: subscriber.id,
    _organizationId: subscriber.organizationId,
    _environmentId: subscriber.environmentId,
    subscriberId: subscriber.subscriberId,
    firstName: subscriber.firstName,
    lastName: subscriber.lastName,
    email: subscriber.email,
    phone: subscriber.phone,
    avatar: subscriber.avatar,
    locale: subscriber.locale,
    timezone: subscriber.timezone,
    data: subscriber.data,
    channels: subscriber.channels.map((channel) => ({
      providerId: channel.providerId,
      integrationIdentifier: channel.integrationIdentifier,
      // Integrations are not modelled yet; Novu clients read the field, so it is there, empty.
      _integrationId: "",
      credentials: {
        webhookUrl: channel.credentials.webhookUrl,
        deviceTokens: channel.credentials.deviceTokens,
      },
    })),
    isOnline: subscriber.isOnline,
    lastOnlineAt: subscriber.lastOnlineAt,
    deleted: false,
    createdAt: subscriber.createdAt,
    updatedAt: subscriber.updatedAt,
  };
}

/** All five channels: the ones the subscriber set, the rest on. */
export function allChannels(
  channels: Partial<Record<Channel, boolean>>,
  fallback: (channel: Channel) => boolean = () => true,
): Record<Channel, boolean> {
  const out = {} as Record<Channel, boolean>;
  for (const channel of CHANNELS) out[channel] = channels[channel] ?? fallback(channel);
  return out;
}

/** The global preference as Novu answers it: enabled unless turned off, every channel listed. */
export function presentGlobalPreference(preference: Preference | undefined): GlobalPreferenceResource {
  const resource: GlobalPreferenceResource = {
    preference: {
      enabled: preference?.enabled ?? true,
      channels: allChannels(preference?.channels ?? {}),
    },
  };
  // Set from the inbox: shown beside the preference, as Novu's global preference carries it.
  if (preference?.schedule) resource.schedule = preference.schedule;
  return resource;
}
