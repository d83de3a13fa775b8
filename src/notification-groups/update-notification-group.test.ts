import assert from "node:assert/strict";
import { test } from "node:test";
import { createGroup, createWorkflow, nextMillisecond } from "../../test/factories.ts";
import { forEachBackend } from "../../test/harness.ts";

forEachBackend("PATCH /v1/notification-groups/:id", (ctx) => {
  test("renames the group (trimmed); workflows in it show the new name", async () => {
    const { dev } = await ctx.tenant();
    const group = await createGroup(ctx, dev.apiKey, "Marketing");
    const workflow = await createWorkflow(ctx, dev.apiKey, group._id);
    await nextMillisecond();
    const res = await ctx
      .client(dev.apiKey)
      .patch(`/v1/notification-groups/${group._id}`, { name: "  Growth " });
    assert.equal(res.statusCode, 200, res.body);
    const renamed = res.json().data;
    assert.equal(renamed.name, "Growth");
    assert.equal(renamed._id, group._id);
    assert.equal(renamed.createdAt, group.createdAt);
    assert.notEqual(renamed.updatedAt, group.updatedAt);
    const read = await ctx.client(dev.apiKey).get(`/v1/workflows/${workflow._id}`);
    assert.equal(read.json().data.notificationGroup.name, "Growth");
  });

  test("a change of case only is allowed (the group keeps its own name)", async () => {
    const { dev } = await ctx.tenant();
    const group = await createGroup(ctx, dev.apiKey, "billing");
    const res = await ctx
      .client(dev.apiKey)
      .patch(`/v1/notification-groups/${group._id}`, { name: "Billing" });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().data.name, "Billing");
  });

  test("another group's name, in any case, is a 409 naming that group's id", async () => {
    const { dev } = await ctx.tenant();
    const group = await createGroup(ctx, dev.apiKey, "Alerts");
    const res = await ctx
      .client(dev.apiKey)
      .patch(`/v1/notification-groups/${group._id}`, { name: " GENERAL " });
    assert.equal(res.statusCode, 409, res.body);
    assert.equal(
      res.json().message,
      `A notification group named "General" already exists (${dev.generalGroupId})`,
    );
    const read = await ctx.client(dev.apiKey).get(`/v1/notification-groups/${group._id}`);
    assert.equal(read.json().data.name, "Alerts");
  });

  test("the same name in another environment is no conflict", async () => {
    const { dev, prod } = await ctx.tenant();
    await createGroup(ctx, prod.apiKey, "Security");
    const group = await createGroup(ctx, dev.apiKey, "Sec");
    const res = await ctx
      .client(dev.apiKey)
      .patch(`/v1/notification-groups/${group._id}`, { name: "Security" });
    assert.equal(res.statusCode, 200, res.body);
  });

  for (const [label, body, field] of [
    ["an empty name", { name: "  " }, "name"],
    ["a name over 100 characters", { name: "x".repeat(101) }, "name"],
    ["a name with a control character", { name: "Line\nbreak" }, "name"],
    ["a name that is not a string", { name: 5 }, "name"],
    ["no name", {}, "name"],
    ["an unknown field", { name: "Ok", colour: "red" }, "colour"],
  ] as const) {
    test(`${label} is a 400 naming ${field}`, async () => {
      const { dev } = await ctx.tenant();
      const group = await createGroup(ctx, dev.apiKey);
      const res = await ctx.client(dev.apiKey).patch(`/v1/notification-groups/${group._id}`, body);
      assert.equal(res.statusCode, 400, res.body);
      assert.ok(
        res.json().errors.some((e: { field: string }) => e.field === field),
        res.body,
      );
    });
  }

  test("another environment's group is a 404 even with a name taken in the key's environment", async () => {
    const { dev, prod } = await ctx.tenant();
    const foreign = await createGroup(ctx, prod.apiKey, "Elsewhere");
    for (const name of ["General", "Fresh name"]) {
      const res = await ctx.client(dev.apiKey).patch(`/v1/notification-groups/${foreign._id}`, { name });
      assert.equal(res.statusCode, 404, res.body);
    }
    const none = await ctx
      .client(dev.apiKey)
      .patch("/v1/notification-groups/65f1c0ffee0123456789abcd", { name: "General" });
    assert.equal(none.statusCode, 404, none.body);
  });
});
