import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";
import { ManualClock } from "../src/clock.ts";
import { assertErrorBody } from "./error-body.ts";
import { createSubscriber, createWorkflow } from "./factories.ts";
import { forEachBackend } from "./harness.ts";
import { drain } from "./queue-helpers.ts";

// Workflow overrides (Novu's /v1/workflow-overrides): a workflow's settings for one tenant, by id
// or by workflow and tenant, in the key's environment; and what the engine does with them: a
// trigger naming the tenant runs the workflow as overridden (inactive, or with other channel
// defaults), any other trigger as it is.

const hexId = () => randomBytes(12).toString("hex");
const ALL_ON = { email: true, sms: true, in_app: true, chat: true, push: true };

forEachBackend<ManualClock>(
  "workflow overrides",
  (ctx) => {
    async function setup() {
      const { dev, prod } = await ctx.tenant();
      const api = ctx.client(dev.apiKey);
      const tenants = [];
      for (const identifier of ["acme", "globex"]) {
        const res = await api.post("/v1/tenants", { identifier, name: identifier });
        assert.equal(res.statusCode, 201, res.body);
        tenants.push(res.json().data as { _id: string; identifier: string });
      }
      const workflow = await createWorkflow(ctx, dev.apiKey, dev.generalGroupId, {
        active: true,
        steps: [{ template: { type: "in_app", content: "Hello {{tenant.name}}" } }],
      });
      return { dev, prod, api, tenants: tenants as [(typeof tenants)[0], (typeof tenants)[0]], workflow };
    }

    test("create, get by id and by workflow and tenant, change both ways, list in pages, delete; in the key's environment only", async () => {
      const { dev, prod, api, tenants, workflow } = await setup();
      const [acme, globex] = tenants;
      const orgId = (await api.get("/v1/environments/me")).json().data._organizationId;
      const created = await api.post("/v1/workflow-overrides", {
        workflowId: workflow._id,
        tenantId: acme._id,
        active: false,
        preferenceSettings: { email: false },
      });
      assert.equal(created.statusCode, 201, created.body);
      const override = created.json().data;
      assert.deepEqual(
        {
          ...override,
          _id: typeof override._id,
          createdAt: typeof override.createdAt,
          updatedAt: typeof override.updatedAt,
        },
        {
          _id: "string",
          _organizationId: orgId,
          _environmentId: dev.environmentId,
          _workflowId: workflow._id,
          _tenantId: acme._id,
          active: false,
          preferenceSettings: { ...ALL_ON, email: false },
          deleted: false,
          createdAt: "string",
          updatedAt: "string",
        },
      );
      const byId = `/v1/workflow-overrides/${override._id}`;
      const byPair = `/v1/workflow-overrides/workflows/${workflow._id}/tenants/${acme._id}`;
      assert.deepEqual((await api.get(byId)).json().data, override);
      assert.deepEqual((await api.get(byPair)).json().data, override);

      // Refusals: a missing workflowId, a tenant named by identifier, unknown records, a second override.
      const bad = await api.post("/v1/workflow-overrides", { tenantId: acme._id });
      assertErrorBody(bad, 400, { path: "/v1/workflow-overrides", fields: ["workflowId"] });
      assertErrorBody(
        await api.post("/v1/workflow-overrides", { workflowId: workflow._id, tenantId: "acme" }),
        400,
        { path: "/v1/workflow-overrides", fields: ["tenantId"] },
      );
      assertErrorBody(
        await api.post("/v1/workflow-overrides", { workflowId: workflow._id, tenantId: hexId() }),
        404,
        { path: "/v1/workflow-overrides", message: /^Tenant with id [0-9a-f]{24} is not found$/ },
      );
      assertErrorBody(
        await api.post("/v1/workflow-overrides", { workflowId: hexId(), tenantId: acme._id }),
        404,
        { path: "/v1/workflow-overrides" },
      );
      assertErrorBody(
        await api.post("/v1/workflow-overrides", { workflowId: workflow._id, tenantId: acme._id }),
        409,
        { path: "/v1/workflow-overrides" },
      );
      const acmePath = `/v1/workflow-overrides/workflows/${workflow._id}/tenants/acme`;
      assertErrorBody(await api.put(acmePath, { active: true }), 400, {
        path: acmePath,
        fields: ["tenantId"],
      });

      // Changes keep what they do not send.
      ctx.clock.advance(1000);
      const changed = await api.put(byPair, {
        preferenceSettings: { email: true, sms: false },
        active: true,
      });
      assert.equal(changed.statusCode, 200, changed.body);
      assert.deepEqual(changed.json().data.preferenceSettings, { ...ALL_ON, sms: false });
      assert.equal(changed.json().data.active, true);
      const again = await api.put(byId, { preferenceSettings: { push: false } });
      assert.deepEqual(again.json().data.preferenceSettings, { ...ALL_ON, sms: false, push: false });
      assert.equal(again.json().data.active, true);

      // By the trigger identifier too; pages newest first.
      ctx.clock.advance(1000);
      const second = await api.post("/v1/workflow-overrides", {
        workflowId: workflow.triggers[0].identifier,
        tenantId: globex._id,
      });
      assert.equal(second.statusCode, 201, second.body);
      assert.deepEqual(second.json().data.preferenceSettings, ALL_ON);
      assert.equal(second.json().data.active, true);
      const page = (await api.get("/v1/workflow-overrides?limit=1")).json();
      assert.deepEqual(
        [page.page, page.pageSize, page.hasMore, page.data[0]._id],
        [0, 1, true, second.json().data._id],
      );
      const last = (await api.get("/v1/workflow-overrides?page=1&limit=1")).json();
      assert.deepEqual([last.hasMore, last.data[0]._id], [false, override._id]);

      // Another environment sees none of it.
      const other = ctx.client(prod.apiKey);
      assertErrorBody(await other.get(byId), 404, {
        path: byId,
        message: /^Workflow Override with id [0-9a-f]{24} not found$/,
      });
      assert.deepEqual((await other.get("/v1/workflow-overrides")).json().data, []);

      const deleted = await api.delete(byId);
      assert.equal(deleted.statusCode, 200, deleted.body);
      assert.deepEqual(deleted.json(), { data: true });
      assertErrorBody(await api.get(byId), 404, { path: byId });
      assertErrorBody(await api.get(byPair), 404, { path: byPair });
      assertErrorBody(await api.delete(byId), 404, { path: byId });
    });

    test("a trigger for the tenant runs the workflow as overridden: not at all when inactive, with the override's channel defaults; other tenants' and tenantless triggers as it is", async () => {
      const { dev, api, tenants, workflow } = await setup();
      const [acme, globex] = tenants;
      const name = workflow.triggers[0].identifier;
      const to = (await createSubscriber(ctx, dev.apiKey)).subscriberId;
      const trigger = async (tenant?: unknown) => {
        ctx.clock.advance(1000);
        const res = await api.post("/v1/events/trigger", { name, to, ...(tenant ? { tenant } : {}) });
        assert.equal(res.statusCode, 201, res.body);
        await drain(ctx);
        return res.json().data.status as string;
      };
      const feed = async () =>
        (await api.get(`/v1/subscribers/${to}/notifications/feed`))
          .json()
          .data.map((m: { content: string }) => m.content);

      const off = await api.post("/v1/workflow-overrides", {
        workflowId: workflow._id,
        tenantId: acme._id,
        active: false,
      });
      assert.equal(off.statusCode, 201, off.body);
      assert.equal(await trigger("acme"), "trigger_not_active");
      assert.equal(await trigger({ identifier: "acme", name: "acme" }), "trigger_not_active");
      assert.equal(await trigger("globex"), "processed");
      assert.equal(await trigger(), "processed");
      assert.deepEqual(await feed(), ["Hello ", "Hello globex"]);

      // In-app off by default for globex: its triggers skip the step; acme back on runs it.
      const quiet = await api.post("/v1/workflow-overrides", {
        workflowId: workflow._id,
        tenantId: globex._id,
        preferenceSettings: { in_app: false },
      });
      assert.equal(quiet.statusCode, 201, quiet.body);
      assert.equal(await trigger("globex"), "processed");
      assert.equal((await feed()).length, 2);
      assert.equal(
        (await api.put(`/v1/workflow-overrides/${off.json().data._id}`, { active: true })).statusCode,
        200,
      );
      assert.equal(await trigger("acme"), "processed");
      assert.deepEqual(await feed(), ["Hello acme", "Hello ", "Hello globex"]);
    });
  },
  { clock: () => new ManualClock() },
);
