import type { Topic } from "./domain.ts";
import type { TopicResource } from "./schemas.ts";

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
