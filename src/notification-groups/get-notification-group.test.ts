import assert from "node:assert/strict";
import { test } from "node:test";
import { assertErrorBody } from "../../test/error-body.ts";
import { createGroup } from "../../test/factories.ts";
import { forEachBackend } from "../../test/harness.ts";

forEachBackend("GET /v1/notification-groups/:id", (ctx) => {
  test("returns the group with every field, as create returned it", async () => {
    const { dev } = await ctx.tenant();
    const created = await createGroup(ctx, dev.apiKey, "  Billing  ");
    const res = await ctx.client(dev.apiKey).get(`/v1/notification-groups/${created._id}`);
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), { data: created });
    assert.equal(created.name, "Billing");
    assert.equal(created._environmentId, dev.environmentId);
    assert.equal(created._parentId, "");
  });

  test("the environment's General group, whose Production counterpart names it as parent", async () => {
    const { dev, prod } = await ctx.tenant();
    const general = await ctx.client(dev.apiKey).get(`/v1/notification-groups/${dev.generalGroupId}`);
    assert.equal(general.json().data.name, "General");
    const prodGeneral = await ctx.client(prod.apiKey).get(`/v1/notification-groups/${prod.generalGroupId}`);
    assert.equal(prodGeneral.json().data._parentId, dev.generalGroupId);
  });

  // Another environment's group: the shared cases of test/auth-and-tenancy.test.ts.
  test("a group that does not exist is a 404 naming it", async () => {
    const { dev } = await ctx.tenant();
    const path = "/v1/notification-groups/65f1c0ffee0123456789abcd";
    const res = await ctx.client(dev.apiKey).get(path);
    assertErrorBody(res, 404, {
      path,
      message: /^Notification group 65f1c0ffee0123456789abcd was not found$/,
    });
  });

  test("an id that is not 24 lowercase hex characters is a 400", async () => {
    const { dev } = await ctx.tenant();
    const path = "/v1/notification-groups/general";
    const res = await ctx.client(dev.apiKey).get(path);
    assertErrorBody(res, 400, { path, fields: ["id"] });
  });
});
