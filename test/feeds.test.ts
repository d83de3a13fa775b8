import assert from "node:assert/strict";
import { test } from "node:test";
import { assertErrorBody } from "./error-body.ts";
import { createWorkflow } from "./factories.ts";
import { forEachBackend } from "./harness.ts";

// Feeds (Novu's /v1/feeds): named by their name, in the key's environment; a feed an in-app step
// names cannot be deleted until the step no longer names it.

forEachBackend("feeds", (ctx) => {
  test("create (the identifier is the name), list, delete answering the rest; a named feed stays while a step names it", async () => {
    const { dev, prod } = await ctx.tenant();
    const api = ctx.client(dev.apiKey);
    const created = await api.post("/v1/feeds", { name: "Test name" });
    assert.equal(created.statusCode, 201, created.body);
    const feed = created.json().data;
    assert.deepEqual(
      [feed.name, feed.identifier, feed._environmentId, feed.deleted],
      ["Test name", "Test name", dev.environmentId, false],
    );
    assertErrorBody(await api.post("/v1/feeds", { name: "Test name" }), 409, {
      path: "/v1/feeds",
      message:
        /^Feed with identifier: given already exists$|^Feed with identifier: Test name already exists$/,
    });
    for (const body of [{}, { name: "" }, { name: "  " }]) {
      assertErrorBody(await api.post("/v1/feeds", body), 400, { path: "/v1/feeds", fields: ["name"] });
    }
    const second = (await api.post("/v1/feeds", { name: "Feed 2" })).json().data;
    assert.deepEqual(
      (await api.get("/v1/feeds")).json().data.map((f: { name: string }) => f.name),
      ["Test name", "Feed 2"],
    );
    assert.deepEqual((await ctx.client(prod.apiKey).get("/v1/feeds")).json().data, []);

    const workflow = await createWorkflow(ctx, dev.apiKey, dev.generalGroupId, {
      steps: [{ template: { type: "in_app", content: "Hi", _feedId: second._id } }],
    });
    assertErrorBody(await api.delete(`/v1/feeds/${second._id}`), 409, {
      path: `/v1/feeds/${second._id}`,
      message: /^Can not delete feed that has existing/,
    });
    assert.equal((await api.delete(`/v1/workflows/${workflow._id}`)).statusCode, 200);
    const deleted = await api.delete(`/v1/feeds/${second._id}`);
    assert.equal(deleted.statusCode, 200, deleted.body);
    assert.deepEqual(
      deleted.json().data.map((f: { _id: string }) => f._id),
      [feed._id],
    );
    assertErrorBody(await api.delete(`/v1/feeds/${second._id}`), 404, { path: `/v1/feeds/${second._id}` });
    assertErrorBody(await ctx.client(prod.apiKey).delete(`/v1/feeds/${feed._id}`), 404, {
      path: `/v1/feeds/${feed._id}`,
    });
  });
});
