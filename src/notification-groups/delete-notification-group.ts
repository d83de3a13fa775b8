import { described, errorResponsesOf } from "../http/schema-helpers.ts";
import type { RoutePluginWith } from "../http/types.ts";
import { depsOf } from "../http/types.ts";
import { GroupDeleted, GroupIdParams } from "./schemas.ts";
import { deleteGroup, type GroupReferences } from "./service.ts";

export const deleteNotificationGroupRoute: RoutePluginWith<{ references: GroupReferences }> = async (
  app,
  { references },
) => {
  app.delete(
    "/notification-groups/:id",
    {
      schema: {
        operationId: "deleteNotificationGroup",
        tags: ["Notification groups"],
        summary: "Delete a notification group",
        description:
          "409 while any workflow uses the group (the message says how many): move or delete them first.",
        params: GroupIdParams,
        response: {
          200: described(GroupDeleted, "The group is deleted"),
          ...errorResponsesOf({
            400: "The id is not 24 lowercase hex characters",
            404: "No such group in the environment",
            409: "Workflows still use the group (the message says how many)",
          }),
        },
      },
    },
    async (request) => {
      await deleteGroup(depsOf(app), request.tenant, request.params.id, references);
      return { data: { acknowledged: true as const, status: "deleted" as const } };
    },
  );
};
