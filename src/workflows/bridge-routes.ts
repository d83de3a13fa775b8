import { Type } from "typebox";
import { described, Envelope, errorResponsesOf, FreeObject } from "../http/schema-helpers.ts";
import { depsOf, type RoutePluginWith } from "../http/types.ts";
import {
  type BridgeTools,
  diffBridge,
  previewCodeStep,
  setStepControls,
  syncBridge,
} from "./code-workflows.ts";
import { presentWorkflow } from "./presenter.ts";
import { Workflow } from "./schemas.ts";

// Novu's bridge routes (what `npx novu sync` and the dashboard call for workflows defined in code):
// register an app's bridge and store its workflows, see what a sync would change, keep a code
// step's control values, and render a code step through the bridge.

const TAGS = ["Workflows in code"];

const BridgeBody = Type.Object(
  {
    bridgeUrl: Type.String({
      minLength: 1,
      maxLength: 2048,
      description: "The URL the app serves its workflows at (@novu/framework's `serve`)",
    }),
  },
  { additionalProperties: true },
);

const SyncQuery = Type.Object(
  { source: Type.Optional(Type.String({ maxLength: 100, description: "Who asks (cli, dashboard, …)" })) },
  { additionalProperties: true },
);

const BridgeDiff = Type.Object(
  {
    added: Type.Array(Type.String(), {
      description: "Workflow ids the bridge lists and this environment lacks",
    }),
    updated: Type.Array(Type.String(), { description: "Workflow ids whose definition changed" }),
    removed: Type.Array(Type.String(), {
      description: "Code workflows the bridge no longer lists: a sync deletes them",
    }),
    unchanged: Type.Array(Type.String()),
  },
  { title: "BridgeDiff", additionalProperties: false },
);

const StepParams = Type.Object({
  workflowId: Type.String({ minLength: 1, maxLength: 200 }),
  stepId: Type.String({ minLength: 1, maxLength: 200 }),
});

const ControlsBody = Type.Object(
  { controls: FreeObject("The step's control values, as its control schema in the app describes them") },
  { additionalProperties: false },
);

const PreviewBody = Type.Object(
  {
    payload: Type.Optional(
      FreeObject("The payload to render with; the framework mocks what its schema needs and this lacks"),
    ),
    controls: Type.Optional(FreeObject("Control values to render with instead of the stored ones")),
    subscriber: Type.Optional(FreeObject()),
    state: Type.Optional(
      Type.Array(FreeObject(), { description: "Earlier steps' results; mocked when absent" }),
    ),
  },
  { additionalProperties: false },
);

const BridgePreview = Type.Object(
  {
    outputs: Type.Optional(
      FreeObject("What the step renders: in-app `{subject, body, …}`, email `{subject, body}`, …"),
    ),
    providers: Type.Optional(FreeObject()),
    options: Type.Optional(FreeObject()),
    metadata: Type.Optional(FreeObject()),
  },
  { title: "BridgePreview", additionalProperties: true },
);

export const bridgeRoutes: RoutePluginWith<{ tools: BridgeTools }> = async (app, { tools }) => {
  app.post(
    "/bridge/sync",
    {
      schema: {
        operationId: "syncBridge",
        tags: TAGS,
        summary: "Register the environment's bridge and store the workflows it defines in code",
        description:
          "Asks the bridge for its workflows (a GET with `action=discover`, signed with the environment's " +
          "secret key) and stores each as a workflow of origin `external`; a code workflow the bridge no " +
          "longer lists is deleted. Answers the environment's code workflows.",
        querystring: SyncQuery,
        body: BridgeBody,
        response: {
          201: described(
            Envelope(Type.Array(Workflow)),
            "The environment's workflows defined in code, as stored",
          ),
          ...errorResponsesOf({
            400: "Invalid bridgeUrl, or the bridge's discover failed (the message says why)",
          }),
        },
      },
    },
    async (request, reply) => {
      const stored = await syncBridge(depsOf(app), request.tenant, tools, request.body.bridgeUrl);
      return reply.code(201).send({ data: stored.map(presentWorkflow) });
    },
  );

  app.post(
    "/bridge/diff",
    {
      schema: {
        operationId: "diffBridge",
        tags: TAGS,
        summary: "What a sync of this bridge would change",
        body: BridgeBody,
        response: {
          201: described(Envelope(BridgeDiff), "Workflow ids by what a sync would do to them"),
          ...errorResponsesOf({
            400: "Invalid bridgeUrl, or the bridge's discover failed (the message says why)",
          }),
        },
      },
    },
    async (request, reply) =>
      reply
        .code(201)
        .send({ data: await diffBridge(depsOf(app), request.tenant, tools, request.body.bridgeUrl) }),
  );

  app.put(
    "/bridge/controls/:workflowId/:stepId",
    {
      schema: {
        operationId: "setBridgeStepControls",
        tags: TAGS,
        summary: "Keep the control values of a step defined in code",
        description:
          "Sent with every execution of the step from then on; the app checks them against its schema.",
        params: StepParams,
        body: ControlsBody,
        response: {
          200: described(Envelope(Workflow), "The workflow as stored"),
          ...errorResponsesOf({ 400: "Invalid body", 404: "No such code workflow or step" }),
        },
      },
    },
    async (request) => {
      const { workflowId, stepId } = request.params;
      const updated = await setStepControls(
        depsOf(app),
        request.tenant,
        workflowId,
        stepId,
        request.body.controls,
      );
      return { data: presentWorkflow(updated) };
    },
  );

  app.post(
    "/bridge/preview/:workflowId/:stepId",
    {
      schema: {
        operationId: "previewBridgeStep",
        tags: TAGS,
        summary: "Render a step defined in code through the bridge, with a payload",
        params: StepParams,
        body: PreviewBody,
        response: {
          201: described(Envelope(BridgePreview), "The bridge's rendering of the step"),
          ...errorResponsesOf({
            400: "Invalid body, no bridge, or the bridge could not render (the message says why)",
            404: "No such code workflow or step",
          }),
        },
      },
    },
    async (request, reply) => {
      const { workflowId, stepId } = request.params;
      const data = await previewCodeStep(
        depsOf(app),
        request.tenant,
        tools,
        workflowId,
        stepId,
        request.body,
      );
      return reply.code(201).send({ data });
    },
  );
};
