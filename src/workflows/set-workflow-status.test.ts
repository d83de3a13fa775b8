import assert from "node:assert/strict";
import { test } from "node:test";
import { assertErrorBody } from "../../test/error-body.ts";
import { createWorkflow } from "../../test/factories.ts";
import { forEachBackend } from "../../test/harness.ts";

forEachBackend("PUT /v1/workflows/:workflowId/status", (ctx) => {
  test("switches a workflow on and off, with draft its opposite", async () => {
    const { dev } = await ctx.tenant();
    const api = ctx.client(dev.apiKey);
    const created = await createWorkflow(ctx, dev.apiKey, dev.generalGroupId);
    assert.equal(created.active, false);
    assert.equal(created.draft, true);

    const on = await api.put(`/v1/workflows/${created._id}/status`, { active: true });
    assert.equal(on.statusCode, 200, on.body);
    assert.equal(on.json().data.active, true);
    assert.equal(on.json().data.draft, false);
    assert.equal(on.json().data.notificationGroup._id, dev.generalGroupId);
    assert.equal(on.json().data.notificationGroup.name, "General");

    const off = await api.put(`/v1/workflows/${created._id}/status`, { active: false });
    assert.equal(off.statusCode, 200);
    assert.equal(off.json().data.active, false);
    assert.equal(off.json().data.draft, true);

    const read = await api.get(`/v1/workflows/${created._id}`);
    assert.equal(read.json().data.active, false);
  });

  test("setting the state it already has succeeds and leaves updatedAt alone", async () => {
    const { dev } = await ctx.tenant();
    const api = ctx.client(dev.apiKey);
    const created = await createWorkflow(ctx, dev.apiKey, dev.generalGroupId, { active: true });
    const again = await api.put(`/v1/workflows/${created._id}/status`, { active: true });
    assert.equal(again.statusCode, 200);
    assert.equal(again.json().data.updatedAt, created.updatedAt);
    assert.equal(again.json().data.active, true);
  });

  test("is also served by trigger identifier and under /v1/notification-templates", async () => {
    const { dev } = await ctx.tenant();
    const created = await createWorkflow(ctx, dev.apiKey, dev.generalGroupId);
    const identifier = created.triggers[0].identifier;
    const res = await ctx
      .client(dev.apiKey)
      .put(`/v1/notification-templates/${identifier}/status`, { active: true });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().data._id, created._id);
    assert.equal(res.json().data.active, true);
  });

  for (const [label, body] of [
    ["missing", {}],
    ['"true"', { active: "true" }],
    ["1", { active: 1 }],
    ["null", { active: null }],
  ] as const) {
    test(`active ${label} is a 400 naming the field`, async () => {
      const { dev } = await ctx.tenant();
      const created = await createWorkflow(ctx, dev.apiKey, dev.generalGroupId);
      const path = `/v1/workflows/${created._id}/status`;
      const res = await ctx.client(dev.apiKey).put(path, body);
      assertErrorBody(res, 400, { path, fields: ["active"], message: /^active / });
    });
  }
});
