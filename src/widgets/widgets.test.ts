// The inbox widget's protocol (docs/engine.md, "The inbox widget in real time") on both backends: sessions with and without HMAC,
// the Bearer routes acting for one subscriber alone, and the sockets' events, with socket.io-client
// against the listening app. Time is the app's ManualClock: a token expires when the test says so.
import assert from "node:assert/strict";
import { createHmac, randomBytes } from "node:crypto";
import type { AddressInfo } from "node:net";
import { test } from "node:test";
import fc from "fast-check";
import { io as connect } from "socket.io-client";
import { assertErrorBody, errorBodyProblem } from "../../test/error-body.ts";
import { createWorkflow, uniqueName } from "../../test/factories.ts";
import { type Client, forEachBackend, type TestContext } from "../../test/harness.ts";
import { poll } from "../../test/poll.ts";
import { drain } from "../../test/queue-helpers.ts";
import { ManualClock } from "../clock.ts";

/** The one error body, for the path the request went to. */
function refused(
  res: Awaited<ReturnType<TestContext["app"]["inject"]>>,
  status: number,
  expected: { message?: RegExp; fields?: string[] },
) {
  const path = (res.raw.req.url ?? "").split("?")[0] as string;
  assertErrorBody(res, status, { path, ...expected });
}

const hexId = () => randomBytes(12).toString("hex");
const hmac = (key: string, subscriberId: string) =>
  createHmac("sha256", key).update(subscriberId).digest("hex");
const START = Date.UTC(2026, 5, 1);
const WEEK_MS = 7 * 86_400_000;

interface Message {
  _id: string;
  content: string;
  seen: boolean;
  read: boolean;
  subscriberId: string;
  subscriber?: Record<string, unknown>;
  cta: { action?: { status: string } };
}

/** One Bearer request through the app (no socket needed). */
function widget(ctx: TestContext, token: string | undefined) {
  const send = (method: "GET" | "POST" | "PATCH" | "DELETE", url: string, body?: unknown) =>
    ctx.app.inject({
      method,
      url: `/v1/widgets${url}`,
      headers: {
        ...(token !== undefined ? { authorization: `Bearer ${token}` } : {}),
        ...(body !== undefined ? { "content-type": "application/json" } : {}),
      },
      ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
    });
  return {
    get: (url: string) => send("GET", url),
    post: (url: string, body: unknown = {}) => send("POST", url, body),
    patch: (url: string, body: unknown) => send("PATCH", url, body),
    delete: (url: string) => send("DELETE", url),
  };
}

async function identifierOf(api: Client): Promise<string> {
  const res = await api.get("/v1/environments/me");
  assert.equal(res.statusCode, 200, res.body);
  return res.json().data.identifier as string;
}

async function startSession(ctx: TestContext, body: Record<string, unknown>) {
  return ctx.app.inject({ method: "POST", url: "/v1/widgets/session/initialize", payload: body });
}

/** The app listening on a free port, once per backend (closed with the app). */
const listening = new WeakMap<object, Promise<string>>();
function urlOf(ctx: TestContext): Promise<string> {
  let url = listening.get(ctx.app);
  if (!url) {
    url = ctx.app.listen({ port: 0, host: "127.0.0.1" }).then(() => {
      const { port } = ctx.app.server.address() as AddressInfo;
      return `http://127.0.0.1:${port}`;
    });
    listening.set(ctx.app, url);
  }
  return url;
}

/** A socket that records every event it gets; resolves once connected, rejects with the refusal. */
async function openSocket(base: string, how: { auth?: unknown; query?: Record<string, string> }) {
  const socket = connect(base, {
    transports: ["websocket"],
    reconnection: false,
    forceNew: true,
    ...(how.auth !== undefined ? { auth: how.auth as Record<string, string> } : {}),
    ...(how.query ? { query: how.query } : {}),
  });
  const events: { name: string; data: Record<string, unknown> }[] = [];
  socket.onAny((name: string, data: Record<string, unknown>) => events.push({ name, data }));
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", () => resolve());
    socket.once("connect_error", (error) => {
      socket.close();
      reject(error);
    });
  });
  return { socket, events };
}

