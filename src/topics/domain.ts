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
