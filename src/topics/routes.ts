import type { RoutePlugin } from "../http/types.ts";
import { addTopicSubscribersRoute } from "./add-topic-subscribers.ts";
import { createTopicRoute } from "./create-topic.ts";
import { createTopicSubscriptionsRoute } from "./create-topic-subscriptions.ts";
import { deleteTopicRoute } from "./delete-topic.ts";
import { deleteTopicSubscriptionsRoute } from "./delete-topic-subscriptions.ts";
import { deleteTopicV2Route } from "./delete-topic-v2.ts";
import { getTopicRoute } from "./get-topic.ts";
import { getTopicSubscriberRoute } from "./get-topic-subscriber.ts";
import { getTopicSubscriptionRoute } from "./get-topic-subscription.ts";
import { getTopicV2Route } from "./get-topic-v2.ts";
import { listSubscriberSubscriptionsRoute } from "./list-subscriber-subscriptions.ts";
import { listTopicSubscriptionsRoute } from "./list-topic-subscriptions.ts";
import { listTopicsRoute } from "./list-topics.ts";
import { listTopicsV2Route } from "./list-topics-v2.ts";
import { removeTopicSubscribersRoute } from "./remove-topic-subscribers.ts";
import { renameTopicRoute } from "./rename-topic.ts";
import { updateTopicSubscriptionRoute } from "./update-topic-subscription.ts";
import { updateTopicV2Route } from "./update-topic-v2.ts";
import { upsertTopicRoute } from "./upsert-topic.ts";

export const topicRoutes: RoutePlugin = async (app) => {
  await app.register(createTopicRoute);
  await app.register(listTopicsRoute);
  await app.register(getTopicRoute);
  await app.register(renameTopicRoute);
  await app.register(deleteTopicRoute);
  await app.register(addTopicSubscribersRoute);
  await app.register(removeTopicSubscribersRoute);
  await app.register(getTopicSubscriberRoute);
};

/**
 * The topic routes of Novu's /v2 (what @novu/api 3 calls), over the same service: topics paged by
 * cursor, made or updated by key, and their subscriptions with their preferences (the inbox's), from
 * the topic's side and the subscriber's.
 */
export const topicV2Routes: RoutePlugin = async (app) => {
  await app.register(listTopicsV2Route);
  await app.register(upsertTopicRoute);
  await app.register(getTopicV2Route);
  await app.register(updateTopicV2Route);
  await app.register(deleteTopicV2Route);
  await app.register(listTopicSubscriptionsRoute);
  await app.register(createTopicSubscriptionsRoute);
  await app.register(deleteTopicSubscriptionsRoute);
  await app.register(getTopicSubscriptionRoute);
  await app.register(updateTopicSubscriptionRoute);
  await app.register(listSubscriberSubscriptionsRoute);
};
