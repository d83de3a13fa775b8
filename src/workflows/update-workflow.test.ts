import assert from "node:assert/strict";
import { test } from "node:test";
import { assertErrorBody } from "../../test/error-body.ts";
import { createGroup, createWorkflow, nextMillisecond } from "../../test/factories.ts";
import { forEachBackend } from "../../test/harness.ts";

forEachBackend("PUT /v1/workflows/:workflowId", (ctx) => {
  test("changes only the fields sent; the others keep their values", async () => {
    const { dev } = await ctx.tenant();
    const created = await createWorkflow(ctx, dev.apiKey, dev.generalGroupId, {
      name: "Weekly digest",
      description: "Sent on Mondays",
      tags: ["digest"],
      critical: true,
      preferenceSettings: { sms: false },
      data: { team: "growth" },
    });
    await nextMillisecond();
    const res = await ctx.client(dev.apiKey).put(`/v1/workflows/${created._id}`, {
      description: "  Sent on Tuesdays  ",
      preferenceSettings: { push: false },
    });
    assert.equal(res.statusCode, 200, res.body);
    const updated = res.json().data;
    assert.equal(updated.description, "Sent on Tuesdays");
    assert.deepEqual(updated.preferenceSettings, {
      email: true,
      sms: false,
      in_app: true,
      chat: true,
      push: false,
    });
    assert.notEqual(updated.updatedAt, created.updatedAt);
    const { description: _d, preferenceSettings: _p, updatedAt: _u, ...rest } = updated;
    const { description: _d2, preferenceSettings: _p2, updatedAt: _u2, ...before } = created;
    assert.deepEqual(rest, before);
    // What GET returns is what the PUT answered.
    const read = await ctx.client(dev.apiKey).get(`/v1/workflows/${created._id}`);
    assert.deepEqual(read.json().data, updated);
  });

  test("a rename keeps the trigger identifier; an explicit identifier replaces it", async () => {
    const { dev } = await ctx.tenant();
    const api = ctx.client(dev.apiKey);
    const created = await createWorkflow(ctx, dev.apiKey, dev.generalGroupId, { name: "Order shipped" });
    assert.equal(created.triggers[0].identifier, "order-shipped");

    const renamed = await api.put(`/v1/workflows/${created._id}`, { name: "  Parcel on its way " });
    assert.equal(renamed.statusCode, 200, renamed.body);
    assert.equal(renamed.json().data.name, "Parcel on its way");
    assert.equal(renamed.json().data.triggers[0].identifier, "order-shipped");

    const moved = await api.put(`/v1/workflows/order-shipped`, { identifier: "parcel-sent" });
    assert.equal(moved.statusCode, 200, moved.body);
    assert.equal(moved.json().data.triggers[0].identifier, "parcel-sent");
    assert.equal((await api.get("/v1/workflows/parcel-sent")).json().data._id, created._id);
    assert.equal((await api.get("/v1/workflows/order-shipped")).statusCode, 404);
    // The freed identifier goes to the next workflow with that name.
    const next = await createWorkflow(ctx, dev.apiKey, dev.generalGroupId, { name: "Order shipped" });
    assert.equal(next.triggers[0].identifier, "order-shipped");
  });

  test("an identifier another workflow has, or one that looks like an id, is a 400", async () => {
    const { dev } = await ctx.tenant();
    const api = ctx.client(dev.apiKey);
    const first = await createWorkflow(ctx, dev.apiKey, dev.generalGroupId, { name: "First" });
    const second = await createWorkflow(ctx, dev.apiKey, dev.generalGroupId, { name: "Second" });
    for (const identifier of ["first", "65f1c0ffee0123456789abcd"]) {
      const res = await api.put(`/v1/workflows/${second._id}`, { identifier });
      assert.equal(res.statusCode, 400, res.body);
      assert.deepEqual(
        res.json().errors.map((e: { field: string }) => e.field),
        ["identifier"],
      );
      assert.match(res.json().message, /^identifier /);
    }
    assert.equal((await api.get(`/v1/workflows/${second._id}`)).json().data.triggers[0].identifier, "second");
    // Setting the identifier it already has is no conflict.
    const same = await api.put(`/v1/workflows/${first._id}`, { identifier: "first" });
    assert.equal(same.statusCode, 200, same.body);
  });

  test("new steps rebuild the trigger variables; a step sent with its _id keeps its ids", async () => {
    const { dev } = await ctx.tenant();
    const created = await createWorkflow(ctx, dev.apiKey, dev.generalGroupId, {
      steps: [{ template: { type: "email", subject: "Hi {{firstName}}", content: "Hello" } }],
    });
    assert.deepEqual(created.triggers[0].variables, [{ name: "firstName" }]);
    assert.deepEqual(created.triggers[0].subscriberVariables, [{ name: "email" }]);
    const kept = created.steps[0];
    const res = await ctx.client(dev.apiKey).put(`/v1/workflows/${created._id}`, {
      steps: [
        { _id: kept._id, template: { type: "email", subject: "Hi {{firstName}}", content: "{{orderId}}" } },
        { template: { type: "sms", content: "Code {{payload.code}}" } },
      ],
    });
    assert.equal(res.statusCode, 200, res.body);
    const updated = res.json().data;
    assert.equal(updated.steps.length, 2);
    assert.equal(updated.steps[0]._id, kept._id);
    assert.equal(updated.steps[0]._templateId, kept._templateId);
    assert.equal(updated.steps[0].uuid, kept.uuid);
    assert.notEqual(updated.steps[1]._id, kept._id);
    assert.deepEqual(updated.steps[1].metadata, {
      amount: 0,
      unit: "seconds",
      digestKey: "",
      type: "regular",
      backoff: false,
      backoffAmount: 0,
      backoffUnit: "seconds",
      updateMode: false,
    });
    assert.deepEqual(updated.triggers, [
      {
        type: "event",
        identifier: created.triggers[0].identifier,
        variables: [{ name: "firstName" }, { name: "orderId" }, { name: "code" }],
        subscriberVariables: [{ name: "email" }, { name: "phone" }],
      },
    ]);
  });

  test("moves the workflow to another group of the environment", async () => {
    const { dev } = await ctx.tenant();
    const group = await createGroup(ctx, dev.apiKey);
    const created = await createWorkflow(ctx, dev.apiKey, dev.generalGroupId);
    const res = await ctx
      .client(dev.apiKey)
      .put(`/v1/workflows/${created._id}`, { notificationGroupId: group._id });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().data._notificationGroupId, group._id);
    assert.deepEqual(res.json().data.notificationGroup, group);
  });

  test("a group that does not exist in the environment is a 400 naming notificationGroupId", async () => {
    const { dev, prod } = await ctx.tenant();
    const created = await createWorkflow(ctx, dev.apiKey, dev.generalGroupId);
    for (const groupId of [prod.generalGroupId, "65f1c0ffee0123456789abcd"]) {
      const res = await ctx
        .client(dev.apiKey)
        .put(`/v1/workflows/${created._id}`, { notificationGroupId: groupId });
      assert.equal(res.statusCode, 400, res.body);
      assert.deepEqual(
        res.json().errors.map((e: { field: string }) => e.field),
        ["notificationGroupId"],
      );
    }
  });

  test("active switches draft to its opposite, as the status route does", async () => {
    const { dev } = await ctx.tenant();
    const created = await createWorkflow(ctx, dev.apiKey, dev.generalGroupId);
    const on = await ctx.client(dev.apiKey).put(`/v1/workflows/${created._id}`, { active: true });
    assert.equal(on.json().data.active, true);
    assert.equal(on.json().data.draft, false);
    const draft = await ctx.client(dev.apiKey).put(`/v1/workflows/${created._id}`, { draft: true });
    assert.equal(draft.json().data.active, false);
    assert.equal(draft.json().data.draft, true);
  });

  test("an update that changes nothing succeeds and leaves updatedAt alone", async () => {
    const { dev } = await ctx.tenant();
    const created = await createWorkflow(ctx, dev.apiKey, dev.generalGroupId, { name: "Stable" });
    await nextMillisecond();
    for (const body of [{}, { name: "Stable", critical: false }]) {
      const res = await ctx.client(dev.apiKey).put(`/v1/workflows/${created._id}`, body);
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json().data, created);
    }
  });

  test("is also served by trigger identifier under /v1/notification-templates", async () => {
    const { dev } = await ctx.tenant();
    const created = await createWorkflow(ctx, dev.apiKey, dev.generalGroupId);
    const res = await ctx
      .client(dev.apiKey)
      .put(`/v1/notification-templates/${created.triggers[0].identifier}`, { tags: ["a", "b", "a"] });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json().data.tags, ["a", "b"]);
  });

  // Another environment's workflow: the shared cases of test/auth-and-tenancy.test.ts.
  test("a deleted workflow or none at all is a 404", async () => {
    const { dev } = await ctx.tenant();
    const created = await createWorkflow(ctx, dev.apiKey, dev.generalGroupId);
    await ctx.client(dev.apiKey).delete(`/v1/workflows/${created._id}`);
    for (const id of [created._id, "65f1c0ffee0123456789abcd", "no-such-workflow"]) {
      const res = await ctx.client(dev.apiKey).put(`/v1/workflows/${id}`, { name: "Back" });
      assert.equal(res.statusCode, 404, res.body);
      assert.match(res.json().message, new RegExp(`^Workflow ${id} was not found$`));
    }
  });

  for (const [label, body, field] of [
    ["an empty name", { name: "   " }, "name"],
    ["a name that is not a string", { name: 7 }, "name"],
    ["an unknown field", { colour: "blue" }, "colour"],
    ["an identifier with a space", { identifier: "two words" }, "identifier"],
    [
      "a filter operator outside the enum",
      {
        steps: [
          {
            template: { type: "email" },
            filters: [{ children: [{ field: "x", value: "1", operator: "ROUGHLY", on: "payload" }] }],
          },
        ],
      },
      "steps[0].filters[0].children[0].operator",
    ],
    ["a tag that is empty", { tags: ["ok", " "] }, "tags[1]"],
  ] as const) {
    test(`${label} is a 400 naming ${field}, and changes nothing`, async () => {
      const { dev } = await ctx.tenant();
      const created = await createWorkflow(ctx, dev.apiKey, dev.generalGroupId);
      const res = await ctx.client(dev.apiKey).put(`/v1/workflows/${created._id}`, body);
      assert.equal(res.statusCode, 400, res.body);
      assert.ok(
        res.json().errors.some((e: { field: string }) => e.field === field),
        `errors name ${field}: ${res.body}`,
      );
      assert.deepEqual(
        (await ctx.client(dev.apiKey).get(`/v1/workflows/${created._id}`)).json().data,
        created,
      );
    });
  }

  test("concurrent partial updates of different fields both land", async () => {
    const { dev } = await ctx.tenant();
    const created = await createWorkflow(ctx, dev.apiKey, dev.generalGroupId);
    const api = ctx.client(dev.apiKey);
    const results = await Promise.all([
      api.put(`/v1/workflows/${created._id}`, { description: "from the first" }),
      api.put(`/v1/workflows/${created._id}`, { tags: ["from-the-second"] }),
      api.put(`/v1/workflows/${created._id}`, { critical: true }),
    ]);
    for (const res of results) assert.equal(res.statusCode, 200, res.body);
    const read = (await api.get(`/v1/workflows/${created._id}`)).json().data;
    assert.equal(read.description, "from the first");
    assert.deepEqual(read.tags, ["from-the-second"]);
    assert.equal(read.critical, true);
  });

  test("steps whose template does not compile are a 400 naming the field; the workflow stays as it was", async () => {
    const { dev } = await ctx.tenant();
    const created = await createWorkflow(ctx, dev.apiKey, dev.generalGroupId);
    const api = ctx.client(dev.apiKey);
    const res = await api.put(`/v1/workflows/${created._id}`, {
      steps: [
        {
          _id: created.steps[0]._id,
          template: { type: "email", subject: "Hi {{firstName}}", content: "ok" },
        },
        { template: { type: "sms", content: "Code {{#if code}}{{code}}" } },
      ],
    });
    assertErrorBody(res, 400, {
      path: `/v1/workflows/${created._id}`,
      fields: ["steps[1].template.content"],
      message: /^steps\[1\]\.template\.content does not compile as a Handlebars template: parse error/,
    });
    assert.deepEqual((await api.get(`/v1/workflows/${created._id}`)).json().data, created);
    // An update that leaves the steps alone does not re-check them.
    const renamed = await api.put(`/v1/workflows/${created._id}`, { description: "renamed" });
    assert.equal(renamed.statusCode, 200, renamed.body);
  });
});
