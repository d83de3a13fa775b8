import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";
import { assertErrorBody } from "../../test/error-body.ts";
import { createWorkflow, uniqueName } from "../../test/factories.ts";
import { type Client, forEachBackend, type TestContext } from "../../test/harness.ts";
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

interface ActivityNotification {
  _id: string;
  subscriber: { subscriberId: string };
  jobs: { type: string; status: string; executionDetails: { status: string; detail: string }[] }[];
}

/** The transaction's notifications (from the activity), once there are `count` (a fan-out runs in the worker). */
const notificationsOf = (api: Client, transactionId: string, count = 1) =>
  poll(
    async () => {
      const res = await api.get(`/v1/notifications?transactionId=${transactionId}`);
      assert.equal(res.statusCode, 200, res.body);
      return res.json().data as ActivityNotification[];
    },
    (data) => data.length >= count,
    { what: `${count} notifications of transaction ${transactionId}` },
  );

/** A job's execution details, as text, in the order the activity lists them. */
const detailsOf = (job: ActivityNotification["jobs"][number] | undefined) =>
  (job?.executionDetails ?? []).map((d) => d.detail);

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
    assertErrorBody(res, 422, { path: "/v1/events/trigger", message: new RegExp(topicKey), fields: ["to"] });
  });

  test("an unknown workflow is a 422", async () => {
    const { api } = await setup();
    const res = await api.post("/v1/events/trigger", { name: uniqueName("nope"), to: hexId() });
    assertErrorBody(res, 422, { path: "/v1/events/trigger", fields: ["name"] });
  });

  test("an inactive workflow answers trigger_not_active, sends nothing, and shows in the activity with the reason", async () => {
    const { tenant, api, name } = await setup(
      [
        { template: { type: "in_app", content: "Hi" } },
        { template: { type: "email", subject: "Hi", content: "Hi" } },
      ],
      false,
    );
    const known = hexId();
    assert.equal((await api.post("/v1/subscribers", { subscriberId: known })).statusCode, 201);
    const unknown = hexId();
    const transactionId = hexId();
    const body = { name, to: [known, unknown], payload: { note: "x" }, transactionId };
    const res = await api.post("/v1/events/trigger", body);
    assert.equal(res.statusCode, 201, res.body);
    assert.deepEqual(res.json().data, { acknowledged: true, status: "trigger_not_active", transactionId });

    const notifications = await notificationsOf(api, transactionId);
    assert.deepEqual(notifications.map((n) => n.subscriber.subscriberId).sort(), [known, unknown].sort());
    for (const n of notifications) {
      assert.deepEqual(
        n.jobs.map((job) => [job.type, job.status]),
        [
          ["in_app", "skipped"],
          ["email", "skipped"],
        ],
        "every step recorded, none run",
      );
      for (const job of n.jobs)
        assert.ok(
          job.executionDetails.some(
            (d) => d.status === "Warning" && d.detail === "Not run: the workflow is inactive",
          ),
          JSON.stringify(job.executionDetails),
        );
      // The notification's own page says the same.
      const page = await api.get(`/v1/notifications/${n._id}`);
      assert.equal(page.statusCode, 200, page.body);
      assert.deepEqual(page.json().data.jobs, n.jobs);
    }
    const created = notifications.find((n) => n.subscriber.subscriberId === unknown);
    const existing = notifications.find((n) => n.subscriber.subscriberId === known);
    assert.deepEqual(detailsOf(created?.jobs[0]), [
      `Subscriber ${unknown} did not exist and was created without contact details`,
      "Not run: the workflow is inactive",
    ]);
    assert.deepEqual(detailsOf(created?.jobs[1]), ["Not run: the workflow is inactive"]);
    assert.deepEqual(detailsOf(existing?.jobs[0]), ["Not run: the workflow is inactive"]);

    // Nothing was sent, and nothing is left to run: no message, every job final.
    await drain(ctx);
    const messages = await api.get(`/v1/messages?transactionId=${transactionId}`);
    assert.equal(messages.statusCode, 200, messages.body);
    assert.equal(messages.json().data.length, 0);
    for (const subscriberId of [known, unknown])
      assert.equal((await feedOf(ctx, tenant.dev.apiKey, subscriberId)).length, 0);
    // The same transactionId again records nothing more.
    const again = await api.post("/v1/events/trigger", body);
    assert.equal(again.json().data.status, "trigger_not_active", again.body);
    assert.equal((await notificationsOf(api, transactionId)).length, 2);
  });

  test("an inactive workflow sent to a topic: every member's notification is recorded unrun, by the fan-out", async () => {
    const { api, name } = await setup(undefined, false);
    const members = [hexId(), hexId()];
    const topicKey = hexId();
    for (const m of members)
      assert.equal((await api.post("/v1/subscribers", { subscriberId: m })).statusCode, 201);
    assert.equal(
      (await api.post(`/v1/topics/${topicKey}/subscribers`, { subscribers: members })).statusCode,
      200,
    );
    const newcomer = hexId();
    const transactionId = hexId();
    const res = await api.post("/v1/events/trigger", {
      name,
      to: [
        { type: "Topic", topicKey },
        { subscriberId: newcomer, email: "new@example.com" },
      ],
      transactionId,
    });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().data.status, "trigger_not_active");
    const notifications = await notificationsOf(api, transactionId, 3);
    assert.deepEqual(
      notifications.map((n) => n.subscriber.subscriberId).sort(),
      [...members, newcomer].sort(),
    );
    for (const n of notifications) {
      assert.deepEqual(
        n.jobs.map((job) => job.status),
        ["skipped"],
      );
      const expected = ["Not run: the workflow is inactive"];
      if (n.subscriber.subscriberId === newcomer)
        expected.unshift(
          `Subscriber ${newcomer} did not exist and was created from the trigger, with an email address`,
        );
      assert.deepEqual(detailsOf(n.jobs[0]), expected);
    }
    const messages = await api.get(`/v1/messages?transactionId=${transactionId}`);
    assert.equal(messages.json().data.length, 0);
  });

  test("a subscriberId that does not exist is created, and its notification says so; an existing one's does not", async () => {
    const { tenant, api, name } = await setup();
    const known = hexId();
    assert.equal((await api.post("/v1/subscribers", { subscriberId: known })).statusCode, 201);
    const [bare, withEmail] = [hexId(), hexId()];
    const transactionId = hexId();
    const res = await api.post("/v1/events/trigger", {
      name,
      to: [known, bare, { subscriberId: withEmail, email: "e@example.com", phone: "+15550100" }],
      payload: { note: "n" },
      transactionId,
    });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().data.status, "processed");
    for (const subscriberId of [known, bare, withEmail])
      assert.equal(
        (await feedWith(ctx, tenant.dev.apiKey, subscriberId, 1)).length,
        1,
        "delivered as before",
      );
    const notifications = await notificationsOf(api, transactionId);
    const noteOf = (subscriberId: string) => {
      const n = notifications.find((x) => x.subscriber.subscriberId === subscriberId);
      assert.ok(n, subscriberId);
      return n.jobs[0]?.executionDetails.filter((d) => d.detail.includes("did not exist"));
    };
    assert.deepEqual(noteOf(known), []);
    assert.deepEqual(
      noteOf(bare)?.map((d) => [d.status, d.detail]),
      [["Warning", `Subscriber ${bare} did not exist and was created without contact details`]],
    );
    assert.deepEqual(
      noteOf(withEmail)?.map((d) => [d.status, d.detail]),
      [
        [
          "Success",
          `Subscriber ${withEmail} did not exist and was created from the trigger, with an email address and a phone number`,
        ],
      ],
    );
    // The execution-details route lists it with the notification's others.
    const bareNotification = notifications.find((n) => n.subscriber.subscriberId === bare);
    const listed = await api.get(`/v1/execution-details?notificationId=${bareNotification?._id}`);
    assert.equal(listed.statusCode, 200, listed.body);
    assert.ok(
      (listed.json().data as { detail: string }[]).some((d) =>
        d.detail.startsWith(`Subscriber ${bare} did not exist`),
      ),
      listed.body,
    );
    // The second trigger to the same subscriber finds it: no note.
    const second = hexId();
    await api.post("/v1/events/trigger", { name, to: bare, payload: { note: "2" }, transactionId: second });
    const [again] = await notificationsOf(api, second);
    assert.ok(again);
    assert.ok(!JSON.stringify(again.jobs).includes("did not exist"), JSON.stringify(again.jobs));
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

  test("a bulk event is refused by the trigger's own schema: the same problems, word for word, as alone", async () => {
    const { api, name } = await setup();
    const to = hexId();
    const cases: [Record<string, unknown>, string[]][] = [
      [{ to }, ["name"]],
      [{ name }, ["to"]],
      [{ name: " \t", to }, ["name"]],
      [{ name: "n".repeat(201), to }, ["name"]],
      [{ name, to: [] }, ["to"]],
      [{ name, to: 42 }, ["to"]],
      [{ name, to: [42, "   ", "a\u0007b", "x".repeat(129)] }, ["to[0]", "to[1]", "to[2]", "to[3]"]],
      [{ name, to: {} }, ["to.subscriberId"]],
      [{ name, to: [{ type: "Topic" }] }, ["to[0].topicKey"]],
      // The subscriber is upserted with these: they have the create route's types (a 500 once).
      [{ name, to: { subscriberId: to, email: 42 } }, ["to.email"]],
      [{ name, to: { subscriberId: to, channels: "slack" } }, ["to.channels"]],
      [{ name, to, actor: { type: "Topic", topicKey: "k" } }, ["actor.subscriberId"]],
      [{ name, to, tenant: 5 }, ["tenant"]],
      [{ name, to, payload: [1] }, ["payload"]],
      [{ name, to, overrides: { big: "x".repeat(513 * 1024) } }, ["overrides"]],
      [{ name, to, transactionId: "" }, ["transactionId"]],
      [{ name, to, transactionId: "t".repeat(256) }, ["transactionId"]],
      [{ name, to, surprise: 1 }, ["surprise"]],
    ];
    for (const [body, fields] of cases) {
      const label = JSON.stringify(body).slice(0, 80);
      const alone = await api.post("/v1/events/trigger", body);
      assertErrorBody(alone, 400, { path: "/v1/events/trigger", fields });
      const errors = (alone.json().errors as { field: string; message: string }[]).map(
        (e) => `${e.field} ${e.message}`,
      );
      const bulk = await api.post("/v1/events/trigger/bulk", { events: [body, { name, to }] });
      assert.equal(bulk.statusCode, 201, bulk.body);
      const [refused, accepted] = bulk.json().data;
      assert.deepEqual(refused, { acknowledged: false, status: "error", error: errors }, label);
      assert.equal(accepted.status, "processed", `the other event still runs (${label})`);
    }
  });

  test("text lengths count characters, not UTF-16 units, alone and in bulk", async () => {
    const { api, name } = await setup();
    const to = "😀".repeat(128);
    const transactionId = "😀".repeat(255);
    const res = await api.post("/v1/events/trigger", { name, to, transactionId });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().data.transactionId, transactionId);
    const bulk = await api.post("/v1/events/trigger/bulk", {
      events: [
        { name, to: `${to}😀` },
        { name, to, transactionId: `${transactionId}😀` },
        { name: "😀".repeat(200), to },
        { name: "😀".repeat(201), to },
      ],
    });
    assert.equal(bulk.statusCode, 201, bulk.body);
    assert.deepEqual(
      bulk.json().data.map((r: { error?: string[] }) => r.error?.map((e) => e.split(" ")[0])),
      [["to"], ["transactionId"], ["workflow_not_found:"], ["name"]],
    );
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
