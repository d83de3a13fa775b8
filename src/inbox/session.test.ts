// The session of Novu's current inbox (docs/engine.md, "The inbox") on both backends, through
// @novu/js itself where the client is what matters: HMAC as the widget checks it, the profile
// applied only with a valid hash, the answer the client reads, and the token it then carries.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";
import { io as connect } from "socket.io-client";
import { assertErrorBody } from "../../test/error-body.ts";
import { createWorkflow, uniqueName } from "../../test/factories.ts";
import { forEachBackend, TEST_SECRET_KEY, type TestContext } from "../../test/harness.ts";
import { applicationIdentifierOf, baseUrlOf, openInbox, subscriberHash } from "../../test/inbox-client.ts";
import { poll } from "../../test/poll.ts";
import { buildApp } from "../app.ts";
import { ManualClock } from "../clock.ts";
import { loadConfig } from "../config.ts";

const START = Date.UTC(2026, 5, 1);
const WEEK_MS = 7 * 86_400_000;
const hexId = () => randomBytes(12).toString("hex");

function startSession(ctx: TestContext, body: unknown, headers: Record<string, string> = {}) {
  return ctx.app.inject({
    method: "POST",
    url: "/v1/inbox/session",
    headers: { "content-type": "application/json", ...headers },
    payload: JSON.stringify(body),
  });
}

