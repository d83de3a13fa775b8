import { described, Envelope, errorResponsesOf, NoContent } from "../http/schema-helpers.ts";
import { depsOf, type RoutePlugin } from "../http/types.ts";
import { IdempotencyKeyHeaders, idempotent, replayable } from "../idempotency/idempotency.ts";
import { presentLayoutV2 } from "./presenter.ts";
import {
  CreateLayoutV2Body,
  DuplicateLayoutBody,
  LayoutUsage,
  LayoutV2,
  LayoutV2List,
  LayoutV2Params,
  ListLayoutsV2Query,
  UpdateLayoutV2Body,
} from "./schemas.ts";
import {
  createLayoutV2,
  deleteLayoutV2,
  duplicateLayout,
  getLayoutByRef,
  layoutUsage,
  searchLayouts,
  updateLayoutV2,
} from "./service.ts";

const TAGS = ["Layouts"];
const NOT_FOUND = "No layout of this layoutId (or id) in the environment";

/** Novu's `/v2/layouts` (@novu/api's `layouts.*`): the same layouts as /v1, named by their identifier. */
export const layoutV2Routes: RoutePlugin = async (app) => {
  app.post(
    "/layouts",
    {
      schema: {
        operationId: "createLayoutV2",
        tags: TAGS,
        summary: "Create a layout",
        description:
          "Its HTML starts as the email in a plain document; `PUT` sets it (`controlValues.email.body`).",
        headers: IdempotencyKeyHeaders,
        body: CreateLayoutV2Body,
        response: {
          201: replayable(described(Envelope(LayoutV2), "The new layout")),
          ...errorResponsesOf({
            400: "A missing or invalid layoutId or name",
            409: "The environment has a layout of this layoutId, or a request with this Idempotency-Key is still running",
            422: "This Idempotency-Key was used for a different request",
          }),
        },
      },
    },
    async (request, reply) =>
      idempotent(app.store.db, request, reply, 201, async (db) => ({
        data: presentLayoutV2(await createLayoutV2(depsOf(app, db), request.tenant, request.body)),
      })),
  );

  app.get(
    "/layouts",
    {
      schema: {
        operationId: "listLayoutsV2",
        tags: TAGS,
        summary: "Search layouts",
        description: "`query` matches the name or layoutId (any case); newest first unless told otherwise.",
        querystring: ListLayoutsV2Query,
        response: {
          200: described(Envelope(LayoutV2List), "One window of layouts and how many match"),
          ...errorResponsesOf({ 400: "A parameter out of range" }),
        },
      },
    },
    async (request) => {
      const found = await searchLayouts(depsOf(app), request.tenant, request.query);
      return { data: { layouts: found.layouts.map(presentLayoutV2), totalCount: found.totalCount } };
    },
  );

  app.get(
    "/layouts/:layoutId",
    {
      schema: {
        operationId: "getLayoutV2",
        tags: TAGS,
        summary: "Get a layout",
        params: LayoutV2Params,
        response: {
          200: described(Envelope(LayoutV2), "The layout"),
          ...errorResponsesOf({ 400: "Not a layoutId", 404: NOT_FOUND }),
        },
      },
    },
    async (request) => ({
      data: presentLayoutV2(await getLayoutByRef(depsOf(app), request.tenant, request.params.layoutId)),
    }),
  );

  app.put(
    "/layouts/:layoutId",
    {
      schema: {
        operationId: "updateLayoutV2",
        tags: TAGS,
        summary: "Change a layout's name and HTML",
        params: LayoutV2Params,
        body: UpdateLayoutV2Body,
        response: {
          200: described(Envelope(LayoutV2), "The layout after the change"),
          ...errorResponsesOf({
            400: "A missing name, or HTML without {{{body}}} or that is not a template",
            404: NOT_FOUND,
          }),
        },
      },
    },
    async (request) => {
      const { name, controlValues } = request.body;
      const content = controlValues === null ? null : controlValues?.email?.body;
      return {
        data: presentLayoutV2(
          await updateLayoutV2(depsOf(app), request.tenant, request.params.layoutId, { name, content }),
        ),
      };
    },
  );

  app.delete(
    "/layouts/:layoutId",
    {
      schema: {
        operationId: "deleteLayoutV2",
        tags: TAGS,
        summary: "Delete a layout",
        params: LayoutV2Params,
        response: {
          204: NoContent("Deleted"),
          ...errorResponsesOf({
            400: "Not a layoutId",
            404: NOT_FOUND,
            409: "A workflow's step uses the layout, or it is the default",
          }),
        },
      },
    },
    async (request, reply) => {
      await deleteLayoutV2(depsOf(app), request.tenant, request.params.layoutId);
      return reply.code(204).send(null);
    },
  );

  app.post(
    "/layouts/:layoutId/duplicate",
    {
      schema: {
        operationId: "duplicateLayoutV2",
        tags: TAGS,
        summary: "Copy a layout under a new name",
        headers: IdempotencyKeyHeaders,
        params: LayoutV2Params,
        body: DuplicateLayoutBody,
        response: {
          201: replayable(described(Envelope(LayoutV2), "The copy (never the default)")),
          ...errorResponsesOf({
            400: "A missing name",
            404: NOT_FOUND,
            409: "The layoutId asked for is taken, or a request with this Idempotency-Key is still running",
            422: "This Idempotency-Key was used for a different request",
          }),
        },
      },
    },
    async (request, reply) =>
      idempotent(app.store.db, request, reply, 201, async (db) => ({
        data: presentLayoutV2(
          await duplicateLayout(depsOf(app, db), request.tenant, request.params.layoutId, request.body),
        ),
      })),
  );

  app.get(
    "/layouts/:layoutId/usage",
    {
      schema: {
        operationId: "getLayoutUsageV2",
        tags: TAGS,
        summary: "The workflows whose steps use a layout",
        params: LayoutV2Params,
        response: {
          200: described(Envelope(LayoutUsage), "The workflows (their names and workflowIds)"),
          ...errorResponsesOf({ 400: "Not a layoutId", 404: NOT_FOUND }),
        },
      },
    },
    async (request) => {
      const used = await layoutUsage(depsOf(app), request.tenant, request.params.layoutId);
      return { data: { workflows: used.map((w) => ({ name: w.name, workflowId: w.identifier })) } };
    },
  );
};
