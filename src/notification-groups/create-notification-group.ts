import { described, Envelope, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { IdempotencyKeyHeaders, idempotent, replayable } from "../idempotency/idempotency.ts";
import { presentGroup } from "./presenter.ts";
import { GroupNameBody, NotificationGroup } from "./schemas.ts";
import { createGroup } from "./service.ts";

export const createNotificationGroupRoute: RoutePlugin = async (app) => {
  app.post(
    "/notification-groups",
    {
      schema: {
        operationId: "createNotificationGroup",
        tags: ["Notification groups"],
        summary: "Create a notification group",
        description:
          "The name is trimmed and must be unique in the environment (compared case-insensitively); a " +
          "duplicate gets 409 naming the existing group's id.",
        headers: IdempotencyKeyHeaders,
        body: GroupNameBody,
        response: {
          201: replayable(described(Envelope(NotificationGroup), "The group as stored")),
          ...errorResponsesOf({
            400: "Invalid body or name",
            409: "Another group has the name (the message names its id), or a request with this Idempotency-Key is still running",
            422: "This Idempotency-Key was used for a different request",
          }),
        },
      },
    },
    async (request, reply) =>
      idempotent(app.store.db, request, reply, 201, async (db) => ({
        data: presentGroup(await createGroup(depsOf(app, db), request.tenant, request.body.name)),
      })),
  );
};