forEachBackend(
  "the inbox session (POST /v1/inbox/session)",
  (ctx) => {
    async function setup() {
      const tenant = await ctx.tenant();
      const dev = ctx.client(tenant.dev.apiKey);
      const prod = ctx.client(tenant.prod.apiKey);
      return {
        tenant,
        dev,
        prod,
        devIdentifier: await applicationIdentifierOf(dev),
        prodIdentifier: await applicationIdentifierOf(prod),
      };
    }

    test("@novu/js starts a session: the token, the unread counts by severity, the snooze limit, development mode", async () => {
      const { tenant, dev, devIdentifier, prodIdentifier } = await setup();
      const subscriberId = hexId();
      // A message waiting before the session starts: the answer counts it.
      const workflow = await createWorkflow(ctx, tenant.dev.apiKey, tenant.dev.generalGroupId, {
        name: uniqueName("Session workflow"),
        active: true,
        steps: [{ template: { type: "in_app", content: "Hello" } }],
      });
      await dev.post("/v1/subscribers", { subscriberId });
      const triggered = await dev.post("/v1/events/trigger", {
        name: workflow.triggers[0].identifier,
        to: subscriberId,
      });
      assert.equal(triggered.statusCode, 201, triggered.body);
      await poll(
        async () => (await dev.get(`/v1/subscribers/${subscriberId}/notifications/feed`)).json().totalCount,
        (n) => n === 1,
        { what: "the message", limitMs: 10_000 },
      );

      const inbox = await openInbox(ctx, {
        applicationIdentifier: devIdentifier,
        subscriber: { subscriberId },
      });
      try {
        assert.equal(inbox.error, undefined);
        const session = inbox.session;
        assert.ok(session);
        assert.match(session.token, /^[\w-]+\.[\w-]+\.[\w-]+$/);
        assert.deepEqual(session.unreadCount, {
          total: 1,
          severity: { high: 0, medium: 0, low: 0, none: 1 },
        });
        assert.equal(session.totalUnreadCount, 1);
        assert.equal(session.removeNovuBranding, false);
        assert.equal(session.isDevelopmentMode, true);
        assert.equal(session.maxSnoozeDurationHours, 2160);
        assert.equal(session.applicationIdentifier, devIdentifier);
      } finally {
        await inbox.close();
      }

      // Production asks for the hash; its sessions are not development mode.
      const prodSubscriber = hexId();
      const prodInbox = await openInbox(ctx, {
        applicationIdentifier: prodIdentifier,
        subscriber: { subscriberId: prodSubscriber },
        subscriberHash: subscriberHash(tenant.prod.apiKey, prodSubscriber),
      });
      assert.equal(prodInbox.session?.isDevelopmentMode, false);
      assert.equal(prodInbox.session?.unreadCount.total, 0);
    });

    test("with HMAC on, a missing or wrong subscriberHash is refused (400) and makes no subscriber; the right one, any case, opens", async () => {
      const { tenant, prod, prodIdentifier } = await setup();
      const subscriberId = hexId();
      const open = (hash?: string | null) =>
        startSession(ctx, {
          applicationIdentifier: prodIdentifier,
          subscriber: { subscriberId, firstName: "Ada" },
          ...(hash !== undefined ? { subscriberHash: hash } : {}),
        });
      const path = "/v1/inbox/session";
      assertErrorBody(await open(), 400, { path, message: /^subscriberHash is required/ });
      assertErrorBody(await open(null), 400, { path, message: /^subscriberHash is required/ });
      assertErrorBody(await open(""), 400, { path, message: /^subscriberHash is required/ });
      assertErrorBody(await open("00".repeat(32)), 400, { path, message: /does not match/ });
      assertErrorBody(await open(subscriberHash(tenant.dev.apiKey, subscriberId)), 400, {
        path,
        message: /does not match/,
      });
      assertErrorBody(await open(subscriberHash(tenant.prod.apiKey, "someone-else")), 400, {
        path,
        message: /does not match/,
      });
      assert.equal((await prod.get(`/v1/subscribers/${subscriberId}`)).statusCode, 404, "no subscriber made");

      const good = await open(subscriberHash(tenant.prod.apiKey, subscriberId));
      assert.equal(good.statusCode, 201, good.body);
      assert.ok(!good.body.includes(tenant.prod.apiKey), "the key never reaches the browser");
      assert.equal(
        (await open(subscriberHash(tenant.prod.apiKey, subscriberId).toUpperCase())).statusCode,
        201,
      );
      assert.equal((await prod.get(`/v1/subscribers/${subscriberId}`)).json().data.firstName, "Ada");

      // The client surfaces the refusal as the session's error, with the server's status and message.
      const refused = await openInbox(ctx, {
        applicationIdentifier: prodIdentifier,
        subscriber: { subscriberId: hexId() },
        subscriberHash: "ab".repeat(32),
      });
      assert.equal(refused.session, undefined);
      assert.equal(refused.error?.status, 400);
      assert.match(String(refused.error?.body?.message), /does not match/);
      const listed = await refused.novu.notifications.list();
      assert.ok(listed.error, "nothing is fetched without a session");
    });

    test("the profile fields change the subscriber only with a valid hash, HMAC on or off", async () => {
      const { tenant, dev, devIdentifier } = await setup();
      const subscriberId = hexId();
      const profile = {
        firstName: "Grace",
        lastName: "Hopper",
        email: "grace@example.com",
        phone: "+15555550100",
        avatar: "https://example.com/g.png",
        locale: "en-US",
        timezone: "Europe/Paris",
        data: { team: "compilers" },
      };
      const stored = async () => (await dev.get(`/v1/subscribers/${subscriberId}`)).json().data;

      // HMAC off, no hash: the subscriber is made, its profile left alone.
      const bare = await openInbox(ctx, {
        applicationIdentifier: devIdentifier,
        subscriber: { subscriberId, ...profile },
      });
      assert.ok(bare.session);
      assert.deepEqual([(await stored()).firstName, (await stored()).timezone], ["", ""]);
      // A wrong hash is not refused where HMAC is off, and changes nothing either.
      const wrong = await startSession(ctx, {
        applicationIdentifier: devIdentifier,
        subscriber: { subscriberId, ...profile },
        subscriberHash: "cd".repeat(32),
      });
      assert.equal(wrong.statusCode, 201, wrong.body);
      assert.deepEqual([(await stored()).email, (await stored()).timezone], ["", ""]);

      // The right hash applies every field the subscriber keeps.
      const verified = await openInbox(ctx, {
        applicationIdentifier: devIdentifier,
        subscriber: { subscriberId, ...profile },
        subscriberHash: subscriberHash(tenant.dev.apiKey, subscriberId),
      });
      assert.ok(verified.session);
      const after = await stored();
      assert.deepEqual(
        {
          firstName: after.firstName,
          lastName: after.lastName,
          email: after.email,
          phone: after.phone,
          avatar: after.avatar,
          locale: after.locale,
          timezone: after.timezone,
          data: after.data,
        },
        {
          firstName: "Grace",
          lastName: "Hopper",
          email: "grace@example.com",
          phone: "+15555550100",
          avatar: "https://example.com/g.png",
          locale: "en-US",
          timezone: "Europe/Paris",
          data: { team: "compilers" },
        },
      );
      // A zone this runtime does not know (a browser may report `Etc/Unknown`) is left out, the rest
      // applied; null clears the zone, as it clears the other fields.
      const hash = subscriberHash(tenant.dev.apiKey, subscriberId);
      const unknownZone = await openInbox(ctx, {
        applicationIdentifier: devIdentifier,
        subscriber: { subscriberId, firstName: "Amazing Grace", timezone: "Etc/Unknown" },
        subscriberHash: hash,
      });
      assert.ok(unknownZone.session, JSON.stringify(unknownZone.error));
      assert.deepEqual(
        [(await stored()).firstName, (await stored()).timezone],
        ["Amazing Grace", "Europe/Paris"],
      );
      const cleared = await startSession(ctx, {
        applicationIdentifier: devIdentifier,
        subscriber: { subscriberId, timezone: null },
        subscriberHash: hash,
      });
      assert.equal(cleared.statusCode, 201, cleared.body);
      assert.equal((await stored()).timezone, "");
      // A bad field is a 400 naming it, checked only when it would be applied.
      const bad = await startSession(ctx, {
        applicationIdentifier: devIdentifier,
        subscriber: { subscriberId, email: "not an email" },
        subscriberHash: subscriberHash(tenant.dev.apiKey, subscriberId),
      });
      assertErrorBody(bad, 400, { path: "/v1/inbox/session", fields: ["email"] });
    });

    test("defaultSchedule: a subscriber the session makes takes it; one that exists, only with a valid hash and without a schedule of its own", async () => {
      const { tenant, devIdentifier, dev } = await setup();
      const fridays = {
        isEnabled: true,
        weeklySchedule: { friday: { isEnabled: true, hours: [{ start: "09:00 AM", end: "05:00 PM" }] } },
      };
      const mornings = {
        isEnabled: false,
        weeklySchedule: { monday: { isEnabled: true, hours: [{ start: "08:00 AM", end: "12:00 PM" }] } },
      };
      /** The subscriber's schedule as its own inbox reads it (undefined: none). */
      const scheduleOf = async (inbox: Awaited<ReturnType<typeof openInbox>>) => {
        const { data, error } = await inbox.novu.preferences.schedule.get();
        assert.equal(error, undefined);
        return data?.isEnabled === undefined
          ? undefined
          : { isEnabled: data.isEnabled, weeklySchedule: data.weeklySchedule };
      };
      const open = (
        subscriberId: string,
        options: { hash?: boolean; defaultSchedule?: Record<string, unknown> },
      ) =>
        openInbox(ctx, {
          applicationIdentifier: devIdentifier,
          subscriber: { subscriberId },
          ...(options.hash ? { subscriberHash: subscriberHash(tenant.dev.apiKey, subscriberId) } : {}),
          ...(options.defaultSchedule ? { defaultSchedule: options.defaultSchedule } : {}),
          useCache: false,
        });

      // Made by the session, without a hash: the page's schedule is its first.
      const fresh = hexId();
      const made = await open(fresh, { defaultSchedule: fridays });
      try {
        assert.ok(made.session, JSON.stringify(made.error));
        assert.deepEqual(await scheduleOf(made), fridays);
      } finally {
        await made.close();
      }

      // Already there: without a hash nothing changes; with one, the page's schedule is set.
      const existing = hexId();
      assert.equal((await dev.post("/v1/subscribers", { subscriberId: existing })).statusCode, 201);
      const unverified = await open(existing, { defaultSchedule: fridays });
      try {
        assert.ok(unverified.session, JSON.stringify(unverified.error));
        assert.equal(await scheduleOf(unverified), undefined);
      } finally {
        await unverified.close();
      }
      const verified = await open(existing, {
        hash: true,
        defaultSchedule: { weeklySchedule: fridays.weeklySchedule },
      });
      try {
        assert.ok(verified.session, JSON.stringify(verified.error));
        assert.deepEqual(await scheduleOf(verified), fridays, "isEnabled left out: on");
        // The subscriber's own choice wins over any page's default from then on.
        const own = await verified.novu.preferences.schedule.update(mornings);
        assert.equal(own.error, undefined);
      } finally {
        await verified.close();
      }
      const again = await open(existing, { hash: true, defaultSchedule: fridays });
      try {
        assert.deepEqual(await scheduleOf(again), mornings);
      } finally {
        await again.close();
      }

      // A schedule that is not one is a 400 naming the field, and makes no subscriber.
      const refusedId = hexId();
      const refused = await startSession(ctx, {
        applicationIdentifier: devIdentifier,
        subscriber: { subscriberId: refusedId },
        defaultSchedule: {
          isEnabled: true,
          weeklySchedule: { monday: { isEnabled: true, hours: [{ start: "17:00", end: "18:00" }] } },
        },
      });
      assertErrorBody(refused, 400, {
        path: "/v1/inbox/session",
        fields: [
          "defaultSchedule.weeklySchedule.monday.hours[0].start",
          "defaultSchedule.weeklySchedule.monday.hours[0].end",
        ],
      });
      assert.equal((await dev.get(`/v1/subscribers/${refusedId}`)).statusCode, 404, "no subscriber made");
      const shapeless = await startSession(ctx, {
        applicationIdentifier: devIdentifier,
        subscriber: { subscriberId: refusedId },
        defaultSchedule: { weeklySchedule: { someday: { isEnabled: true } } },
      });
      assert.equal(shapeless.statusCode, 400, shapeless.body);
      assert.equal((await dev.get(`/v1/subscribers/${refusedId}`)).statusCode, 404, "no subscriber made");
    });

    test("older clients name the subscriber at the top; a body without one, or with an unknown identifier, is a 400", async () => {
      const { dev, devIdentifier } = await setup();
      const subscriberId = hexId();
      const older = await startSession(ctx, { applicationIdentifier: devIdentifier, subscriberId });
      assert.equal(older.statusCode, 201, older.body);
      assert.equal((await dev.get(`/v1/subscribers/${subscriberId}`)).statusCode, 200);
      const path = "/v1/inbox/session";
      assertErrorBody(await startSession(ctx, { applicationIdentifier: devIdentifier }), 400, {
        path,
        fields: ["subscriber.subscriberId"],
      });
      assertErrorBody(
        await startSession(ctx, { applicationIdentifier: devIdentifier, subscriber: { subscriberId: "" } }),
        400,
        { path, fields: ["subscriber.subscriberId"] },
      );
      assertErrorBody(
        await startSession(ctx, { applicationIdentifier: "nope", subscriber: { subscriberId } }),
        400,
        { path, message: /applicationIdentifier/ },
      );
      assertErrorBody(
        await startSession(ctx, { applicationIdentifier: devIdentifier, subscriber: { subscriberId, x: 1 } }),
        400,
        { path, fields: ["subscriber.x"] },
      );
      assertErrorBody(await startSession(ctx, "[]"), 400, { path, fields: ["body"] });
    });

    test("the token is a Bearer token for its subscriber's routes and sockets until it expires, never an API key's stand-in", async () => {
      const { tenant, devIdentifier } = await setup();
      const subscriberId = hexId();
      const res = await startSession(ctx, {
        applicationIdentifier: devIdentifier,
        subscriber: { subscriberId },
      });
      const { token } = res.json().data;
      const bearer = (value: string) =>
        ctx.app.inject({
          method: "GET",
          url: "/v1/widgets/notifications/unseen",
          headers: { authorization: `Bearer ${value}` },
        });
      assert.equal((await bearer(token)).statusCode, 200);
      // Not a key for the API's routes.
      const api = await ctx.app.inject({
        method: "GET",
        url: "/v1/subscribers",
        headers: { authorization: `Bearer ${token}` },
      });
      assertErrorBody(api, 401, { path: "/v1/subscribers" });
      assert.notEqual((await ctx.client(tenant.dev.apiKey).get("/v1/subscribers")).statusCode, 401);

      // The socket takes it as @novu/js sends it (query.token, websocket only) and as auth.token.
      const base = await baseUrlOf(ctx);
      for (const how of [{ query: { token } }, { auth: { token } }]) {
        const socket = connect(base, {
          transports: ["websocket"],
          reconnection: false,
          forceNew: true,
          ...how,
        });
        try {
          await new Promise<void>((resolve, reject) => {
            socket.once("connect", resolve);
            socket.once("connect_error", reject);
          });
        } finally {
          socket.close();
        }
      }

      ctx.clock.advance(WEEK_MS + 1000);
      assertErrorBody(await bearer(token), 401, {
        path: "/v1/widgets/notifications/unseen",
        message: /invalid or has expired/,
      });
    });

    test("a session whose subscriber was deleted is refused with a 401 on every route, before its input is read", async () => {
      const { dev, devIdentifier } = await setup();
      const subscriberId = hexId();
      const started = await startSession(ctx, {
        applicationIdentifier: devIdentifier,
        subscriber: { subscriberId },
      });
      assert.equal(started.statusCode, 201, started.body);
      const token = JSON.parse(started.body).data.token as string;
      const get = (url: string) =>
        ctx.app.inject({
          method: "GET",
          url: `/v1/inbox${url}`,
          headers: { authorization: `Bearer ${token}` },
        });
      const count = `/notifications/count?filters=${encodeURIComponent('[{"read":false}]')}`;
      assert.equal((await get("/notifications")).statusCode, 200);
      assert.equal((await get(count)).statusCode, 200);
      assert.equal((await dev.delete(`/v1/subscribers/${subscriberId}`)).statusCode, 200);
      for (const url of [
        "/notifications",
        count,
        "/notifications?read=maybe",
        "/notifications/count?filters=nonsense",
        "/preferences",
      ]) {
        assertErrorBody(await get(url), 401, {
          path: `/v1/inbox${url.split("?")[0]}`,
          message: /no longer exists/,
        });
      }
    });

    test("CORS: any page may start a session with @novu/js's headers, without credentials", async () => {
      const origin = "https://shop.example";
      const preflight = await ctx.app.inject({
        method: "OPTIONS",
        url: "/v1/inbox/session",
        headers: {
          origin,
          "access-control-request-method": "POST",
          "access-control-request-headers": "content-type,novu-api-version,novu-client-version,authorization",
        },
      });
      assert.equal(preflight.statusCode, 204, preflight.body);
      assert.equal(preflight.headers["access-control-allow-origin"], origin);
      const allowed = String(preflight.headers["access-control-allow-headers"]).toLowerCase().split(/,\s*/);
      for (const header of ["authorization", "content-type", "novu-api-version", "novu-client-version"]) {
        assert.ok(allowed.includes(header), `${header} is allowed: ${allowed.join(", ")}`);
      }
      assert.equal(preflight.headers["access-control-allow-credentials"], undefined);
      const { devIdentifier } = await setup();
      const started = await startSession(
        ctx,
        { applicationIdentifier: devIdentifier, subscriber: { subscriberId: hexId() } },
        { origin, "novu-api-version": "2024-06-26", "novu-client-version": "@novu/js@3.19.2" },
      );
      assert.equal(started.statusCode, 201, started.body);
      assert.equal(started.headers["access-control-allow-origin"], origin);
    });

    test("INBOX_MAX_SNOOZE_DURATION_HOURS sets the snooze limit the session announces (0: no snoozing)", async () => {
      const { devIdentifier } = await setup();
      for (const [value, hours] of [
        ["48", 48],
        ["0", 0],
      ] as const) {
        const app = await buildApp({
          store: ctx.store,
          clock: ctx.clock,
          config: loadConfig({ INBOX_MAX_SNOOZE_DURATION_HOURS: value }),
          secretKey: TEST_SECRET_KEY,
          realtimeCluster: false,
          runWorker: false,
        });
        try {
          const res = await app.inject({
            method: "POST",
            url: "/v1/inbox/session",
            payload: { applicationIdentifier: devIdentifier, subscriber: { subscriberId: hexId() } },
          });
          assert.equal(res.statusCode, 201, res.body);
          assert.equal(res.json().data.maxSnoozeDurationHours, hours);
        } finally {
          await app.close();
        }
      }
    });
  },
  { clock: () => new ManualClock(START) },
);
