// A subscriber's own topic subscriptions from Novu's current inbox (docs/engine.md, "Subscribers,
// topics and preferences") on both backends, through @novu/js itself: joining and leaving topics,
// per-workflow preferences on a subscription and what a trigger to the topic then brings (or does
// not), and a session that never sees or changes another subscriber's subscriptions.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";
import { assertErrorBody } from "../../test/error-body.ts";
import { createWorkflow, uniqueName } from "../../test/factories.ts";
import { type Client, forEachBackend, type TestContext } from "../../test/harness.ts";
import { applicationIdentifierOf, openInbox } from "../../test/inbox-client.ts";
import { poll } from "../../test/poll.ts";
import { drain } from "../../test/queue-helpers.ts";
import { ManualClock } from "../clock.ts";

const START = Date.UTC(2026, 5, 1, 12);
const hexId = () => randomBytes(12).toString("hex");

interface NotificationView {
  subscriber?: { subscriberId: string };
  jobs: { type: string; status: string; executionDetails: { detail: string }[] }[];
}

const SETTLED = (n: NotificationView) =>
  n.jobs.length > 0 && n.jobs.every((j) => !["pending", "queued", "running", "delayed"].includes(j.status));

const jobOf = (n: NotificationView | undefined, type: string) => n?.jobs.find((j) => j.type === type);

function bearer(ctx: TestContext, token: string) {
  const send = (method: "GET" | "POST" | "PATCH" | "DELETE", url: string, body?: unknown) =>
    ctx.app.inject({
      method,
      url: `/v1/inbox${url}`,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body !== undefined ? { "content-type": "application/json" } : {}),
      },
      ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
    });
  return {
    get: (url: string) => send("GET", url),
    post: (url: string, body: unknown) => send("POST", url, body),
    patch: (url: string, body: unknown) => send("PATCH", url, body),
    delete: (url: string) => send("DELETE", url),
  };
}

const refused = (
  res: Awaited<ReturnType<TestContext["app"]["inject"]>>,
  status: number,
  message: RegExp,
  fields?: string[],
) =>
  assertErrorBody(res, status, {
    path: (res.raw.req.url ?? "").split("?")[0] as string,
    message,
    ...(fields ? { fields } : {}),
  });

