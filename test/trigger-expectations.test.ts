import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, test } from "node:test";
import { ManualClock } from "../src/clock.ts";
import { assertErrorBody } from "./error-body.ts";
import { createSubscriber, createWorkflow } from "./factories.ts";
import { type Client, forEachBackend } from "./harness.ts";
import { drain } from "./queue-helpers.ts";
import { type SmtpSink, startSmtpSink } from "./sinks.ts";

// What Novu's own end-to-end tests expect of triggers and of what they leave behind, as a client
// sees it: the actor in templates and out of its own topic's notifications, a step's declared
// variables (required ones, defaults), deleting a transaction's messages of one channel, the
// activity filtered by e-mail, and each execution detail's channel.

const hexId = () => randomBytes(12).toString("hex");

forEachBackend<ManualClock>(
  "trigger expectations from Novu's e2e tests",
  (ctx) => {
    let sink: SmtpSink;
    before(async () => {
      sink = await startSmtpSink();
    });
    after(async () => {
      await sink.close();
    });

    async function setup() {
      const tenant = await ctx.tenant();
      const api = ctx.client(tenant.dev.apiKey);
      const workflow = async (steps: unknown[], more: Record<string, unknown> = {}) => {
        const created = await createWorkflow(ctx, tenant.dev.apiKey, tenant.dev.generalGroupId, {
          active: true,
          steps,
          ...more,
        });
        return created.triggers[0].identifier as string;
      };
      return { tenant, api, workflow };
    }

    async function trigger(api: Client, body: Record<string, unknown>) {
      // A second apart, so that newest first is the order of the triggers.
      ctx.clock.advance(1000);
      const transactionId = hexId();
      const res = await api.post("/v1/events/trigger", { transactionId, ...body });
      assert.equal(res.statusCode, 201, res.body);
      await drain(ctx);
      return { transactionId, status: res.json().data.status as string };
    }

    async function feedContents(api: Client, subscriberId: string): Promise<string[]> {
      const res = await api.get(`/v1/subscribers/${subscriberId}/notifications/feed`);
      assert.equal(res.statusCode, 200, res.body);
      return res.json().data.map((m: { content: string }) => m.content);
    }

    async function notifiedOf(api: Client, transactionId: string): Promise<string[]> {
      const res = await api.get(`/v1/notifications?transactionId=${transactionId}&limit=100`);
      assert.equal(res.statusCode, 200, res.body);
      return res
        .json()
        .data.map((n: { subscriber: { subscriberId: string } }) => n.subscriber.subscriberId)
        .sort();
    }

    test("{{actor.*}} renders the actor's subscriber, created or updated as the trigger sends it", async () => {
      const { tenant, api, workflow } = await setup();
      const name = await workflow([
        {
          template: {
            type: "in_app",
            content: "{{actor.firstName}} {{actor.lastName}} mentioned you, {{subscriber.firstName}}",
          },
        },
      ]);
      const ada = await createSubscriber(ctx, tenant.dev.apiKey, { firstName: "Ada", lastName: "Lovelace" });
      const bob = await createSubscriber(ctx, tenant.dev.apiKey, { firstName: "Bob" });
      // By subscriberId: the stored subscriber's fields.
      await trigger(api, { name, to: bob.subscriberId, actor: ada.subscriberId });
      assert.deepEqual(await feedContents(api, bob.subscriberId), ["Ada Lovelace mentioned you, Bob"]);
      // As an object: an actor nobody made is created; a known one is updated with what is sent.
      const grace = hexId();
      await trigger(api, { name, to: bob.subscriberId, actor: { subscriberId: grace, firstName: "Grace" } });
      await trigger(api, {
        name,
        to: bob.subscriberId,
        actor: { subscriberId: ada.subscriberId, lastName: "King" },
      });
      assert.deepEqual(await feedContents(api, bob.subscriberId), [
        "Ada King mentioned you, Bob",
        "Grace  mentioned you, Bob",
        "Ada Lovelace mentioned you, Bob",
      ]);
      const created = await api.get(`/v1/subscribers/${grace}`);
      assert.equal(created.statusCode, 200, created.body);
      assert.equal(created.json().data.firstName, "Grace");
    });

    test("a topic trigger does not notify its actor, unless the actor is also named directly", async () => {
      const { tenant, api, workflow } = await setup();
      const name = await workflow([{ template: { type: "in_app", content: "{{actor.firstName}} posted" } }]);
      const members = [];
      for (const firstName of ["Ada", "Bob", "Cy"]) {
        members.push(await createSubscriber(ctx, tenant.dev.apiKey, { firstName }));
      }
      const [ada, bob, cy] = members.map((m) => m.subscriberId) as [string, string, string];
      const topicKey = `team-${hexId()}`;
      const added = await api.post(`/v1/topics/${topicKey}/subscribers`, { subscribers: [ada, bob, cy] });
      assert.equal(added.statusCode, 200, added.body);
      const topic = { type: "Topic", topicKey };

      const first = await trigger(api, { name, to: topic, actor: ada });
      assert.deepEqual(await notifiedOf(api, first.transactionId), [bob, cy].sort());
      assert.deepEqual(await feedContents(api, ada), []);

      const second = await trigger(api, { name, to: [topic, ada], actor: { subscriberId: ada } });
      assert.deepEqual(await notifiedOf(api, second.transactionId), [ada, bob, cy].sort());
      assert.deepEqual(await feedContents(api, ada), ["Ada posted"]);
    });

    test("a step's required variables refuse a trigger without them, by type; defaults fill what the payload leaves out", async () => {
      const { tenant, api, workflow } = await setup();
      const to = (await createSubscriber(ctx, tenant.dev.apiKey, { firstName: "Ada" })).subscriberId;
      const required = await workflow([
        {
          template: {
            type: "in_app",
            content: "Order {{order.id}}",
            variables: [
              { name: "order.id", type: "String", required: true },
              { name: "items", type: "Array", required: true },
              { name: "gift", type: "Boolean", required: true },
              // The engine's own: never asked of the payload.
              { name: "subscriber.firstName", type: "String", required: true },
            ],
          },
        },
      ]);
      const message =
        "payload is missing required key(s) and type(s): order.id (Value), items (Array), gift (Boolean)";
      for (const payload of [{}, { order: { id: true }, items: "one", gift: 0 }, { order: "A-1" }]) {
        const res = await api.post("/v1/events/trigger", { name: required, to, payload });
        assertErrorBody(res, 400, {
          message: new RegExp(`^${message.replace(/[()]/g, "\\$&")}$`),
          path: "/v1/events/trigger",
          fields: ["payload.order.id", "payload.items", "payload.gift"],
        });
      }
      // Refused, nothing was written.
      assert.equal((await api.get("/v1/notifications")).json().data.length, 0);
      // An empty string and a number are values, an empty list is a list, false is a boolean.
      for (const id of ["", 17]) {
        const ok = await trigger(api, {
          name: required,
          to,
          payload: { order: { id }, items: [], gift: false },
        });
        assert.equal(ok.status, "processed");
      }
      // An inactive workflow runs nothing, and is not held to its variables.
      const inactive = await createWorkflow(ctx, tenant.dev.apiKey, tenant.dev.generalGroupId, {
        active: false,
        steps: [{ template: { type: "in_app", content: "x", variables: [{ name: "x", required: true }] } }],
      });
      const off = await trigger(api, { name: inactive.triggers[0].identifier, to });
      assert.equal(off.status, "trigger_not_active");

      const defaults = await workflow([
        {
          template: {
            type: "in_app",
            content: "{{greeting}} from {{team.name}} ({{team.size}})",
            variables: [
              { name: "greeting", type: "String", defaultValue: "Hello" },
              { name: "team.name", type: "String", defaultValue: "Tidings" },
              { name: "team.size", type: "String", defaultValue: "" },
            ],
          },
        },
      ]);
      const before = (await feedContents(api, to)).length;
      await trigger(api, { name: defaults, to, payload: { greeting: "Hi", team: { size: 3 } } });
      await trigger(api, { name: defaults, to });
      const feed = await feedContents(api, to);
      assert.deepEqual(feed.slice(0, feed.length - before), ["Hello from Tidings ()", "Hi from Tidings (3)"]);
    });

    test("messages: deleting a transaction's messages of one channel leaves the others; the activity filters by e-mail; details name their channel", async () => {
      const { tenant, api, workflow } = await setup();
      const integration = await api.post("/v1/integrations", {
        providerId: "nodemailer",
        channel: "email",
        active: true,
        credentials: {
          host: "127.0.0.1",
          port: String(sink.port),
          secure: false,
          ignoreTls: true,
          from: "team@example.com",
          senderName: "Team",
        },
      });
      assert.equal(integration.statusCode, 201, integration.body);
      const name = await workflow([
        { template: { type: "in_app", content: "Hi {{subscriber.firstName}}" } },
        { template: { type: "email", subject: "Hi", content: "<p>Hi {{subscriber.firstName}}</p>" } },
      ]);
      const ada = await createSubscriber(ctx, tenant.dev.apiKey, {
        firstName: "Ada",
        email: "ada@example.com",
      });
      const bob = await createSubscriber(ctx, tenant.dev.apiKey, {
        firstName: "Bob",
        email: "bob@example.com",
      });
      const { transactionId } = await trigger(api, { name, to: [ada.subscriberId, bob.subscriberId] });

      const channelsOf = async () => {
        const res = await api.get(`/v1/messages?transactionId=${transactionId}&limit=100`);
        assert.equal(res.statusCode, 200, res.body);
        return res
          .json()
          .data.map((m: { channel: string }) => m.channel)
          .sort();
      };
      assert.deepEqual(await channelsOf(), ["email", "email", "in_app", "in_app"]);
      const deleted = await api.delete(`/v1/messages/transaction/${transactionId}?channel=email`);
      assert.equal(deleted.statusCode, 204, deleted.body);
      assert.deepEqual(await channelsOf(), ["in_app", "in_app"]);
      assertErrorBody(await api.delete(`/v1/messages/transaction/${transactionId}?channel=email`), 404, {
        message: new RegExp(`^No messages of transaction ${transactionId} on email were found$`),
        path: `/v1/messages/transaction/${transactionId}`,
      });
      assertErrorBody(await api.delete(`/v1/messages/transaction/${transactionId}?channel=fax`), 400, {
        path: `/v1/messages/transaction/${transactionId}`,
        fields: ["channel"],
      });
      assert.equal((await api.delete(`/v1/messages/transaction/${transactionId}`)).statusCode, 204);
      assert.deepEqual(await channelsOf(), []);

      // The activity, by e-mail (exactly), alone or with subscriberIds (either matches).
      const byEmail = async (query: string) => {
        const res = await api.get(`/v1/notifications?${query}`);
        assert.equal(res.statusCode, 200, res.body);
        return res
          .json()
          .data.map((n: { subscriber: { subscriberId: string } }) => n.subscriber.subscriberId)
          .sort();
      };
      assert.deepEqual(await byEmail("emails=ada@example.com"), [ada.subscriberId]);
      assert.deepEqual(await byEmail("emails=ADA@example.com"), []);
      assert.deepEqual(await byEmail("emails=nobody@example.com"), []);
      assert.deepEqual(
        await byEmail(`emails=ada@example.com&subscriberIds=${bob.subscriberId}`),
        [ada.subscriberId, bob.subscriberId].sort(),
      );
      // `search`: any part of an e-mail address (any case), or a whole subscriberId.
      assert.deepEqual(await byEmail("search=ADA@EXAMPLE"), [ada.subscriberId]);
      assert.deepEqual(await byEmail(`search=${bob.subscriberId}`), [bob.subscriberId]);
      assert.deepEqual(await byEmail("search=%25"), []);
      assert.deepEqual(await byEmail("search=zzz-nothing"), []);
      // Another environment's subscriber with that address is not this environment's.
      const other = await ctx.tenant();
      assert.deepEqual(
        (await ctx.client(other.dev.apiKey).get("/v1/notifications?emails=ada@example.com")).json().data,
        [],
      );

      // Each execution detail names its job's channel, in the activity and on its own route.
      const [notification] = (await api.get(`/v1/notifications?subscriberIds=${ada.subscriberId}`)).json()
        .data;
      for (const job of notification.jobs as { type: string; executionDetails: { channel: string }[] }[]) {
        assert.ok(job.executionDetails.length > 0);
        for (const detail of job.executionDetails) assert.equal(detail.channel, job.type);
      }
      const details = await api.get(`/v1/execution-details?notificationId=${notification._id}`);
      assert.deepEqual([...new Set(details.json().data.map((d: { channel: string }) => d.channel))].sort(), [
        "email",
        "in_app",
      ]);
    });
  },
  { clock: () => new ManualClock() },
);
