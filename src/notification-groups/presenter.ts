import type { NotificationGroup } from "./domain.ts";
import type { NotificationGroupResource } from "./schemas.ts";

/** A group as Novu's API shows it. */
export function presentGroup(group: NotificationGroup): NotificationGroupResource {
  return {
    _id: group.id,
    name: group.name,
    _environmentId: group.environmentId,
    _organizationId: group.organizationId,
    _parentId: group.parentId,
    createdAt: group.createdAt,
    updatedAt: group.updatedAt,
  };
}
