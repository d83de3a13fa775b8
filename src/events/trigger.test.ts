import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";
import { assertErrorBody } from "../../test/error-body.ts";
import { createWorkflow, uniqueName } from "../../test/factories.ts";
import { forEachBackend, type TestContext } from "../../test/harness.ts";
import { poll } from "../../test/poll.ts";
import { drain } from "../../test/queue-helpers.ts";

const hexId = () => randomBytes(12).toString("hex");

interface FeedMessage {
  _id: string;
  transactionId: string;
  content: string;
  cta: { data: { url?: string } };
}

/** The subscriber's feed as it is now (the worker runs in-process). */
async function feedOf(ctx: TestContext, apiKey: string, subscriberId: string): Promise<FeedMessage[]> {
  const res = await ctx.client(apiKey).get(`/v1/subscribers/${subscriberId}/notifications/feed`);
  assert.equal(res.statusCode, 200, res.body);
  return res.json().data;
}

/** The subscriber's feed once it holds `count` messages. */
const feedWith = (ctx: TestContext, apiKey: string, subscriberId: string, count: number) =>
  poll(
    () => feedOf(ctx, apiKey, subscriberId),
    (feed) => feed.length >= count,
    { what: `${count} messages in the feed of ${subscriberId}` },
  );

forEachBackend("POST /v1/events/trigger", (ctx) => {
  async function setup(steps?: unknown[], active = true) {
    const tenant = await ctx.tenant();
    const api = ctx.client(tenant.dev.apiKey);
    const workflow = await createWorkflow(ctx, tenant.dev.apiKey, tenant.dev.generalGroupId, {
      name: uniqueName("Trigger workflow"),
      active,
      steps: steps ?? [
        {
          template: {
            type: "in_app",
            content: "Hi {{subscriber.firstName}}, {{note}}",
            cta: { type: "redirect", data: { url: "/orders/{{orderId}}" } },
          },
        },
      ],
    });
    return { tenant, api, name: workflow.triggers[0].identifier as string };
  }

  test("a processed trigger puts the rendered message in the feed, payload values HTML-escaped", async () => {
    const { tenant, api, name } = await setup();
    const subscriberId = hexId();
    const res = await api.post("/v1/events/trigger", {
      name,
      to: { subscriberId, firstName: "Ada", email: "ada@example.com" },
      payload: { note: "<b>x</b>", orderId: "42" },
    });
    assert.equal(res.statusCode, 201, res.body);
    const ack = res.json().data;
    assert.equal(ack.acknowledged, true);
    assert.equal(ack.status, "processed");
    assert.ok(ack.transactionId);
    const feed = await feedWith(ctx, tenant.dev.apiKey, subscriberId, 1);
    assert.equal(feed.length, 1);
    const [message] = feed;
    assert.ok(message);
    assert.equal(message.transactionId, ack.transactionId);
    assert.equal(message.content, "Hi Ada, &lt;b&gt;x&lt;/b&gt;");
    assert.equal(message.cta.data.url, "/orders/42");
    // The subscriber object was upserted: its fields are stored.
    const stored = await api.get(`/v1/subscribers/${subscriberId}`);
    assert.equal(stored.statusCode, 200, stored.body);
    assert.equal(stored.json().data.email, "ada@example.com");
  });

  test("to as a subscriberId string creates the subscriber; an array reaches each", async () => {
    const { tenant, api, name } = await setup();
    const [a, b] = [hexId(), hexId()];
    const one = await api.post("/v1/events/trigger", { name, to: a, payload: { note: "1" } });
    assert.equal(one.statusCode, 201, one.body);
    assert.equal((await api.get(`/v1/subscribers/${a}`)).statusCode, 200);
    const many = await api.post("/v1/events/trigger", {
      name,
      to: [a, { subscriberId: b }],
      payload: { note: "2" },
    });
    assert.equal(many.statusCode, 201, many.body);
    assert.equal((await feedWith(ctx, tenant.dev.apiKey, a, 2)).length, 2);
    assert.equal((await feedWith(ctx, tenant.dev.apiKey, b, 1)).length, 1);
  });

  test("a topic fans out: each member gets exactly one message, also when named directly too", async () => {
    const { tenant, api, name } = await setup();
    const members = [hexId(), hexId(), hexId()];
    const topicKey = hexId();
    for (const m of members)
      assert.equal((await api.post("/v1/subscribers", { subscriberId: m })).statusCode, 201);
    const added = await api.post(`/v1/topics/${topicKey}/subscribers`, { subscribers: members });
    assert.equal(added.statusCode, 200, added.body);
    const res = await api.post("/v1/events/trigger", {
      name,
      to: [{ type: "Topic", topicKey }, members[0]],
      payload: { note: "t" },
    });
    assert.equal(res.statusCode, 201, res.body);
    for (const m of members) assert.equal((await feedWith(ctx, tenant.dev.apiKey, m, 1)).length, 1);
    // Once the queue has done all that is due, a duplicate would be there: count again.
    await drain(ctx);
    for (const m of members) assert.equal((await feedOf(ctx, tenant.dev.apiKey, m)).length, 1);
  });

  test("a topic that does not exist is a 422 naming it", async () => {
    const { api, name } = await setup();
    const topicKey = hexId();
    const res = await api.post("/v1/events/trigger", { name, to: [{ type: "Topic", topicKey }] });
    assertErrorBody(res, 422, { path: "/v1/events/trigger", message: new RegExp(topicKey) });
  });

  test("an unknown workflow is a 422", async () => {
    const { api } = await setup();
    const res = await api.post("/v1/events/trigger", { name: uniqueName("nope"), to: hexId() });
    assertErrorBody(res, 422, { path: "/v1/events/trigger" });
  });

  test("an inactive workflow answers trigger_not_active and runs nothing", async () => {
    const { api, name } = await setup(undefined, false);
    const subscriberId = hexId();
    const res = await api.post("/v1/events/trigger", { name, to: subscriberId, payload: { note: "x" } });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().data.status, "trigger_not_active");
    await drain(ctx);
    const messages = await api.get(`/v1/messages?transactionId=${res.json().data.transactionId}`);
    assert.equal(messages.statusCode, 200, messages.body);
    assert.equal(messages.json().data.length, 0);
    const feed = await api.get(`/v1/subscribers/${subscriberId}/notifications/feed`);
    if (feed.statusCode === 200) assert.equal(feed.json().data.length, 0);
    else assert.equal(feed.statusCode, 404);
  });

  test("bad inputs are a 400 naming the field", async () => {
    const { api, name } = await setup();
    const to = hexId();
    const cases: [Record<string, unknown>, string][] = [
      [{ to }, "name"],
      [{ name }, "to"],
      [{ name, to: [] }, "to"],
      [{ name, to: Array.from({ length: 101 }, () => hexId()) }, "to"],
      [{ name, to: [42] }, "to"],
      [{ name, to, payload: [1] }, "payload"],
      [{ name, to, payload: { big: "x".repeat(513 * 1024) } }, "payload"],
      [{ name, to, transactionId: "t".repeat(256) }, "transactionId"],
      [{ name, to, surprise: 1 }, "surprise"],
    ];
    for (const [body, field] of cases) {
      const res = await api.post("/v1/events/trigger", body);
      assert.equal(res.statusCode, 400, `${JSON.stringify(body).slice(0, 80)}: ${res.body.slice(0, 300)}`);
      const errors = (res.json().errors ?? []) as { field: string }[];
      assert.ok(
        errors.some(
          (e) => e.field === field || e.field.startsWith(`${field}.`) || e.field.startsWith(`${field}[`),
        ),
        `${field} named in ${res.body.slice(0, 300)}`,
      );
    }
  });

  test("one transactionId sent 4 times at once, then again: one ack, exactly one message", async () => {
    const { tenant, api, name } = await setup();
    const subscriberId = hexId();
    const transactionId = hexId();
    const body = { name, to: subscriberId, payload: { note: "once" }, transactionId };
    const answers = await Promise.all([1, 2, 3, 4].map(() => api.post("/v1/events/trigger", body)));
    answers.push(await api.post("/v1/events/trigger", body));
    for (const res of answers) {
      assert.equal(res.statusCode, 201, res.body);
      assert.equal(res.json().data.transactionId, transactionId);
    }
    assert.equal((await feedWith(ctx, tenant.dev.apiKey, subscriberId, 1)).length, 1);
    await drain(ctx);
    assert.equal((await feedOf(ctx, tenant.dev.apiKey, subscriberId)).length, 1);
  });

  test("bulk: each event its own result; more than 100 is a 400", async () => {
    const { tenant, api, name } = await setup();
    const subscriberId = hexId();
    const res = await api.post("/v1/events/trigger/bulk", {
      events: [{ name, to: subscriberId, payload: { note: "a" } }, { to: subscriberId }],
    });
    assert.equal(res.statusCode, 201, res.body);
    const results = res.json().data;
    assert.equal(results.length, 2);
    assert.equal(results[0].status, "processed");
    assert.equal(results[1].acknowledged, false);
    assert.equal((await feedWith(ctx, tenant.dev.apiKey, subscriberId, 1)).length, 1);
    const tooMany = await api.post("/v1/events/trigger/bulk", {
      events: Array.from({ length: 101 }, () => ({ name, to: subscriberId })),
    });
    assertErrorBody(tooMany, 400, { path: "/v1/events/trigger/bulk", fields: ["events"] });
  });

  test("broadcast reaches every subscriber of the environment and no other environment's", async () => {
    const { tenant, api, name } = await setup();
    const other = await ctx.tenant();
    const outsider = hexId();
    assert.equal(
      (await ctx.client(other.dev.apiKey).post("/v1/subscribers", { subscriberId: outsider })).statusCode,
      201,
    );
    const members = [hexId(), hexId()];
    for (const m of members)
      assert.equal((await api.post("/v1/subscribers", { subscriberId: m })).statusCode, 201);
    const res = await api.post("/v1/events/trigger/broadcast", { name, payload: { note: "all" } });
    assert.equal(res.statusCode, 201, res.body);
    for (const m of members) assert.equal((await feedWith(ctx, tenant.dev.apiKey, m, 1)).length, 1);
    await drain(ctx);
    const outside = await ctx.client(other.dev.apiKey).get(`/v1/subscribers/${outsider}/notifications/feed`);
    assert.equal(outside.statusCode, 200, outside.body);
    assert.equal(outside.json().data.length, 0);
  });

  test("a workflow without steps, or without active ones, says so and runs nothing", async () => {
    const none = await setup([]);
    const a = await none.api.post("/v1/events/trigger", { name: none.name, to: hexId() });
    assert.equal(a.statusCode, 201, a.body);
    assert.equal(a.json().data.status, "no_workflow_steps_defined");
    const off = await setup([{ template: { type: "in_app", content: "x" }, active: false }]);
    const b = await off.api.post("/v1/events/trigger", { name: off.name, to: hexId() });
    assert.equal(b.statusCode, 201, b.body);
    assert.equal(b.json().data.status, "no_workflow_active_steps_defined");
    await drain(ctx);
    for (const [api, res] of [
      [none.api, a],
      [off.api, b],
    ] as const) {
      const messages = await api.get(`/v1/messages?transactionId=${res.json().data.transactionId}`);
      assert.equal(messages.json().data.length, 0);
    }
  });

  test("cancel of an unknown transaction is {data:false}", async () => {
    const { api } = await setup();
    const res = await api.delete(`/v1/events/trigger/${hexId()}`);
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), { data: false });
  });
});
