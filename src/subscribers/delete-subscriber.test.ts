import assert from "node:assert/strict";
import { test } from "node:test";
import { assertErrorBody } from "../../test/error-body.ts";
import { createSubscriber, createWorkflow } from "../../test/factories.ts";
import { forEachBackend } from "../../test/harness.ts";

forEachBackend("DELETE /v1/subscribers/:subscriberId", (ctx) => {
  test("deletes the subscriber with its preferences and topic memberships; the id can be used again", async () => {
    const { dev } = await ctx.tenant();
    const api = ctx.client(dev.apiKey);
    const s = await createSubscriber(ctx, dev.apiKey, { subscriberId: "gone" });
    await createSubscriber(ctx, dev.apiKey, { subscriberId: "stays" });
    const workflow = await createWorkflow(ctx, dev.apiKey, dev.generalGroupId, { active: true });
    assert.equal(
      (await api.patch(`/v1/subscribers/gone/preferences/${workflow._id}`, { enabled: false })).statusCode,
      200,
    );
    assert.equal((await api.patch("/v1/subscribers/gone/preferences", { enabled: false })).statusCode, 200);
    assert.equal(
      (await api.post("/v1/topics/news/subscribers", { subscribers: ["gone", "stays"] })).statusCode,
      200,
    );

    const res = await api.delete("/v1/subscribers/gone");
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), { data: { acknowledged: true, status: "deleted" } });

    assertErrorBody(await api.get("/v1/subscribers/gone"), 404, { path: "/v1/subscribers/gone" });
    assert.deepEqual((await api.get("/v1/topics/news")).json().data.subscribers, ["stays"]);
    const preferences = await ctx.store.db
      .selectFrom("subscriber_preferences")
      .select("id")
      .where("subscriber_ref", "=", s._id)
      .execute();
    assert.deepEqual(preferences, []);
    const memberships = await ctx.store.db
      .selectFrom("topic_subscribers")
      .select("topic_id")
      .where("subscriber_ref", "=", s._id)
      .execute();
    assert.deepEqual(memberships, []);
    assertErrorBody(await api.delete("/v1/subscribers/gone"), 404, { path: "/v1/subscribers/gone" });

    const again = await createSubscriber(ctx, dev.apiKey, { subscriberId: "gone" });
    assert.notEqual(again._id, s._id);
    const fresh = (await api.get("/v1/subscribers/gone/preferences/global")).json().data[0];
    assert.equal(fresh.preference.enabled, true, "a new subscriber starts with no preferences");
  });

  test("another environment's subscriber is a 404 and stays", async () => {
    const { dev, prod } = await ctx.tenant();
    await createSubscriber(ctx, prod.apiKey, { subscriberId: "p" });
    assertErrorBody(await ctx.client(dev.apiKey).delete("/v1/subscribers/p"), 404, {
      path: "/v1/subscribers/p",
    });
    assert.equal((await ctx.client(prod.apiKey).get("/v1/subscribers/p")).statusCode, 200);
  });
});
