import { described, Envelope, errorResponsesOf } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { IdempotencyKeyHeaders, idempotent, replayable } from "../idempotency/idempotency.ts";
import { presentSubscriber } from "./presenter.ts";
import { OnlineStatusBody, Subscriber, SubscriberIdParams } from "./schemas.ts";
import { setOnlineStatus } from "./service.ts";

export const updateSubscriberOnlineStatusRoute: RoutePlugin = async (app) => {
  app.patch(
    "/subscribers/:subscriberId/online-status",
    {
      schema: {
        operationId: "updateSubscriberOnlineStatus",
        tags: ["Subscribers"],
        summary: "Set whether a subscriber is online",
        description:
          "Body `{isOnline}` (Novu's API) or `{online}` (what @novu/node's updateOnlineStatus sends). Sets " +
          "`isOnline` and stamps `lastOnlineAt`.",
        headers: IdempotencyKeyHeaders,
        params: SubscriberIdParams,
        body: OnlineStatusBody,
        response: {
          200: replayable(described(Envelope(Subscriber), "The subscriber as stored after the change")),
          ...errorResponsesOf({
            400: "isOnline missing or not a boolean",
            404: "No such subscriber in the environment",
            409: "A request with this Idempotency-Key is still running (with `Retry-After`)",
            422: "This Idempotency-Key was used for a different request",
          }),
        },
      },
    },
    async (request, reply) =>
      idempotent(app.store.db, request, reply, 200, async (db) => ({
        data: presentSubscriber(
          await setOnlineStatus(depsOf(app, db), request.tenant, request.params.subscriberId, request.body),
        ),
      })),
  );
};
