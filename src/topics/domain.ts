import type { Channel } from "../workflows/domain.ts";

/**
 * A topic: a named list of an environment's subscribers that a trigger can address as one recipient
 * (`to: {type: "Topic", topicKey}`). Membership is stored a row per subscriber, so a fan-out can walk
 * any size of topic in pages (see pageTopicSubscribers in ./service.ts).
 */
export interface Topic {
  id: string;
  organizationId: string;
  environmentId: string;
  /** The customer's key for the topic: unique in the environment, `[A-Za-z0-9_:.-]{1,100}`. */
  key: string;
  name: string;
  /** The customer's own data about the topic (Novu's /v2 topics); `{}` when none. */
  data: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
}

/** One subscriber of a topic, as a fan-out reads it. */
export interface TopicMember {
  /** Our id for the subscriber (its `_id`). */
  subscriberRef: string;
  /** The customer's subscriberId. */
  subscriberId: string;
}

/** Novu's identifier for a subscriber's subscription to a topic when none is chosen. */
export const defaultSubscriptionIdentifier = (topicKey: string, subscriberId: string) =>
  `tk_${topicKey}:si_${subscriberId}`;

/**
 * A subscriber's subscription to a topic, as its inbox manages it: the membership itself, with an
 * identifier (unique in the topic) and a name. A subscriber has at most one per topic.
 */
export interface TopicSubscription {
  id: string;
  identifier: string;
  /** "" when none was given. */
  name: string;
  topic: Topic;
  /** Our id for the subscriber (its `_id`). */
  subscriberRef: string;
  subscriberId: string;
  createdAt: string;
  /** When its name or preferences last changed; its createdAt until then. */
  updatedAt: string;
}

/**
 * A subscription's preference for one workflow. `enabled: false`, or a `condition` the trigger's
 * payload does not meet, and a trigger to the topic does not notify the subscriber at all; a channel
 * set to false turns that channel's steps off for what comes through the topic.
 */
export interface SubscriptionPreference {
  workflowId: string;
  enabled: boolean;
  /** Only the channels set. */
  channels: Partial<Record<Channel, boolean>>;
  /** A JSON Logic rule on `{payload}`; undefined when none. */
  condition?: unknown;
}
