import type { RoutePlugin } from "../http/types.ts";
import { addTopicSubscribersRoute } from "./add-topic-subscribers.ts";
import { createTopicRoute } from "./create-topic.ts";
import { deleteTopicRoute } from "./delete-topic.ts";
import { getTopicRoute } from "./get-topic.ts";
import { getTopicSubscriberRoute } from "./get-topic-subscriber.ts";
import { listTopicsRoute } from "./list-topics.ts";
import { removeTopicSubscribersRoute } from "./remove-topic-subscribers.ts";
import { renameTopicRoute } from "./rename-topic.ts";

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