forEachBackend(
  "the inbox's topic subscriptions (@novu/js)",
  (ctx) => {
    /**
     * The notifications of a trigger, by subscriberId, once `expected` of them exist and have settled
     * and the queue has done all that is due, so that one still to come would be there too.
     */
    async function notificationsOf(api: Client, transactionId: string, expected: number) {
      const read = async () => {
        const res = await api.get(`/v1/notifications?transactionId=${transactionId}`);
        assert.equal(res.statusCode, 200, res.body);
        return res.json().data as NotificationView[];
      };
      await poll(read, (found) => found.length >= expected && found.every(SETTLED), {
        what: `${expected} settled notifications of ${transactionId}`,
        limitMs: 5_000,
      });
      await drain(ctx);
      const found = await read();
      assert.equal(found.length, expected, JSON.stringify(found));
      assert.ok(found.every(SETTLED), JSON.stringify(found));
      return new Map(found.map((n) => [n.subscriber?.subscriberId ?? "", n]));
    }

    async function setup() {
      const tenant = await ctx.tenant();
      const api = ctx.client(tenant.dev.apiKey);
      const mk = async (body: Record<string, unknown>) => {
        const workflow = await createWorkflow(ctx, tenant.dev.apiKey, tenant.dev.generalGroupId, {
          name: uniqueName("Topic workflow"),
          active: true,
          ...body,
        });
        ctx.clock.advance(1);
        return { id: workflow._id as string, identifier: workflow.triggers[0].identifier as string };
      };
      const inApp = { template: { type: "in_app", content: "Hello" } };
      const email = { template: { type: "email", subject: "Hi", content: "Hello" } };
      const news = await mk({ tags: ["news"], steps: [inApp, email] });
      const digest = await mk({ tags: ["digest"], steps: [inApp] });
      const alerts = await mk({ critical: true, steps: [inApp] });
      const identifier = await applicationIdentifierOf(api);
      const open = async (subscriberId = hexId()) => {
        const inbox = await openInbox(ctx, {
          applicationIdentifier: identifier,
          subscriber: { subscriberId },
          useCache: false,
        });
        assert.equal(inbox.error, undefined, String(inbox.error));
        return { ...inbox, subscriberId, token: inbox.session?.token as string };
      };
      const topicKey = `team:${hexId()}`;
      const trigger = async (workflow: { identifier: string }, payload: Record<string, unknown> = {}) => {
        const transactionId = hexId();
        const res = await api.post("/v1/events/trigger", {
          name: workflow.identifier,
          to: [{ type: "Topic", topicKey }],
          payload,
          transactionId,
        });
        assert.equal(res.statusCode, 201, res.body);
        return transactionId;
      };
      return { tenant, api, news, digest, alerts, open, topicKey, trigger };
    }

    test("subscriptions.create joins the topic (creating it, named) with preferences; list and get answer it; get of none is null", async () => {
      const { api, news, digest, open, topicKey } = await setup();
      const inbox = await open();
      try {
        const created = await inbox.novu.subscriptions.create({
          topicKey,
          topicName: "Team news",
          preferences: [news.id, { workflowId: digest.identifier, enabled: false }],
        });
        assert.equal(created.error, undefined, String(created.error));
        const subscription = created.data;
        assert.ok(subscription);
        assert.equal(subscription.identifier, `tk_${topicKey}:si_${inbox.subscriberId}`);
        assert.equal(subscription.topicKey, topicKey);
        assert.match(subscription.id, /^[0-9a-f]{24}$/);
        assert.deepEqual(
          subscription.preferences?.map((p) => [p.workflow.id, p.enabled, p.subscriptionId]),
          [
            [news.id, true, subscription.identifier],
            [digest.id, false, subscription.identifier],
          ],
        );
        assert.deepEqual(subscription.preferences?.[0]?.workflow, {
          id: news.id,
          identifier: news.identifier,
          name: subscription.preferences?.[0]?.workflow.name,
          critical: false,
          tags: ["news"],
          severity: "none",
        });

        // The API key sees the topic and its member.
        const topic = await api.get(`/v1/topics/${topicKey}`);
        assert.equal(topic.statusCode, 200, topic.body);
        assert.equal(topic.json().data.name, "Team news");
        assert.deepEqual(topic.json().data.subscribers, [inbox.subscriberId]);

        const listed = await inbox.novu.subscriptions.list({ topicKey });
        assert.deepEqual(
          listed.data?.map((s) => [s.id, s.identifier, s.preferences?.length]),
          [[subscription.id, subscription.identifier, 2]],
        );
        const got = await inbox.novu.subscriptions.get({ topicKey });
        assert.equal(got.data?.id, subscription.id);
        // Asked for by workflow or tag: one preference each, the default (on) where none is stored.
        const asked = await inbox.novu.subscriptions.get({
          topicKey,
          tags: ["digest"],
          workflowIds: [news.identifier],
        });
        assert.deepEqual(
          asked.data?.preferences?.map((p) => [p.workflow.id, p.enabled]),
          [
            [news.id, true],
            [digest.id, false],
          ],
        );
        assert.equal((await inbox.novu.subscriptions.get({ topicKey: `${topicKey}-other` })).data, null);
        assert.deepEqual((await inbox.novu.subscriptions.list({ topicKey: `${topicKey}-other` })).data, []);

        // Subscribing again under the same identifier answers it as it is.
        const again = await inbox.novu.subscriptions.create({ topicKey });
        assert.equal(again.data?.id, subscription.id);
      } finally {
        await inbox.close();
      }
    });

    test("a subscription's preference: off, the topic's trigger does not notify the subscriber; in-app off, no in-app message; others unaffected", async () => {
      const { api, news, open, topicKey, trigger } = await setup();
      const ada = await open();
      const bob = hexId();
      try {
        const { data: subscription } = await ada.novu.subscriptions.create({ topicKey });
        assert.ok(subscription);
        assert.equal((await api.post("/v1/subscribers", { subscriberId: bob })).statusCode, 201);
        const added = await api.post(`/v1/topics/${topicKey}/subscribers`, { subscribers: [bob] });
        assert.equal(added.statusCode, 200, added.body);

        // Off: Bob is notified, Ada is not.
        const off = await subscription.updatePreference({ workflowId: news.id, value: false });
        assert.equal(off.error, undefined, String(off.error));
        assert.equal(off.data?.enabled, false);
        assert.equal(off.data?.subscriptionId, subscription.identifier);
        const first = await notificationsOf(api, await trigger(news), 1);
        assert.deepEqual([...first.keys()], [bob]);

        // On again, in-app turned off on the subscription: Ada's in-app step skips, Bob's delivers.
        await subscription.updatePreference({ workflowId: news.id, value: true });
        const inAppOff = await bearer(ctx, ada.token).patch(
          `/subscriptions/${subscription.identifier}/preferences/${news.identifier}`,
          { in_app: false },
        );
        assert.equal(inAppOff.statusCode, 200, inAppOff.body);
        assert.deepEqual(inAppOff.json().data.channels, {
          email: true,
          sms: true,
          in_app: false,
          chat: true,
          push: true,
        });
        const second = await notificationsOf(api, await trigger(news), 2);
        assert.equal(jobOf(second.get(ada.subscriberId), "in_app")?.status, "skipped");
        assert.match(
          jobOf(second.get(ada.subscriberId), "in_app")
            ?.executionDetails.map((d) => d.detail)
            .join() ?? "",
          /topic subscription turned the in_app channel off/,
        );
        assert.doesNotMatch(
          jobOf(second.get(ada.subscriberId), "email")
            ?.executionDetails.map((d) => d.detail)
            .join() ?? "",
          /topic subscription/,
        );
        assert.equal(jobOf(second.get(bob), "in_app")?.status, "completed");

        // Addressed directly, not through the topic: the subscription has no say.
        const direct = hexId();
        await api.post("/v1/events/trigger", {
          name: news.identifier,
          to: ada.subscriberId,
          transactionId: direct,
        });
        const directly = await notificationsOf(api, direct, 1);
        assert.equal(jobOf(directly.get(ada.subscriberId), "in_app")?.status, "completed");

        // A condition on the payload decides alone: met, Ada is notified; not met, she is not.
        const conditioned = await subscription.updatePreference({
          workflowId: news.id,
          value: { "==": [{ var: "payload.team" }, "core"] },
        });
        assert.equal(conditioned.error, undefined, String(conditioned.error));
        assert.deepEqual(conditioned.data?.condition, { "==": [{ var: "payload.team" }, "core"] });
        assert.deepEqual(
          [...(await notificationsOf(api, await trigger(news, { team: "web" }), 1)).keys()],
          [bob],
        );
        assert.equal(
          (await notificationsOf(api, await trigger(news, { team: "core" }), 2)).has(ada.subscriberId),
          true,
        );
      } finally {
        await ada.close();
      }
    });

    test("a critical workflow reaches every member, and cannot be turned off on a subscription", async () => {
      const { api, alerts, open, topicKey, trigger } = await setup();
      const inbox = await open();
      try {
        const { data: subscription } = await inbox.novu.subscriptions.create({ topicKey });
        assert.ok(subscription);
        refused(
          await bearer(ctx, inbox.token).patch(
            `/subscriptions/${subscription.identifier}/preferences/${alerts.id}`,
            {
              enabled: false,
            },
          ),
          400,
          /is critical/,
        );
        const reached = await notificationsOf(api, await trigger(alerts), 1);
        assert.equal(jobOf(reached.get(inbox.subscriberId), "in_app")?.status, "completed");
      } finally {
        await inbox.close();
      }
    });

    test("update renames and replaces the preferences; bulkUpdatePreferences sets several; delete leaves the topic", async () => {
      const { api, news, digest, open, topicKey, trigger } = await setup();
      const inbox = await open();
      try {
        const { data: subscription } = await inbox.novu.subscriptions.create({
          topicKey,
          identifier: "my-team",
          name: "Mine",
          preferences: [{ workflowId: news.id, enabled: false }],
        });
        assert.ok(subscription);
        assert.equal(subscription.identifier, "my-team");
        const updated = await inbox.novu.subscriptions.update({
          subscription,
          name: "Renamed",
          preferences: [{ filter: { tags: ["digest"] }, enabled: false }],
        });
        assert.equal(updated.error, undefined, String(updated.error));
        assert.deepEqual(
          updated.data?.preferences?.map((p) => [p.workflow.id, p.enabled]),
          [[digest.id, false]],
          "the news preference was replaced",
        );
        const raw = await bearer(ctx, inbox.token).get(`/topics/${topicKey}/subscriptions/my-team`);
        assert.equal(raw.json().data.name, "Renamed");

        const bulk = await updated.data?.bulkUpdatePreferences([
          { workflowId: news.id, value: false },
          { workflowId: digest.identifier, value: true },
        ]);
        assert.equal(bulk?.error, undefined, String(bulk?.error));
        assert.deepEqual(
          bulk?.data?.map((p) => [p.workflow.id, p.enabled, p.subscriptionId]),
          [
            [news.id, false, "my-team"],
            [digest.id, true, "my-team"],
          ],
        );

        const deleted = await inbox.novu.subscriptions.delete({ topicKey, identifier: "my-team" });
        assert.equal(deleted.error, undefined, String(deleted.error));
        assert.deepEqual((await api.get(`/v1/topics/${topicKey}`)).json().data.subscribers, []);
        assert.equal((await inbox.novu.subscriptions.get({ topicKey, identifier: "my-team" })).data, null);
        // Its preferences went with it: joining again starts afresh, and the trigger reaches it.
        const rejoined = await inbox.novu.subscriptions.create({ topicKey, identifier: "my-team" });
        const rejoinedRef = (await api.get(`/v1/subscribers/${inbox.subscriberId}`)).json().data
          ._id as string;
        assert.deepEqual(rejoined.data?.preferences, []);
        assert.equal((await notificationsOf(api, await trigger(news), 1)).has(inbox.subscriberId), true);

        // A deleted subscriber takes its subscriptions and their preferences along.
        await rejoined.data?.updatePreference({ workflowId: news.id, value: false });
        const stored = () =>
          ctx.store.db
            .selectFrom("topic_subscription_preferences")
            .select("workflow_id")
            .where("subscriber_ref", "=", rejoinedRef)
            .execute();
        assert.equal((await stored()).length, 1);
        assert.equal((await api.delete(`/v1/subscribers/${inbox.subscriberId}`)).statusCode, 200);
        assert.deepEqual(await stored(), []);
        assert.deepEqual((await api.get(`/v1/topics/${topicKey}`)).json().data.subscribers, []);
      } finally {
        await inbox.close();
      }
    });

    test("a session never sees or changes another subscriber's subscriptions, nor another environment's topics", async () => {
      const { news, open, topicKey, tenant } = await setup();
      const ada = await open();
      const bob = await open();
      try {
        const { data: adas } = await ada.novu.subscriptions.create({ topicKey, identifier: "ada-s" });
        assert.ok(adas);
        // Bob sees none of Ada's.
        assert.deepEqual((await bob.novu.subscriptions.list({ topicKey })).data, []);
        assert.equal((await bob.novu.subscriptions.get({ topicKey, identifier: "ada-s" })).data, null);
        const asBob = bearer(ctx, bob.token);
        const byId = await asBob.get(`/topics/${topicKey}/subscriptions/${adas.id}`);
        assert.equal(byId.statusCode, 204);
        refused(
          await asBob.patch(`/topics/${topicKey}/subscriptions/ada-s`, { name: "Mine now" }),
          404,
          /^Subscription ada-s was not found$/,
        );
        refused(
          await asBob.delete(`/topics/${topicKey}/subscriptions/ada-s`),
          404,
          /^Subscription ada-s was not found$/,
        );
        refused(
          await asBob.patch(`/subscriptions/ada-s/preferences/${news.id}`, { enabled: false }),
          404,
          /^Subscription ada-s was not found$/,
        );
        refused(
          await asBob.patch("/preferences/bulk", {
            preferences: [{ workflowId: news.id, subscriptionIdentifier: "ada-s", enabled: false }],
          }),
          404,
          /^Subscription ada-s was not found$/,
        );
        // Nor can Bob take Ada's identifier, or her default one.
        refused(
          await asBob.post(`/topics/${topicKey}/subscriptions`, { identifier: "ada-s" }),
          409,
          /has a subscription with this identifier/,
        );
        refused(
          await asBob.post(`/topics/${topicKey}/subscriptions`, {
            identifier: `tk_${topicKey}:si_${ada.subscriberId}`,
          }),
          400,
          /another subscriber's subscription/,
          ["identifier"],
        );
        // Ada's subscription is as she left it.
        const still = await ada.novu.subscriptions.get({ topicKey, identifier: "ada-s" });
        assert.equal(still.data?.id, adas.id);
        assert.deepEqual(still.data?.preferences, []);

        // Another environment has its own topic of that key; Ada's session cannot reach it.
        const prodApi = ctx.client(tenant.prod.apiKey);
        assert.equal(
          (await prodApi.post("/v1/topics", { key: topicKey, name: "Production's" })).statusCode,
          201,
        );
        assert.deepEqual((await prodApi.get(`/v1/topics/${topicKey}`)).json().data.subscribers, []);
        assert.equal(
          (await ctx.client(tenant.dev.apiKey).get(`/v1/topics/${topicKey}`)).json().data.name,
          `Autogenerated-${topicKey}`,
        );
        const anonymous = await ctx.app.inject({
          method: "GET",
          url: `/v1/inbox/topics/${topicKey}/subscriptions`,
        });
        assert.equal(anonymous.statusCode, 401);
      } finally {
        await ada.close();
        await bob.close();
      }
    });

    test("bad input is a 4xx in the one error body, and subscribes nobody", async () => {
      const { api, news, digest, alerts, open, topicKey } = await setup();
      const inbox = await open();
      try {
        const session = bearer(ctx, inbox.token);
        const path = `/topics/${topicKey}/subscriptions`;
        const cases: [string, Awaited<ReturnType<typeof session.post>>, number, RegExp, string[]?][] = [
          [
            "a topic key that is not one",
            await session.post("/topics/a%20b/subscriptions", {}),
            400,
            /topicKey/,
            ["topicKey"],
          ],
          [
            "an identifier with a slash",
            await session.post(path, { identifier: "a/b" }),
            400,
            /identifier/,
            ["identifier"],
          ],
          ["an unknown field", await session.post(path, { colour: "red" }), 400, /colour/, ["colour"]],
          [
            "a preference of an unknown workflow",
            await session.post(path, { preferences: ["no-such-workflow"] }),
            404,
            /^Workflow no-such-workflow was not found$/,
          ],
          [
            "a condition with an unknown operator",
            await session.post(path, {
              preferences: [{ workflowId: news.id, condition: { regex: ["a", "b"] } }],
            }),
            400,
            /^preferences\[0\]\.condition uses the operator "regex"/,
            ["preferences[0].condition"],
          ],
          [
            "a critical workflow turned off",
            await session.post(path, { preferences: [{ workflowId: alerts.id, enabled: false }] }),
            400,
            /is critical/,
          ],
          [
            "a preference that is a number",
            await session.post(path, { preferences: [5] }),
            400,
            /preferences/,
            ["preferences[0]"],
          ],
        ];
        for (const [name, res, status, message, fields] of cases) {
          assert.equal(res.statusCode, status, `${name}: ${res.body}`);
          refused(res, status, message, fields);
        }
        assert.equal((await api.get(`/v1/topics/${topicKey}`)).statusCode, 404, "no topic was made");

        const { data: subscription } = await inbox.novu.subscriptions.create({ topicKey });
        assert.ok(subscription);
        refused(await session.post(path, { identifier: "another" }), 409, /subscribed to topic .* already/);
        refused(
          await session.patch(`/subscriptions/${subscription.identifier}/preferences/${digest.id}`, {
            condition: { "==": [1, 1], "!=": [1, 2] },
          }),
          400,
          /^condition must be a JSON Logic rule/,
          ["condition"],
        );
        refused(
          await session.patch(`/subscriptions/${subscription.identifier}/preferences/${digest.id}`, {
            in_app: "off",
          }),
          400,
          /in_app/,
          ["in_app"],
        );
        refused(
          await session.patch(`/subscriptions/no-such/preferences/${digest.id}`, { enabled: false }),
          404,
          /^Subscription no-such was not found$/,
        );
        refused(
          await session.patch(`/topics/${topicKey}/subscriptions/${subscription.identifier}`, { name: " " }),
          400,
          /^name must not be empty/,
          ["name"],
        );
        assert.deepEqual((await inbox.novu.subscriptions.get({ topicKey })).data?.preferences, []);
      } finally {
        await inbox.close();
      }
    });
  },
  { clock: () => new ManualClock(START) },
);
