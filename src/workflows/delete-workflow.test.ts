import assert from "node:assert/strict";
import { test } from "node:test";
import { createWorkflow } from "../../test/factories.ts";
import { forEachBackend } from "../../test/harness.ts";

forEachBackend("DELETE /v1/workflows/:workflowId", (ctx) => {
  async function keyIdOf(environmentId: string) {
    const key = await ctx.store.db
      .selectFrom("api_keys")
      .select("id")
      .where("environment_id", "=", environmentId)
      .executeTakeFirstOrThrow();
    return key.id;
  }

  test("a client that sends Content-Type: application/json with no body (as curl scripts do) is served", async () => {
    const { dev } = await ctx.tenant();
    const created = await createWorkflow(ctx, dev.apiKey, dev.generalGroupId, { name: "Header happy" });
    const headers = { authorization: `ApiKey ${dev.apiKey}`, "content-type": "application/json" };
    const read = await ctx.app.inject({ method: "GET", url: `/v1/workflows/${created._id}`, headers });
    assert.equal(read.statusCode, 200, read.body);
    const res = await ctx.app.inject({ method: "DELETE", url: `/v1/workflows/${created._id}`, headers });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), { data: true });
    // Where a body is expected, an empty one is still a 400.
    const status = await ctx.app.inject({
      method: "PUT",
      url: `/v1/workflows/${created._id}/status`,
      headers,
      payload: "",
    });
    assert.equal(status.statusCode, 400, status.body);
  });

  test("answers { data: true } and the workflow leaves every read", async () => {
    const { dev } = await ctx.tenant();
    const api = ctx.client(dev.apiKey);
    const created = await createWorkflow(ctx, dev.apiKey, dev.generalGroupId, { name: "Going away" });
    const res = await api.delete(`/v1/workflows/${created._id}`);
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), { data: true });

    for (const url of [
      `/v1/workflows/${created._id}`,
      "/v1/workflows/going-away",
      `/v1/notification-templates/${created._id}`,
    ]) {
      assert.equal((await api.get(url)).statusCode, 404, url);
    }
    assert.equal((await api.get("/v1/workflows")).json().totalCount, 0);
    assert.equal((await api.get("/v1/workflows?query=going")).json().totalCount, 0);
    const status = await api.put(`/v1/workflows/${created._id}/status`, { active: true });
    assert.equal(status.statusCode, 404, status.body);
    const update = await api.put(`/v1/workflows/${created._id}`, { name: "Back" });
    assert.equal(update.statusCode, 404, update.body);
    const again = await api.delete(`/v1/workflows/${created._id}`);
    assert.equal(again.statusCode, 404, again.body);
  });

  test("is a soft delete: the row stays, with deleted, deletedAt and deletedBy (the key) set", async () => {
    const { dev } = await ctx.tenant();
    const created = await createWorkflow(ctx, dev.apiKey, dev.generalGroupId);
    const before = Date.now();
    await ctx.client(dev.apiKey).delete(`/v1/workflows/${created._id}`);
    const row = await ctx.store.db
      .selectFrom("workflows")
      .select(["deleted", "deleted_at", "deleted_by", "name"])
      .where("id", "=", created._id)
      .executeTakeFirstOrThrow();
    assert.equal(row.deleted === true || row.deleted === 1, true);
    assert.equal(row.name, created.name);
    assert.equal(row.deleted_by, await keyIdOf(dev.environmentId));
    const deletedAt = new Date(row.deleted_at as string | Date).getTime();
    assert.ok(
      deletedAt >= before - 1000 && deletedAt <= Date.now() + 1000,
      `deletedAt ${String(row.deleted_at)}`,
    );
  });

  test("by trigger identifier, under /v1/notification-templates; the identifier is free again", async () => {
    const { dev } = await ctx.tenant();
    const created = await createWorkflow(ctx, dev.apiKey, dev.generalGroupId, { name: "Password reset" });
    const res = await ctx.client(dev.apiKey).delete("/v1/notification-templates/password-reset");
    assert.equal(res.statusCode, 200, res.body);
    const next = await createWorkflow(ctx, dev.apiKey, dev.generalGroupId, { name: "Password reset" });
    assert.notEqual(next._id, created._id);
    assert.equal(next.triggers[0].identifier, "password-reset");
  });

  test("a path that is neither an id nor an identifier is a 400", async () => {
    const { dev } = await ctx.tenant();
    const res = await ctx.client(dev.apiKey).delete("/v1/workflows/not%20an%20id");
    assert.equal(res.statusCode, 400, res.body);
  });
});
