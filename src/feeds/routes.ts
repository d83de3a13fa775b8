import { Type } from "typebox";
import { described, Envelope, errorResponsesOf, ObjectIdString } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { IdempotencyKeyHeaders, idempotent, replayable } from "../idempotency/idempotency.ts";
import type { Feed } from "./domain.ts";
import { createFeed, deleteFeed, listFeeds } from "./service.ts";

const TAGS = ["Feeds"];

const FeedResource = Type.Object(
  {
    _id: ObjectIdString("The feed's id"),
    name: Type.String(),
    identifier: Type.String({ description: "The name" }),
    _environmentId: ObjectIdString("The environment"),
    _organizationId: ObjectIdString("The organization"),
    deleted: Type.Boolean({ description: "Always false: a deleted feed is gone" }),
    createdAt: Type.String({ format: "date-time" }),
    updatedAt: Type.String({ format: "date-time" }),
  },
  { title: "Feed", additionalProperties: false },
);

const present = (feed: Feed) => ({
  _id: feed.id,
  name: feed.name,
  identifier: feed.identifier,
  _environmentId: feed.environmentId,
  _organizationId: feed.organizationId,
  deleted: false,
  createdAt: feed.createdAt,
  updatedAt: feed.updatedAt,
});

/** Novu's `/v1/feeds`: the named tabs of the in-app feed that in-app steps name. */
export const feedRoutes: RoutePlugin = async (app) => {
  app.post(
    "/feeds",
    {
      schema: {
        operationId: "createFeed",
        tags: TAGS,
        summary: "Create a feed",
        description: "Its identifier is its name. In-app steps name it by its `_id` (`template._feedId`).",
        headers: IdempotencyKeyHeaders,
        body: Type.Object(
          { name: Type.String({ minLength: 1, maxLength: 100, description: "The feed's name" }) },
          { additionalProperties: false },
        ),
        response: {
          201: replayable(described(Envelope(FeedResource), "The new feed")),
          ...errorResponsesOf({
            400: "A missing or empty name",
            409: "The environment has a feed of this name, or a request with this Idempotency-Key is still running",
            422: "This Idempotency-Key was used for a different request",
          }),
        },
      },
    },
    async (request, reply) =>
      idempotent(app.store.db, request, reply, 201, async (db) => ({
        data: present(await createFeed(depsOf(app, db), request.tenant, request.body.name)),
      })),
  );

  app.get(
    "/feeds",
    {
      schema: {
        operationId: "listFeeds",
        tags: TAGS,
        summary: "The environment's feeds, oldest first",
        response: {
          200: described(Envelope(Type.Array(FeedResource)), "The feeds"),
          ...errorResponsesOf({}),
        },
      },
    },
    async (request) => ({ data: (await listFeeds(depsOf(app), request.tenant)).map(present) }),
  );

  app.delete(
    "/feeds/:feedId",
    {
      schema: {
        operationId: "deleteFeed",
        tags: TAGS,
        summary: "Delete a feed",
        params: Type.Object({ feedId: ObjectIdString("The feed's id") }),
        response: {
          200: described(Envelope(Type.Array(FeedResource)), "The feeds left"),
          ...errorResponsesOf({
            400: "Not an id",
            404: "No feed of this id in the environment",
            409: "A live workflow's step names the feed",
          }),
        },
      },
    },
    async (request) => ({
      data: (await deleteFeed(depsOf(app), request.tenant, request.params.feedId)).map(present),
    }),
  );
};
