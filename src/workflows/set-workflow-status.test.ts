import assert from "node:assert/strict";
import { test } from "node:test";
import { forEachBackend } from "../../test/harness.ts";

forEachBackend("PUT /v1/workflows/:workflowId/status", (ctx) => {
  async function workflowIn(apiKey: string, groupId: string, body: Record<string, unknown> = {}) {
    const res = await ctx.client(apiKey).post("/v1/workflows", {
      name: `Welcome ${Math.random().toString(36).slice(2)}`,
      notificationGroupId: groupId,
      steps: [{ template: { type: "email", subject: "Hi {{firstName}}", content: "Hello" } }],
      ...body,
    });
    assert.equal(res.statusCode, 201, res.body);
    return res.json().data;
  }

  test("switches a workflow on and off, with draft its opposite", async () => {
    const { dev } = await ctx.tenant();
    const api = ctx.client(dev.apiKey);
    const created = await workflowIn(dev.apiKey, dev.generalGroupId);
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
    const created = await workflowIn(dev.apiKey, dev.generalGroupId, { active: true });
    const again = await api.put(`/v1/workflows/${created._id}/status`, { active: true });
    assert.equal(again.statusCode, 200);
    assert.equal(again.json().data.updatedAt, created.updatedAt);
    assert.equal(again.json().data.active, true);
  });

  test("is also served by trigger identifier and under /v1/notification-templates", async () => {
    const { dev } = await ctx.tenant();
    const created = await workflowIn(dev.apiKey, dev.generalGroupId);
    const identifier = created.triggers[0].identifier;
    const res = await ctx
      .client(dev.apiKey)
      .put(`/v1/notification-templates/${identifier}/status`, { active: true });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().data._id, created._id);
    assert.equal(res.json().data.active, true);
  });

  test("a workflow of another environment is not found, and stays as it was", async () => {
    const { dev, prod } = await ctx.tenant();
    const created = await workflowIn(dev.apiKey, dev.generalGroupId);
    const res = await ctx.client(prod.apiKey).put(`/v1/workflows/${created._id}/status`, { active: true });
    assert.equal(res.statusCode, 404);
    assert.equal(res.json().statusCode, 404);
    const read = await ctx.client(dev.apiKey).get(`/v1/workflows/${created._id}`);
    assert.equal(read.json().data.active, false);
  });

  for (const [label, body] of [
    ["missing", {}],
    ['"true"', { active: "true" }],
    ["1", { active: 1 }],
    ["null", { active: null }],
  ] as const) {
    test(`active ${label} is a 400 naming the field`, async () => {
      const { dev } = await ctx.tenant();
      const created = await workflowIn(dev.apiKey, dev.generalGroupId);
      const res = await ctx.client(dev.apiKey).put(`/v1/workflows/${created._id}/status`, body);
      assert.equal(res.statusCode, 400, res.body);
      const error = res.json();
      assert.equal(error.error, "Bad Request");
      assert.deepEqual(
        error.errors.map((e: { field: string }) => e.field),
        ["active"],
      );
      assert.match(error.message, /^active /);
    });
  }
});
