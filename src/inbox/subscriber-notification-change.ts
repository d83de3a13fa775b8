import type { Deps } from "../deps.ts";
import { type App, depsOf } from "../http/types.ts";
import type { Subscriber } from "../subscribers/domain.ts";
import { getSubscriber } from "../subscribers/service.ts";
import type { Tenant } from "../tenancy/tenant.ts";
import type { InboxNotification } from "./domain.ts";
import type { InboxRouteOptions } from "./options.ts";
import { presentInboxNotification } from "./presenter.ts";

/** What the API key's routes over one subscriber's notifications read of their request. */
interface SubscriberRequest {
  tenant: Tenant;
  params: { subscriberId: string };
}

/** The subscriber a route names in its environment; 404 when it has none. */
export function subscriberOf(
  app: Pick<App, "store" | "clock">,
  request: SubscriberRequest,
): Promise<Subscriber> {
  return getSubscriber(depsOf(app), request.tenant, request.params.subscriberId);
}

/** Tells the subscriber's sockets (in every process) that its feed changed. */
export function announce(options: InboxRouteOptions, tenant: Tenant, subscriber: Subscriber): void {
  options.onChange?.({ environmentId: tenant.environmentId, subscriberRef: subscriber.id });
}

/**
 * One of the named subscriber's notifications changed by `act` (a 404 when either is not there), its
 * sockets told, and the notification answered as the inbox shows it.
 */
export async function changeSubscriberNotification(
  app: Pick<App, "store" | "clock">,
  options: InboxRouteOptions,
  request: SubscriberRequest,
  act: (deps: Deps, subscriber: Subscriber) => Promise<InboxNotification>,
) {
  const subscriber = await subscriberOf(app, request);
  const notification = await act(depsOf(app), subscriber);
  announce(options, request.tenant, subscriber);
  return { data: presentInboxNotification(notification, subscriber) };
}