forEachBackend(
  "the inbox widget",
  (ctx) => {
    /** A Development tenant (HMAC off), an in-app workflow, and a session for a new subscriber. */
    async function setup() {
      const tenant = await ctx.tenant();
      const api = ctx.client(tenant.dev.apiKey);
      const workflow = await createWorkflow(ctx, tenant.dev.apiKey, tenant.dev.generalGroupId, {
        name: uniqueName("Widget workflow"),
        active: true,
        steps: [{ template: { type: "in_app", content: "Hello {{n}}" } }],
      });
      const applicationIdentifier = await identifierOf(api);
      const session = async (subscriberId = hexId()) => {
        const res = await startSession(ctx, { applicationIdentifier, subscriberId, firstName: "Ada" });
        assert.equal(res.statusCode, 201, res.body);
        return { subscriberId, token: res.json().data.token as string };
      };
      const trigger = async (subscriberId: string, n: number) => {
        const res = await api.post("/v1/events/trigger", {
          name: workflow.triggers[0].identifier,
          to: subscriberId,
          payload: { n },
        });
        assert.equal(res.statusCode, 201, res.body);
      };
      const feedOf = async (token: string) => {
        const res = await widget(ctx, token).get("/notifications/feed");
        assert.equal(res.statusCode, 200, res.body);
        return res.json().data as Message[];
      };
      /** Triggers n messages and waits until the feed holds them all. */
      const deliver = async (subscriberId: string, token: string, count: number) => {
        const before = (await feedOf(token)).length;
        for (let n = 0; n < count; n++) await trigger(subscriberId, n);
        return poll(
          () => feedOf(token),
          (feed) => feed.length === before + count,
          { what: "the messages" },
        );
      };
      return { tenant, api, applicationIdentifier, session, trigger, feedOf, deliver };
    }

    test("a session starts with the public identifier: the subscriber is upserted, the profile holds no credentials", async () => {
      const { api, applicationIdentifier, tenant } = await setup();
      const subscriberId = hexId();
      const res = await startSession(ctx, {
        applicationIdentifier,
        subscriberId,
        firstName: "Ada",
        email: "ada@example.com",
      });
      assert.equal(res.statusCode, 201, res.body);
      const { token, profile, expiresAt } = res.json().data;
      assert.match(token, /^[\w-]+\.[\w-]+\.[\w-]+$/);
      assert.equal(Date.parse(expiresAt), Math.floor((ctx.clock.now() + WEEK_MS) / 1000) * 1000);
      assert.deepEqual(Object.keys(profile).sort(), [
        "_id",
        "avatar",
        "email",
        "firstName",
        "lastName",
        "phone",
        "subscriberId",
      ]);
      assert.equal(profile.subscriberId, subscriberId);
      const stored = await api.get(`/v1/subscribers/${subscriberId}`);
      assert.equal(stored.json().data.firstName, "Ada");
      assert.equal(stored.json().data.email, "ada@example.com");
      // A second session keeps the subscriber; without a valid hash it changes nothing of it (anyone
      // with the public identifier could otherwise redirect its e-mail), with one only what it sends.
      const again = await startSession(ctx, {
        applicationIdentifier,
        subscriberId,
        lastName: "Lovelace",
        email: "mallory@example.com",
      });
      assert.equal(again.statusCode, 201, again.body);
      assert.equal(again.json().data.profile._id, profile._id);
      const unchanged = (await api.get(`/v1/subscribers/${subscriberId}`)).json().data;
      assert.equal(unchanged.email, "ada@example.com");
      assert.equal(unchanged.lastName, "");
      const wrong = await startSession(ctx, {
        applicationIdentifier,
        subscriberId,
        lastName: "Lovelace",
        hmacHash: "ab".repeat(32),
      });
      assert.equal(wrong.json().data.profile._id, profile._id);
      assert.equal((await api.get(`/v1/subscribers/${subscriberId}`)).json().data.lastName, "");
      const signed = await startSession(ctx, {
        applicationIdentifier,
        subscriberId,
        lastName: "Lovelace",
        hmacHash: hmac(tenant.dev.apiKey, subscriberId),
      });
      assert.equal(signed.json().data.profile._id, profile._id);
      const after = (await api.get(`/v1/subscribers/${subscriberId}`)).json().data;
      assert.equal(after.firstName, "Ada");
      assert.equal(after.lastName, "Lovelace");

      refused(await startSession(ctx, { applicationIdentifier: "nope", subscriberId }), 400, {
        message: /applicationIdentifier/,
      });
      refused(await startSession(ctx, { applicationIdentifier }), 400, { fields: ["subscriberId"] });
    });

    test("with HMAC on (Production), only the hash of the subscriberId keyed with the environment's live key opens a session", async () => {
      const { tenant } = await setup();
      const prod = ctx.client(tenant.prod.apiKey);
      const applicationIdentifier = await identifierOf(prod);
      assert.equal((await prod.get("/v1/environments/me")).json().data.hmac, true);
      const subscriberId = hexId();
      const open = (hmacHash?: string) =>
        startSession(ctx, {
          applicationIdentifier,
          subscriberId,
          ...(hmacHash !== undefined ? { hmacHash } : {}),
        });

      refused(await open(), 400, { message: /hmacHash is required/ });
      refused(await open(""), 400, { message: /hmacHash is required/ });
      refused(await open("00".repeat(32)), 400, { message: /does not match/ });
      refused(await open(hmac(tenant.dev.apiKey, subscriberId)), 400, { message: /does not match/ });
      refused(await open(hmac(tenant.prod.apiKey, "someone-else")), 400, { message: /does not match/ });
      const good = await open(hmac(tenant.prod.apiKey, subscriberId));
      assert.equal(good.statusCode, 201, good.body);
      assert.ok(!good.body.includes(tenant.prod.apiKey), "the key never reaches the browser");
      assert.equal((await open(hmac(tenant.prod.apiKey, subscriberId).toUpperCase())).statusCode, 201);
      // No refused attempt made the subscriber.
      const other = hexId();
      await startSession(ctx, { applicationIdentifier, subscriberId: other, hmacHash: "ab".repeat(32) });
      assert.equal((await prod.get(`/v1/subscribers/${other}`)).statusCode, 404);

      // A regenerated key: the new key's hash opens sessions, the revoked key's no longer does.
      const regenerated = await prod.post("/v1/environments/api-keys/regenerate");
      assert.equal(regenerated.statusCode, 201, regenerated.body);
      const newKey = regenerated.json().data[0].key as string;
      refused(await open(hmac(tenant.prod.apiKey, subscriberId)), 400, { message: /does not match/ });
      assert.equal((await open(hmac(newKey, subscriberId))).statusCode, 201);

      // HMAC off (Development): no hash needed.
      const dev = await startSession(ctx, {
        applicationIdentifier: await identifierOf(ctx.client(tenant.dev.apiKey)),
        subscriberId,
      });
      assert.equal(dev.statusCode, 201, dev.body);
    });

    test("the Bearer routes: feed, counts, marks, actions, deletes, organization, preferences, usage", async () => {
      const { session, deliver } = await setup();
      const { subscriberId, token } = await session();
      const w = widget(ctx, token);
      const feed = await deliver(subscriberId, token, 3);
      assert.deepEqual(feed.map((m) => m.content).sort(), ["Hello 0", "Hello 1", "Hello 2"]);
      for (const message of feed) {
        assert.equal(message.subscriberId, subscriberId);
        assert.deepEqual(Object.keys(message.subscriber ?? {}).sort(), [
          "_id",
          "avatar",
          "email",
          "firstName",
          "lastName",
          "phone",
          "subscriberId",
        ]);
      }
      const count = async (path: string) => (await w.get(path)).json().data.count as number;
      assert.equal(await count("/notifications/unseen?limit=100"), 3);
      assert.equal(await count("/notifications/unseen?limit=2"), 2);
      assert.equal(await count("/notifications/unread"), 3);
      assert.equal(await count("/notifications/count?seen=false"), 3);
      const page = (await w.get("/notifications/feed?page=1&limit=2")).json();
      assert.equal(page.data.length, 1);
      assert.equal(page.totalCount, 3);

      const [first, second, third] = feed as [Message, Message, Message];
      const marked = await w.post("/messages/mark-as", { messageId: first._id, markAs: "read" });
      assert.equal(marked.statusCode, 201, marked.body);
      assert.equal(marked.json().data[0].read, true);
      assert.equal(await count("/notifications/unread"), 2);
      assert.equal(await count("/notifications/unseen"), 2);
      const legacy = await w.post("/messages/markAs", { messageId: [second._id], mark: { seen: true } });
      assert.equal(legacy.statusCode, 201, legacy.body);
      assert.equal(await count("/notifications/unseen"), 1);
      assert.equal((await w.post("/messages/seen", {})).json().data, 1);
      assert.equal(await count("/notifications/unseen"), 0);
      assert.equal((await w.post("/messages/read")).json().data, 2);
      assert.equal(await count("/notifications/unread"), 0);
      assert.equal(await count("/notifications/count?read=true"), 3);

      const action = await w.post(`/messages/${third._id}/actions/primary`, {
        executedType: "primary",
        status: "done",
        payload: { ok: 1 },
      });
      assert.equal(action.statusCode, 201, action.body);
      assert.equal(action.json().data.cta.action.status, "done");
      refused(
        await w.post(`/messages/${third._id}/actions/primary`, { executedType: "secondary", status: "done" }),
        400,
        { message: /executedType/ },
      );

      assert.equal((await w.delete(`/messages/${first._id}`)).statusCode, 200);
      refused(await w.delete(`/messages/${first._id}`), 404, {});
      assert.equal((await w.post("/messages/bulk/delete", { messageIds: [second._id] })).statusCode, 200);
      assert.deepEqual(
        (await w.get("/notifications/feed")).json().data.map((m: Message) => m._id),
        [third._id],
      );
      assert.equal((await w.delete("/messages")).statusCode, 200);
      assert.equal((await w.get("/notifications/feed")).json().totalCount, 0);

      assert.equal((await w.get("/notifications/feed?feedIdentifier=tab")).json().totalCount, 0);
      refused(await w.get("/notifications/feed?limit=1000"), 400, { fields: ["limit"] });

      const organization = await w.get("/organization");
      assert.equal(organization.statusCode, 200, organization.body);
      assert.equal(organization.json().data.name, "Test organization");

      const preferences = await w.get("/preferences");
      assert.equal(preferences.statusCode, 200, preferences.body);
      const entry = preferences.json().data[0];
      assert.ok(entry.template._id);
      const changed = await w.patch(`/preferences/${entry.template._id}`, {
        channel: { type: "in_app", enabled: false },
      });
      assert.equal(changed.statusCode, 200, changed.body);
      assert.equal(changed.json().data.preference.channels.in_app, false);
      const global = await w.patch("/preferences", {
        enabled: true,
        preferences: [{ channelType: "email", type: "email", enabled: false }],
      });
      assert.equal(global.statusCode, 200, global.body);
      assert.equal(global.json().data.preference.channels.email, false);
      assert.equal((await w.get("/preferences/global")).json().data[0].preference.channels.email, false);

      const usage = await w.post("/usage/log", { name: "[Widget] - Notification Click", payload: {} });
      assert.equal(usage.statusCode, 201, usage.body);
    });

    test("a token acts for its subscriber alone: another's messages are neither read, marked, acted on nor deleted", async () => {
      const { session, deliver } = await setup();
      const alice = await session();
      const bob = await session();
      const [bobs] = (await deliver(bob.subscriberId, bob.token, 1)) as [Message];
      await deliver(alice.subscriberId, alice.token, 1);
      const w = widget(ctx, alice.token);
      const feed = (await w.get("/notifications/feed")).json().data as Message[];
      assert.deepEqual(
        feed.map((m) => m.subscriberId),
        [alice.subscriberId],
      );
      assert.deepEqual(
        (await w.post("/messages/mark-as", { messageId: bobs._id, markAs: "read" })).json().data,
        [],
      );
      refused(await w.post(`/messages/${bobs._id}/actions/primary`, { status: "done" }), 404, {});
      refused(await w.delete(`/messages/${bobs._id}`), 404, {});
      await w.post("/messages/bulk/delete", { messageIds: [bobs._id] });
      await w.post("/messages/read");
      await w.delete("/messages");
      const bobsFeed = (await widget(ctx, bob.token).get("/notifications/feed")).json().data as Message[];
      assert.equal(bobsFeed.length, 1, "Bob's message is still there");
      assert.equal(bobsFeed[0]?.read, false, "and unread");
    });

    test("every session route refuses a missing, malformed, forged or expired token, and an API key, with a 401", async () => {
      const { session, tenant } = await setup();
      const { token } = await session();
      const paths = (ctx.app.swagger() as { paths: Record<string, Record<string, unknown>> }).paths;
      const routes = Object.entries(paths)
        .filter(([path]) => path.startsWith("/v1/widgets/") && path !== "/v1/widgets/session/initialize")
        .flatMap(([path, ops]) =>
          Object.keys(ops).map((method) => ({
            method: method.toUpperCase() as "GET",
            url: path
              .replace("{messageId}", hexId())
              .replace("{type}", "primary")
              .replace("{level}", "global")
              .replace("{templateId}", hexId()),
          })),
        );
      assert.ok(routes.length >= 18, `the widget routes: ${routes.length}`);
      const [header, body] = token.split(".") as [string, string];
      const forged = `${header}.${body}.${Buffer.alloc(32, 1).toString("base64url")}`;
      const cases: [string, Record<string, string>, RegExp][] = [
        ["no header", {}, /Missing Authorization/],
        ["an API key", { authorization: `ApiKey ${tenant.dev.apiKey}` }, /Bearer/],
        ["not a token", { authorization: "Bearer nonsense" }, /invalid or has expired/],
        ["a forged signature", { authorization: `Bearer ${forged}` }, /invalid or has expired/],
      ];
      for (const route of routes) {
        for (const [what, headers, message] of cases) {
          const res = await ctx.app.inject({ ...route, headers });
          refused(res, 401, { message });
          assert.ok(
            !res.body.includes(tenant.dev.apiKey),
            `${route.method} ${route.url} with ${what} echoes no key`,
          );
        }
      }
      // Good until its week is out, by the app's clock.
      assert.equal((await widget(ctx, token).get("/notifications/unseen")).statusCode, 200);
      ctx.clock.advance(WEEK_MS + 1000);
      refused(await widget(ctx, token).get("/notifications/unseen"), 401, { message: /expired/ });
    });

    test("any page may call the widget routes (CORS), and only those: the API keeps to CORS_ORIGINS", async () => {
      const { session } = await setup();
      const { token } = await session();
      const origin = "https://shop.example";
      const preflight = await ctx.app.inject({
        method: "OPTIONS",
        url: "/v1/widgets/notifications/feed",
        headers: {
          origin,
          "access-control-request-method": "GET",
          "access-control-request-headers": "authorization,content-type",
        },
      });
      assert.equal(preflight.statusCode, 204, preflight.body);
      assert.equal(preflight.headers["access-control-allow-origin"], origin);
      assert.match(String(preflight.headers["access-control-allow-headers"]), /Authorization/);
      assert.equal(preflight.headers["access-control-allow-credentials"], undefined);
      const feed = await ctx.app.inject({
        method: "GET",
        url: "/v1/widgets/notifications/feed",
        headers: { origin, authorization: `Bearer ${token}` },
      });
      assert.equal(feed.statusCode, 200);
      assert.equal(feed.headers["access-control-allow-origin"], origin);
      // The API key's routes: no CORS unless CORS_ORIGINS names the origin (it names none here).
      const api = await ctx.app.inject({
        method: "OPTIONS",
        url: "/v1/workflows",
        headers: { origin, "access-control-request-method": "GET" },
      });
      assert.equal(api.headers["access-control-allow-origin"], undefined);
      refused(api, 404, {});
    });

    test("hostile input to every widget route (random JSON bodies, query strings, ids): a 4xx in the one error body, never a 5xx", async () => {
      const { session, applicationIdentifier } = await setup();
      const { token } = await session();
      const paths = (ctx.app.swagger() as { paths: Record<string, Record<string, unknown>> }).paths;
      const routes = Object.entries(paths)
        .filter(([path]) => path.startsWith("/v1/widgets/"))
        .flatMap(([path, ops]) => Object.keys(ops).map((method) => ({ path, method: method.toUpperCase() })));
      const runs = 25;
      let sent = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(...routes),
          fc.oneof(fc.jsonValue(), fc.string(), fc.constant(undefined)),
          fc.dictionary(fc.string({ maxLength: 12 }), fc.string({ maxLength: 40 }), { maxKeys: 3 }),
          fc.oneof(fc.stringMatching(/^[0-9a-f]{24}$/), fc.string({ maxLength: 30 })),
          async (route, body, query, id) => {
            const segment = encodeURIComponent(id) || "x";
            const path = route.path.replace(/\{(messageId|type|level|templateId)\}/g, segment);
            const url = `${path}?${new URLSearchParams(query)}`;
            const initialize = route.path.endsWith("/session/initialize");
            const payload =
              initialize && body !== null && typeof body === "object" && !Array.isArray(body)
                ? { applicationIdentifier, ...body }
                : body;
            const res = await ctx.app.inject({
              method: route.method as "GET",
              url,
              headers: {
                authorization: `Bearer ${token}`,
                ...(payload !== undefined ? { "content-type": "application/json" } : {}),
              },
              ...(payload !== undefined ? { payload: JSON.stringify(payload) } : {}),
            });
            sent++;
            assert.ok(
              res.statusCode < 500,
              `${route.method} ${url} ${JSON.stringify(payload)}: ${res.statusCode} ${res.body}`,
            );
            if (res.statusCode >= 400) {
              const problem = errorBodyProblem(res.statusCode, res.headers["content-type"], res.body);
              assert.equal(problem, undefined, `${route.method} ${url}: ${problem}: ${res.body}`);
            }
          },
        ),
        { numRuns: runs * routes.length },
      );
      assert.equal(sent, runs * routes.length);
    });

    test("a deleted subscriber's token is refused, though signed and unexpired", async () => {
      const { api, session } = await setup();
      const { subscriberId, token } = await session();
      assert.equal((await api.delete(`/v1/subscribers/${subscriberId}`)).statusCode, 200);
      refused(await widget(ctx, token).get("/notifications/feed"), 401, { message: /no longer exists/ });
      // Made again with the same subscriberId, it is another subscriber: the old token stays refused.
      await api.post("/v1/subscribers", { subscriberId });
      refused(await widget(ctx, token).get("/notifications/feed"), 401, { message: /no longer exists/ });
    });

    test("sockets: a new message and every count change reach the subscriber's sockets, and no one else's", async () => {
      const { api, session, trigger, feedOf } = await setup();
      const base = await urlOf(ctx);
      const alice = await session();
      const bob = await session();
      const a1 = await openSocket(base, { auth: { token: alice.token } });
      const a2 = await openSocket(base, { query: { token: alice.token } });
      const b = await openSocket(base, { auth: { token: bob.token } });
      try {
        await trigger(alice.subscriberId, 1);
        for (const s of [a1, a2]) {
          const received = await poll(
            () => s.events.find((e) => e.name === "notification_received"),
            (e) => e !== undefined,
            { what: "notification_received" },
          );
          const message = received?.data.message as Message;
          assert.equal(message.content, "Hello 1");
          assert.equal(message.subscriberId, alice.subscriberId);
          await poll(
            () => s.events.filter((e) => e.name === "unseen_count_changed").at(-1)?.data.unseenCount,
            (n) => n === 1,
            { what: "unseen 1" },
          );
          await poll(
            () => s.events.filter((e) => e.name === "unread_count_changed").at(-1)?.data.unreadCount,
            (n) => n === 1,
            { what: "unread 1" },
          );
        }
        const [message] = (await feedOf(alice.token)) as [Message];
        // Marked through the widget, then through the API key's route, then deleted: each is told.
        await widget(ctx, alice.token).post("/messages/mark-as", { messageId: message._id, markAs: "seen" });
        await poll(
          () => a1.events.filter((e) => e.name === "unseen_count_changed").at(-1)?.data.unseenCount,
          (n) => n === 0,
          { what: "unseen 0" },
        );
        await api.post(`/v1/subscribers/${alice.subscriberId}/messages/mark-as`, {
          messageId: message._id,
          markAs: "read",
        });
        await poll(
          () => a2.events.filter((e) => e.name === "unread_count_changed").at(-1)?.data.unreadCount,
          (n) => n === 0,
          { what: "unread 0" },
        );
        await trigger(alice.subscriberId, 2);
        await poll(
          () => a1.events.filter((e) => e.name === "notification_received").length,
          (n) => n === 2,
          { what: "the second message" },
        );
        const changes = a1.events.filter((e) => e.name === "unseen_count_changed").length;
        await api.delete(`/v1/messages/${message._id}`);
        await poll(
          () => a1.events.filter((e) => e.name === "unseen_count_changed").length,
          (n) => n > changes,
          { what: "a count after the delete" },
        );
        assert.deepEqual(b.events, [], "Bob's socket heard nothing of Alice's inbox");
      } finally {
        for (const s of [a1, a2, b]) s.socket.close();
      }
    });

    test("sockets: delays falling due together (run in one transaction) tell each subscriber's sockets of its own message only", async () => {
      const { tenant, api, session } = await setup();
      const workflow = await createWorkflow(ctx, tenant.dev.apiKey, tenant.dev.generalGroupId, {
        name: uniqueName("Delayed widget workflow"),
        active: true,
        steps: [
          { template: { type: "delay" }, metadata: { type: "regular", amount: 5, unit: "minutes" } },
          { template: { type: "in_app", content: "Later for {{n}}" } },
        ],
      });
      const base = await urlOf(ctx);
      const people = await Promise.all(
        ["alice", "bob", "carol"].map(async (n) => ({ n, ...(await session()) })),
      );
      const sockets = await Promise.all(people.map((p) => openSocket(base, { auth: { token: p.token } })));
      try {
        const transactions = [];
        for (const p of people) {
          const res = await api.post("/v1/events/trigger", {
            name: workflow.triggers[0].identifier,
            to: p.subscriberId,
            payload: { n: p.n },
          });
          assert.equal(res.statusCode, 201, res.body);
          transactions.push(res.json().data.transactionId as string);
        }
        for (const tx of transactions)
          await poll(
            async () =>
              (await api.get(`/v1/notifications?transactionId=${tx}`)).json().data[0]?.jobs?.[0]?.status,
            (status) => status === "delayed",
            { what: "the delay set" },
          );
        ctx.clock.advance(5 * 60_000);
        for (const [i, p] of people.entries()) {
          const received = await poll(
            () => sockets[i]?.events.filter((e) => e.name === "notification_received") ?? [],
            (events) => events.length > 0,
            { what: `${p.n}'s notification_received` },
          );
          assert.deepEqual(
            received.map((e) => (e.data.message as Message).content),
            [`Later for ${p.n}`],
          );
        }
        await drain(ctx);
        for (const [i, p] of people.entries())
          assert.deepEqual(
            sockets[i]?.events
              .filter((e) => e.name === "notification_received")
              .map((e) => (e.data.message as Message).subscriberId),
            [p.subscriberId],
            `${p.n}'s sockets heard of its own message only, once`,
          );
      } finally {
        for (const s of sockets) s.socket.close();
      }
    });

    test("sockets: a missing, forged or expired token is refused; a subscriber's sockets are capped; a session's socket closes when it expires", async () => {
      const { session } = await setup();
      const base = await urlOf(ctx);
      const { token } = await session();
      const [header, body] = token.split(".") as [string, string];
      const forged = `${header}.${body}.${Buffer.alloc(32, 1).toString("base64url")}`;
      await assert.rejects(openSocket(base, {}), /Missing token/);
      await assert.rejects(openSocket(base, { auth: { token: forged } }), /invalid or has expired/);
      await assert.rejects(openSocket(base, { auth: { token: 42 } }), /Missing token/);

      // Ten at once (the default cap) are let in, the eleventh is refused, and a place freed is free.
      const sockets = await Promise.allSettled(
        Array.from({ length: 11 }, () => openSocket(base, { auth: { token } })),
      );
      const opened = sockets.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
      const refused = sockets.flatMap((s) => (s.status === "rejected" ? [s.reason as Error] : []));
      try {
        assert.equal(opened.length, 10);
        assert.equal(refused.length, 1);
        assert.match(refused[0]?.message ?? "", /Too many connections/);
        opened.pop()?.socket.close();
        await poll(
          () =>
            openSocket(base, { auth: { token } }).then(
              (s) => s,
              () => undefined,
            ),
          (s) => s !== undefined,
          { what: "a freed place" },
        ).then((s) => s && opened.push(s));

        // The week passes: every socket of the session is closed, and the token no longer connects.
        const closed = opened.map(
          (s) => new Promise<string>((resolve) => s.socket.once("disconnect", (reason) => resolve(reason))),
        );
        ctx.clock.advance(WEEK_MS);
        assert.deepEqual([...new Set(await Promise.all(closed))], ["io server disconnect"]);
        await assert.rejects(openSocket(base, { auth: { token } }), /invalid or has expired/);
      } finally {
        for (const s of opened) s.socket.close();
      }
    });
  },
  { clock: () => new ManualClock(START) },
);
