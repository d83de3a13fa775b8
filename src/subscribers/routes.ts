import type { RoutePluginWith } from "../http/types.ts";
import type { OutboundPolicy } from "../outbound.ts";
import { bulkCreateSubscribersRoute } from "./bulk-create-subscribers.ts";
import { createSubscriberRoute } from "./create-subscriber.ts";
import { createSubscriberV2Route } from "./create-subscriber-v2.ts";
import { deleteSubscriberRoute } from "./delete-subscriber.ts";
import { deleteSubscriberCredentialsRoute } from "./delete-subscriber-credentials.ts";
import { deleteSubscriberV2Route } from "./delete-subscriber-v2.ts";
import { getSubscriberRoute } from "./get-subscriber.ts";
import { getSubscriberPreferencesByLevelRoute } from "./get-subscriber-preferences-by-level.ts";
import { getSubscriberV2Route } from "./get-subscriber-v2.ts";
import { listSubscriberPreferencesRoute } from "./list-subscriber-preferences.ts";
import { listSubscribersRoute } from "./list-subscribers.ts";
import { modifySubscriberCredentialsRoute } from "./modify-subscriber-credentials.ts";
import { patchSubscriberRoute } from "./patch-subscriber.ts";
import { searchSubscribersRoute } from "./search-subscribers.ts";
import type { SubscriberErasure } from "./service.ts";
import { setSubscriberCredentialsRoute } from "./set-subscriber-credentials.ts";
import { updateSubscriberRoute } from "./update-subscriber.ts";
import { updateSubscriberGlobalPreferencesRoute } from "./update-subscriber-global-preferences.ts";
import { updateSubscriberOnlineStatusRoute } from "./update-subscriber-online-status.ts";
import { updateSubscriberPreferenceRoute } from "./update-subscriber-preference.ts";

/**
 * `erasure`: what the features above keep for a subscriber, deleted with it (see SubscriberErasure).
 * `outbound`: the outbound-address policy a chat webhookUrl is checked against when it is saved.
 */
export const subscriberRoutes: RoutePluginWith<{
  erasure: SubscriberErasure;
  outbound: OutboundPolicy;
}> = async (app, { erasure, outbound }) => {
  await app.register(createSubscriberRoute, { outbound });
  await app.register(bulkCreateSubscribersRoute, { outbound });
  await app.register(listSubscribersRoute);
  await app.register(getSubscriberRoute);
  await app.register(updateSubscriberRoute, { outbound });
  await app.register(deleteSubscriberRoute, { erasure });
  await app.register(setSubscriberCredentialsRoute, { outbound });
  await app.register(modifySubscriberCredentialsRoute, { outbound });
  await app.register(deleteSubscriberCredentialsRoute);
  await app.register(updateSubscriberOnlineStatusRoute);
  await app.register(listSubscriberPreferencesRoute);
  await app.register(getSubscriberPreferencesByLevelRoute);
  await app.register(updateSubscriberPreferenceRoute);
  await app.register(updateSubscriberGlobalPreferencesRoute);
};

/**
 * The subscriber routes of Novu's /v2 (what @novu/api 3 calls), over the same service: search by
 * cursor, create (with `failIfExists`), read, patch, delete.
 */
export const subscriberV2Routes: RoutePluginWith<{
  erasure: SubscriberErasure;
  outbound: OutboundPolicy;
}> = async (app, { erasure, outbound }) => {
  await app.register(searchSubscribersRoute);
  await app.register(createSubscriberV2Route, { outbound });
  await app.register(getSubscriberV2Route);
  await app.register(patchSubscriberRoute, { outbound });
  await app.register(deleteSubscriberV2Route, { erasure });
};
