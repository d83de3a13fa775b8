import { described, Envelope, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { IdempotencyKeyHeaders, idempotent, replayable } from "../idempotency/idempotency.ts";
import { presentGroup } from "./presenter.ts";
import { GroupIdParams, GroupNameBody, NotificationGroup } from "./schemas.ts";
import { renameGroup } from "./service.ts";

export const updateNotificationGroupRoute: RoutePlugin = async (app) => {
  app.patch(
    "/notification-groups/:id",
    {
      schema: {
        operationId: "updateNotificationGroup",
        tags: ["Notification groups"],
        summary: "Rename a notification group",
        description:
          "The same naming rules as create: trimmed, 1–100 characters, unique in the environment (compared " +
          "case-insensitively); another group's name gets 409 naming that group's id.",
        params: GroupIdParams,
        headers: IdempotencyKeyHeaders,
        body: GroupNameBody,
        response: {
          200: replayable(described(Envelope(NotificationGroup), "The group as stored after the rename")),
          ...errorResponsesOf({
            400: "Invalid body or name, or an id that is not 24 lowercase hex characters",
            404: "No such group in the environment",
            409: "Another group has the name (the message names its id), or a request with this Idempotency-Key is still running",
            422: "This Idempotency-Key was used for a different request",
          }),
        },
      },
    },
    async (request, reply) =>
      idempotent(app.store.db, request, reply, 200, async (db) => ({
        data: presentGroup(
          await renameGroup(depsOf(app, db), request.tenant, request.params.id, request.body.name),
        ),
      })),
  );
};
