import { type Static, Type } from "typebox";
import { ObjectIdString, Page } from "../http/schema-helpers.ts";
import { TOPIC_KEY_PATTERN } from "../http/validation.ts";

export const MAX_TOPIC_SUBSCRIBERS_PER_CALL = 10_000;

const TopicKey = Type.String({
  pattern: TOPIC_KEY_PATTERN,
  description: "The topic's key: 1–100 letters, digits or the characters _ : . -",
  examples: ["team:engineering"],
});

export const Topic = Type.Object(
  {
    _id: ObjectIdString("The topic's id"),
    _organizationId: ObjectIdString("The organization"),
    _environmentId: ObjectIdString("The environment"),
    key: Type.String(),
    name: Type.String(),
    subscribers: Type.Array(Type.String(), { description: "The subscriberIds of the topic's subscribers" }),
    createdAt: Type.String({ format: "date-time" }),
    updatedAt: Type.String({ format: "date-time" }),
  },
  { title: "Topic", additionalProperties: false },
);
export type TopicResource = Static<typeof Topic>;

export const CreatedTopic = Type.Object(
  {
    data: Type.Object(
      { _id: ObjectIdString("The topic's id"), key: Type.String() },
      { additionalProperties: false },
    ),
  },
  { title: "TopicCreated", additionalProperties: false },
);

export const TopicPage = Page("TopicPage", Topic, { things: "topics", order: "Oldest first" });

export const TopicSubscriber = Type.Object(
  {
    _organizationId: ObjectIdString("The organization"),
    _environmentId: ObjectIdString("The environment"),
    _subscriberId: ObjectIdString("Our id for the subscriber"),
    _topicId: ObjectIdString("The topic's id"),
    topicKey: Type.String(),
    externalSubscriberId: Type.String({ description: "Your subscriberId" }),
  },
  { title: "TopicSubscriber", additionalProperties: false },
);

export const AddedSubscribers = Type.Object(
  {
    data: Type.Object(
      {
        succeeded: Type.Array(Type.String(), { description: "The subscriberIds now in the topic" }),
        failed: Type.Object(
          { notFound: Type.Array(Type.String(), { description: "subscriberIds with no subscriber" }) },
          { additionalProperties: false },
        ),
      },
      { additionalProperties: false },
    ),
  },
  { title: "TopicSubscribersAdded", additionalProperties: false },
);

export const CreateTopicBody = Type.Object(
  {
    key: TopicKey,
    name: Type.String({ maxLength: 1000, description: "1–200 characters after trimming" }),
  },
  { additionalProperties: false },
);
export type CreateTopicInput = Static<typeof CreateTopicBody>;

export const RenameTopicBody = Type.Object(
  { name: Type.String({ maxLength: 1000, description: "1–200 characters after trimming" }) },
  { additionalProperties: false },
);

export const TopicSubscribersBody = Type.Object(
  {
    subscribers: Type.Array(Type.String({ maxLength: 1000 }), {
      maxItems: MAX_TOPIC_SUBSCRIBERS_PER_CALL,
      description: `subscriberIds, at most ${MAX_TOPIC_SUBSCRIBERS_PER_CALL.toLocaleString("en")}`,
    }),
  },
  { additionalProperties: false },
);

export const TopicKeyParams = Type.Object({ topicKey: TopicKey });

export const TopicSubscriberParams = Type.Object({
  topicKey: TopicKey,
  subscriberId: Type.String({ maxLength: 1000, description: "Your subscriberId" }),
});

export const ListTopicsQuery = Type.Object({
  page: Type.Optional(
    Type.Integer({ minimum: 0, maximum: 1_000_000, description: "Zero-based page number; default 0" }),
  ),
  pageSize: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 100, description: "Page size, 1–100; default 10" }),
  ),
  key: Type.Optional(Type.String({ maxLength: 100, description: "Only the topic with this key" })),
});
