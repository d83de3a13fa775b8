import type { Message } from "../engine/domain.ts";
import { presentMessage } from "../inbox/presenter.ts";
import type { Subscriber } from "../subscribers/domain.ts";

/** What the widget shows of its subscriber: the profile, never credentials or custom data. */
export function presentProfile(subscriber: Subscriber) {
  return {
    _id: subscriber.id,
    subscriberId: subscriber.subscriberId,
    firstName: subscriber.firstName,
    lastName: subscriber.lastName,
    email: subscriber.email,
    phone: subscriber.phone,
    avatar: subscriber.avatar,
  };
}

/** A message as the widget gets it: Novu's shape, with the subscriber's profile only. */
export function presentWidgetMessage(message: Message, subscriber: Subscriber) {
  return { ...presentMessage(message), subscriber: presentProfile(subscriber) };
}
