import type { Static } from "typebox";
import { CHANNELS, type Channel } from "../workflows/domain.ts";
import type { WorkflowSummary } from "../workflows/service.ts";
import type { SubscriptionPreference, Topic, TopicSubscription } from "./domain.ts";
import type {
  InboxWorkflow,
  SubscriptionPreferenceSchema,
  SubscriptionSchema,
  SubscriptionV2,
  TopicResource,
  TopicV2,
} from "./schemas.ts";
import type { SubscriptionView, SubscriptionWithSubscriber } from "./service.ts";

export function presentTopic(topic: Topic, subscribers: string[]): TopicResource {
  return {
    _id: topic.id,
    _organizationId: topic.organizationId,
    _environmentId: topic.environmentId,
    key: topic.key,
    name: topic.name,
    subscribers,
    createdAt: topic.createdAt,
    updatedAt: topic.updatedAt,
  };
}

/** A workflow as a preference names it (Novu's inbox and its /v2 API). */
export function presentInboxWorkflow(workflow: WorkflowSummary): Static<typeof InboxWorkflow> {
  return {
    id: workflow.id,
    identifier: workflow.identifier,
    name: workflow.name,
    critical: workflow.critical,
    tags: workflow.tags,
    severity: workflow.severity,
  };
}

export function presentSubscriptionPreference(
  subscription: TopicSubscription,
  workflow: WorkflowSummary,
  preference: SubscriptionPreference,
): Static<typeof SubscriptionPreferenceSchema> {
  const channels = {} as Record<Channel, boolean>;
  for (const channel of CHANNELS) channels[channel] = preference.channels[channel] ?? true;
  const out: Static<typeof SubscriptionPreferenceSchema> = {
    // The identifier, not the id: the client files a preference under its subscription's identifier,
    // and names the subscription by it when it changes the preference.
    subscriptionId: subscription.identifier,
    workflow: presentInboxWorkflow(workflow),
    enabled: preference.enabled,
    channels,
  };
  if (preference.condition !== undefined) out.condition = preference.condition;
  return out;
}

/** A subscription as the inbox reads it (and @novu/api's `topics.subscriptions.getSubscription`). */
export function presentSubscription(view: SubscriptionView): Static<typeof SubscriptionSchema> {
  const { subscription } = view;
  return {
    id: subscription.id,
    identifier: subscription.identifier,
    ...(subscription.name !== "" ? { name: subscription.name } : {}),
    preferences: view.preferences.map(({ workflow, preference }) =>
      presentSubscriptionPreference(subscription, workflow, preference),
    ),
  };
}

// ---------------------------------------------------------------- Novu's /v2

/** A topic as Novu's /v2 shows it (@novu/api's `topics`). */
export function presentTopicV2(topic: Topic): Static<typeof TopicV2> {
  return {
    _id: topic.id,
    key: topic.key,
    name: topic.name,
    data: topic.data,
    createdAt: topic.createdAt,
    updatedAt: topic.updatedAt,
  };
}

/** A subscription as Novu's /v2 lists it: its topic, its subscriber, its preferences. */
export function presentSubscriptionV2(view: SubscriptionWithSubscriber): Static<typeof SubscriptionV2> {
  const { subscription, subscriber } = view;
  return {
    _id: subscription.id,
    identifier: subscription.identifier,
    name: subscription.name,
    topic: presentTopicV2(subscription.topic),
    subscriber: subscriber
      ? {
          _id: subscriber.id,
          subscriberId: subscriber.subscriberId,
          firstName: subscriber.firstName,
          lastName: subscriber.lastName,
          email: subscriber.email,
          avatar: subscriber.avatar,
        }
      : null,
    preferences: view.preferences.map(({ workflow, preference }) =>
      presentSubscriptionPreference(subscription, workflow, preference),
    ),
    createdAt: subscription.createdAt,
    updatedAt: subscription.updatedAt,
  };
}
