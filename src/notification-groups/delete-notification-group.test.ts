import assert from "node:assert/strict";
import { test } from "node:test";
import { createGroup, createWorkflow } from "../../test/factories.ts";
import { forEachBackend } from "../../test/harness.ts";

forEachBackend("DELETE /v1/notification-groups/:id", (ctx) => {
  test("deletes an unused group: acknowledged, then gone from every read", async () => {
    const { dev } = await ctx.tenant();
    const group = await createGroup(ctx, dev.apiKey, "Short-lived");
    const api = ctx.client(dev.apiKey);
    const res = await api.delete(`/v1/notification-groups/${group._id}`);
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), { data: { acknowledged: true, status: "deleted" } });
    assert.equal((await api.get(`/v1/notification-groups/${group._id}`)).statusCode, 404);
    const names = (await api.get("/v1/notification-groups")).json().data.map((g: { name: string }) => g.name);
    assert.deepEqual(names, ["General"]);
    assert.equal((await api.delete(`/v1/notification-groups/${group._id}`)).statusCode, 404);
    // Its name is free again.
    await createGroup(ctx, dev.apiKey, "Short-lived");
  });

  test("a group that workflows use is a 409 that says how many, and stays", async () => {
    const { dev } = await ctx.tenant();
    const group = await createGroup(ctx, dev.apiKey);
    const api = ctx.client(dev.apiKey);
    const first = await createWorkflow(ctx, dev.apiKey, group._id);
    await createWorkflow(ctx, dev.apiKey, group._id);
    const two = await api.delete(`/v1/notification-groups/${group._id}`);
    assert.equal(two.statusCode, 409, two.body);
    assert.match(two.json().message, /while 2 workflows use it/);
    await api.delete(`/v1/workflows/${first._id}`);
    const one = await api.delete(`/v1/notification-groups/${group._id}`);
    assert.equal(one.statusCode, 409, one.body);
    assert.match(one.json().message, /while 1 workflow uses it/);
    assert.equal((await api.get(`/v1/notification-groups/${group._id}`)).statusCode, 200);
  });

  test("once its workflows are deleted or moved, the group can go (deleted workflows go with it)", async () => {
    const { dev } = await ctx.tenant();
    const group = await createGroup(ctx, dev.apiKey);
    const api = ctx.client(dev.apiKey);
    const deleted = await createWorkflow(ctx, dev.apiKey, group._id);
    const moved = await createWorkflow(ctx, dev.apiKey, group._id);
    await api.delete(`/v1/workflows/${deleted._id}`);
    await api.put(`/v1/workflows/${moved._id}`, { notificationGroupId: dev.generalGroupId });
    const res = await api.delete(`/v1/notification-groups/${group._id}`);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal((await api.get(`/v1/workflows/${moved._id}`)).json().data.notificationGroup.name, "General");
    const rows = await ctx.store.db
      .selectFrom("workflows")
      .select("id")
      .where("id", "=", deleted._id)
      .execute();
    assert.deepEqual(rows, []);
  });

  // Another environment's group: the shared cases of test/auth-and-tenancy.test.ts.
  test("a group that does not exist is a 404", async () => {
    const { dev } = await ctx.tenant();
    const none = await ctx.client(dev.apiKey).delete("/v1/notification-groups/65f1c0ffee0123456789abcd");
    assert.equal(none.statusCode, 404, none.body);
  });
});
