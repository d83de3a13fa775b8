import { described, errorResponsesOf, NoContent } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { IdempotencyKeyHeaders, idempotent, replayable } from "../idempotency/idempotency.ts";
import { presentLayout } from "./presenter.ts";
import {
  CreateLayoutBody,
  LayoutEnvelope,
  LayoutPage,
  LayoutParams,
  ListLayoutsQuery,
  UpdateLayoutBody,
} from "./schemas.ts";
import {
  createLayout,
  deleteLayout,
  getLayout,
  listLayouts,
  setDefaultLayout,
  updateLayout,
} from "./service.ts";

const TAGS = ["Layouts"];
const NOT_FOUND = "No layout of this id in the environment";

/** Novu's `/v1/layouts`: an environment's email layouts. */
export const layoutRoutes: RoutePlugin = async (app) => {
  app.post(
    "/layouts",
    {
      schema: {
        operationId: "createLayout",
        tags: TAGS,
        summary: "Create an email layout",
        description:
          "Its content must place the email with `{{{body}}}`; its variables are those the content reads. `isDefault` makes it the layout of email steps that name none.",
        headers: IdempotencyKeyHeaders,
        body: CreateLayoutBody,
        response: {
          201: replayable(described(LayoutEnvelope, "The new layout")),
          ...errorResponsesOf({
            400: "A missing or invalid name, identifier or content (no {{{body}}}, or not a template)",
            409: "The environment has a layout of this identifier, or a request with this Idempotency-Key is still running",
            422: "This Idempotency-Key was used for a different request",
          }),
        },
      },
    },
    async (request, reply) =>
      idempotent(app.store.db, request, reply, 201, async (db) => ({
        data: presentLayout(await createLayout(depsOf(app, db), request.tenant, request.body)),
      })),
  );

  app.get(
    "/layouts",
    {
      schema: {
        operationId: "listLayouts",
        tags: TAGS,
        summary: "List the environment's layouts, by creation",
        querystring: ListLayoutsQuery,
        response: {
          200: described(LayoutPage, "One page of layouts"),
          ...errorResponsesOf({
            400: "page or pageSize out of range (pageSize 1–1000), or an unknown order",
          }),
        },
      },
    },
    async (request) => {
      const page = await listLayouts(depsOf(app), request.tenant, request.query);
      return { ...page, data: page.data.map(presentLayout) };
    },
  );

  app.get(
    "/layouts/:layoutId",
    {
      schema: {
        operationId: "getLayout",
        tags: TAGS,
        summary: "Get a layout",
        params: LayoutParams,
        response: {
          200: described(LayoutEnvelope, "The layout"),
          ...errorResponsesOf({ 400: "Not an id", 404: NOT_FOUND }),
        },
      },
    },
    async (request) => ({
      data: presentLayout(await getLayout(depsOf(app), request.tenant, request.params.layoutId)),
    }),
  );

  app.patch(
    "/layouts/:layoutId",
    {
      schema: {
        operationId: "updateLayout",
        tags: TAGS,
        summary: "Change a layout",
        description:
          "The fields sent change; an empty body is refused. `isDefault: true` makes it the default.",
        headers: IdempotencyKeyHeaders,
        params: LayoutParams,
        body: UpdateLayoutBody,
        response: {
          200: replayable(described(LayoutEnvelope, "The layout after the change")),
          ...errorResponsesOf({
            400: "An empty body, or an invalid field",
            404: NOT_FOUND,
            409: "Another layout has the identifier, `isDefault: false` on the default (one default is required), or a request with this Idempotency-Key is still running",
            422: "This Idempotency-Key was used for a different request",
          }),
        },
      },
    },
    async (request, reply) =>
      idempotent(app.store.db, request, reply, 200, async (db) => ({
        data: presentLayout(
          await updateLayout(depsOf(app, db), request.tenant, request.params.layoutId, request.body ?? {}),
        ),
      })),
  );

  app.delete(
    "/layouts/:layoutId",
    {
      schema: {
        operationId: "deleteLayout",
        tags: TAGS,
        summary: "Delete a layout",
        params: LayoutParams,
        response: {
          204: NoContent("Deleted"),
          ...errorResponsesOf({
            400: "Not an id",
            404: NOT_FOUND,
            409: "A workflow's step uses the layout, or it is the default",
          }),
        },
      },
    },
    async (request, reply) => {
      await deleteLayout(depsOf(app), request.tenant, request.params.layoutId);
      return reply.code(204).send(null);
    },
  );

  app.post(
    "/layouts/:layoutId/default",
    {
      schema: {
        operationId: "setDefaultLayout",
        tags: TAGS,
        summary: "Make a layout the environment's default",
        description: "The previous default is not anymore. Email steps that name no layout are sent in it.",
        params: LayoutParams,
        response: {
          204: NoContent("It is the default"),
          ...errorResponsesOf({ 400: "Not an id", 404: NOT_FOUND }),
        },
      },
    },
    async (request, reply) => {
      await setDefaultLayout(depsOf(app), request.tenant, request.params.layoutId);
      return reply.code(204).send(null);
    },
  );
};
export { layoutV2Routes } from "./v2-routes.ts";
