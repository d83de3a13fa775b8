// The inbox's session routes (/v1/inbox) on both backends: a token acts for its subscriber alone, in
// its environment alone; every route refuses a missing, forged or expired token; bad input of every
// kind is a 4xx in the one error body, never a 5xx, and changes nothing.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";
import { Ajv } from "ajv";
import * as ajvFormats from "ajv-formats";
import fc from "fast-check";
import { assertErrorBody, errorBodyProblem } from "../../test/error-body.ts";
import { createWorkflow, uniqueName } from "../../test/factories.ts";
import { forEachBackend, type TestContext, type TestTenant } from "../../test/harness.ts";
import { applicationIdentifierOf, subscriberHash } from "../../test/inbox-client.ts";
import { ManualClock } from "../clock.ts";

// ajv-formats is CommonJS; under ESM its function arrives as the default export's default.
const addFormats = (ajvFormats.default as unknown as { default: (ajv: Ajv) => Ajv }).default;
const START = Date.UTC(2026, 5, 1, 9);
const WEEK_MS = 7 * 86_400_000;
const hexId = () => randomBytes(12).toString("hex");

type Response = Awaited<ReturnType<TestContext["app"]["inject"]>>;

/** One request with a session's token (or none), as the browser's inbox sends it. */
function call(ctx: TestContext, token: string | undefined, method: string, url: string, body?: unknown) {
  return ctx.app.inject({
    method: method as "GET",
    url: `/v1/inbox${url}`,
    headers: {
      ...(token !== undefined ? { authorization: `Bearer ${token}` } : {}),
      ...(body !== undefined ? { "content-type": "application/json" } : {}),
    },
    ...(body !== undefined ? { payload: typeof body === "string" ? body : JSON.stringify(body) } : {}),
  });
}

function refused(res: Response, status: number, expected: { message?: RegExp; fields?: string[] } = {}) {
  assertErrorBody(res, status, { path: (res.raw.req.url ?? "").split("?")[0] as string, ...expected });
}

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) assert.fail(`gave up waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Every route a session calls (the session's start aside), with a notification id filled in. */
function sessionRoutes(ctx: TestContext, id: string) {
  const paths = (ctx.app.swagger() as { paths: Record<string, Record<string, unknown>> }).paths;
  return Object.entries(paths)
    .filter(([path]) => path.startsWith("/v1/inbox/") && path !== "/v1/inbox/session")
    .flatMap(([path, ops]) =>
      Object.keys(ops).map((method) => ({
        method: method.toUpperCase(),
        path,
        url: path.replace("/v1/inbox", "").replace("{id}", id),
      })),
    );
}

forEachBackend(
  "the inbox's session routes: isolation and bad input",
  (ctx) => {
    /** A session for a new subscriber of the environment (Development unless told), and a way to deliver to it. */
    async function subscriberOf(tenant: TestTenant, environment: "dev" | "prod" = "dev") {
      const keys = tenant[environment];
      const api = ctx.client(keys.apiKey);
      const workflow = await createWorkflow(ctx, keys.apiKey, keys.generalGroupId, {
        name: uniqueName("Isolation"),
        active: true,
        tags: ["t"],
        steps: [
          {
            template: {
              type: "in_app",
              content: "For {{who}}",
              data: { who: "{{who}}" },
              cta: { action: { buttons: [{ type: "primary", content: "Go" }] } },
            },
          },
        ],
      });
      const subscriberId = hexId();
      const res = await ctx.app.inject({
        method: "POST",
        url: "/v1/inbox/session",
        payload: {
          applicationIdentifier: await applicationIdentifierOf(api),
          subscriber: { subscriberId },
          subscriberHash: subscriberHash(keys.apiKey, subscriberId),
        },
      });
      assert.equal(res.statusCode, 201, res.body);
      const token = res.json().data.token as string;
      const notifications = async () =>
        (await call(ctx, token, "GET", "/notifications?limit=100&snoozed=false")).json().data as {
          id: string;
          isRead: boolean;
          isSeen: boolean;
          isArchived: boolean;
          isSnoozed: boolean;
          primaryAction?: { isCompleted: boolean };
        }[];
      const deliver = async (who: string) => {
        const before = (await notifications()).length;
        const sent = await api.post("/v1/events/trigger", {
          name: workflow.triggers[0].identifier,
          to: subscriberId,
          payload: { who },
        });
        assert.equal(sent.statusCode, 201, sent.body);
        const list = await until(notifications, (l) => l.length === before + 1, "the notification");
        return list[0] as (typeof list)[number];
      };
      return { token, subscriberId, notifications, deliver };
    }

    test("a token never reads or changes another subscriber's notifications, nor another environment's", async () => {
      const tenant = await ctx.tenant();
      const alice = await subscriberOf(tenant);
      const bob = await subscriberOf(tenant);
      const carol = await subscriberOf(tenant, "prod");
      const dave = await subscriberOf(await ctx.tenant());
      await alice.deliver("alice");
      const bobs = await bob.deliver("bob");
      const untouched = await bob.notifications();

      for (const intruder of [alice, carol, dave]) {
        const list = (await call(ctx, intruder.token, "GET", "/notifications?limit=100")).json().data as {
          id: string;
        }[];
        assert.ok(!list.some((n) => n.id === bobs.id), "not listed");
        const counts = await call(
          ctx,
          intruder.token,
          "GET",
          `/notifications/count?filters=${encodeURIComponent(JSON.stringify([{ data: { who: "bob" } }]))}`,
        );
        assert.equal(counts.json().data[0].count, 0, "not counted");
        refused(await call(ctx, intruder.token, "GET", `/notifications?after=${bobs.id}`), 400, {
          fields: ["after"],
        });
        for (const mark of ["read", "unread", "archive", "unarchive", "unsnooze"]) {
          refused(await call(ctx, intruder.token, "PATCH", `/notifications/${bobs.id}/${mark}`), 404);
        }
        refused(
          await call(ctx, intruder.token, "PATCH", `/notifications/${bobs.id}/snooze`, {
            snoozeUntil: new Date(ctx.clock.now() + 3_600_000).toISOString(),
          }),
          404,
        );
        for (const action of ["complete", "revert"]) {
          refused(
            await call(ctx, intruder.token, "PATCH", `/notifications/${bobs.id}/${action}`, {
              actionType: "primary",
            }),
            404,
          );
        }
        refused(await call(ctx, intruder.token, "DELETE", `/notifications/${bobs.id}/delete`), 404);
        // The bulk routes act on the intruder's own notifications only.
        const seen = await call(ctx, intruder.token, "POST", "/notifications/seen", {
          notificationIds: [bobs.id],
        });
        assert.equal(seen.statusCode, 204, seen.body);
        for (const path of ["read", "archive", "read-archive"]) {
          assert.equal(
            (await call(ctx, intruder.token, "POST", `/notifications/${path}`, {})).statusCode,
            204,
          );
        }
        assert.equal(
          (await call(ctx, intruder.token, "POST", "/notifications/delete", { data: { who: "bob" } }))
            .statusCode,
          204,
        );
      }
      assert.deepEqual(await bob.notifications(), untouched, "Bob's notification is exactly as it was");
      assert.equal((await alice.notifications())[0]?.isArchived, true, "Alice's own read-archive did act");
    });

    test("every session route refuses a missing, malformed, forged or expired token, and an API key, with a 401", async () => {
      const tenant = await ctx.tenant();
      const { token } = await subscriberOf(tenant);
      const routes = sessionRoutes(ctx, hexId());
      assert.ok(routes.length >= 16, `the session routes: ${routes.length}`);
      const [header, body] = token.split(".") as [string, string];
      const forged = `${header}.${body}.${Buffer.alloc(32, 1).toString("base64url")}`;
      const cases: [Record<string, string>, RegExp][] = [
        [{}, /Missing Authorization/],
        [{ authorization: `ApiKey ${tenant.dev.apiKey}` }, /Bearer/],
        [{ authorization: "Bearer nonsense" }, /invalid or has expired/],
        [{ authorization: `Bearer ${forged}` }, /invalid or has expired/],
      ];
      for (const route of routes) {
        for (const [headers, message] of cases) {
          const res = await ctx.app.inject({
            method: route.method as "GET",
            url: `/v1/inbox${route.url}`,
            headers,
          });
          refused(res, 401, { message });
          assert.ok(!res.body.includes(tenant.dev.apiKey), `${route.method} ${route.url} echoes no key`);
        }
      }
      assert.equal((await call(ctx, token, "GET", "/notifications")).statusCode, 200);
      ctx.clock.advance(WEEK_MS + 1000);
      refused(await call(ctx, token, "GET", "/notifications"), 401, { message: /expired/ });
    });

    test("bad input is a 400 naming what is wrong, and changes nothing", async () => {
      const tenant = await ctx.tenant();
      const me = await subscriberOf(tenant);
      const mine = await me.deliver("me");
      const before = await me.notifications();
      const get = (query: string) => call(ctx, me.token, "GET", `/notifications?${query}`);
      const count = (filters: unknown) =>
        call(
          ctx,
          me.token,
          "GET",
          `/notifications/count?filters=${encodeURIComponent(typeof filters === "string" ? filters : JSON.stringify(filters))}`,
        );
      const q = (value: unknown) => encodeURIComponent(JSON.stringify(value));

      // The list's query string.
      refused(await get("limit=0"), 400, { fields: ["limit"] });
      refused(await get("limit=101"), 400, { fields: ["limit"] });
      refused(await get("after=nope"), 400, { fields: ["after"] });
      refused(await get("read=maybe"), 400, { fields: ["read"] });
      refused(await get("data=%7Bnot%20json"), 400, { fields: ["data"] });
      refused(await get(`data=${q([1])}`), 400, { fields: ["data"] });
      refused(await get(`data=${q({ $where: "1" })}`), 400, { fields: ["data.$where"] });
      refused(await get(`data=${q({ a: { b: { c: 1 } } })}`), 400, { fields: ["data.a.b"] });
      refused(await get(`data=${q({ a: { or: "x" } })}`), 400, { fields: ["data.a.or"] });
      refused(await get("severity=critical"), 400, { fields: ["severity"] });
      refused(await get("createdGte=yesterday"), 400, { fields: ["createdGte"] });
      const groups = Array.from({ length: 31 }, (_, i) => `tags[${i}][]=t${i}`).join("&");
      refused(await get(groups), 400, { fields: ["tags"] });

      // The counts' filters.
      refused(await call(ctx, me.token, "GET", "/notifications/count"), 400, { fields: ["filters"] });
      refused(await count("[{"), 400, { fields: ["filters"] });
      refused(await count({}), 400, { fields: ["filters"] });
      refused(await count([]), 400, { fields: ["filters"] });
      refused(await count(Array.from({ length: 31 }, () => ({ read: false }))), 400, {
        message: /at most 30 filters/,
        fields: ["filters"],
      });
      refused(await count([{ read: false }, "x"]), 400, { fields: ["filters[1]"] });
      refused(await count([{ unknown: 1 }]), 400, { fields: ["filters[0].unknown"] });
      refused(await count([{ tags: [1] }]), 400, { fields: ["filters[0].tags"] });
      refused(await count([{ severity: ["high", "x"] }]), 400, { fields: ["filters[0].severity"] });
      refused(await count([{ createdLte: -5 }]), 400, { fields: ["filters[0].createdLte"] });
      assert.equal((await count(Array.from({ length: 30 }, () => ({ read: false })))).statusCode, 200);

      // One notification's routes.
      for (const path of ["/notifications/nope/read", "/notifications/0123/archive"]) {
        refused(await call(ctx, me.token, "PATCH", path), 400, { fields: ["id"] });
      }
      refused(await call(ctx, me.token, "DELETE", "/notifications/nope/delete"), 400, { fields: ["id"] });
      const snooze = (body: unknown) =>
        call(ctx, me.token, "PATCH", `/notifications/${mine.id}/snooze`, body);
      refused(await snooze({}), 400, { fields: ["snoozeUntil"] });
      refused(await snooze({ snoozeUntil: "tomorrow" }), 400, { fields: ["snoozeUntil"] });
      refused(await snooze({ snoozeUntil: 1234 }), 400, { fields: ["snoozeUntil"] });
      refused(await snooze({ snoozeUntil: new Date(ctx.clock.now() - 1).toISOString() }), 400, {
        fields: ["snoozeUntil"],
        message: /in the future/,
      });
      refused(await snooze({ snoozeUntil: new Date(ctx.clock.now() + 91 * 86_400_000).toISOString() }), 400, {
        fields: ["snoozeUntil"],
        message: /at most 2160 hours/,
      });
      refused(await snooze({ snoozeUntil: new Date(ctx.clock.now() + 60_000).toISOString(), x: 1 }), 400, {
        fields: ["x"],
      });
      refused(
        await call(ctx, me.token, "PATCH", `/notifications/${mine.id}/complete`, { actionType: "tertiary" }),
        400,
        {
          fields: ["actionType"],
        },
      );
      refused(await call(ctx, me.token, "PATCH", `/notifications/${mine.id}/revert`, {}), 400, {
        fields: ["actionType"],
      });

      // The bulk bodies.
      refused(await call(ctx, me.token, "POST", "/notifications/read", { tags: 5 }), 400, {
        fields: ["tags"],
      });
      refused(await call(ctx, me.token, "POST", "/notifications/archive", { data: "{" }), 400, {
        fields: ["data"],
      });
      refused(await call(ctx, me.token, "POST", "/notifications/delete", { tags: { nor: ["x"] } }), 400, {
        fields: ["tags"],
      });
      refused(await call(ctx, me.token, "POST", "/notifications/seen", { notificationIds: ["nope"] }), 400, {
        fields: ["notificationIds[0]"],
      });
      refused(await call(ctx, me.token, "POST", "/notifications/read-archive", "[]"), 400, {
        fields: ["body"],
      });

      assert.deepEqual(await me.notifications(), before, "nothing changed");
    });

    test("hostile input to every /v1/inbox route (random JSON bodies, query strings, ids): a 4xx in the one error body, never a 5xx", async () => {
      const tenant = await ctx.tenant();
      const { token } = await subscriberOf(tenant);
      const applicationIdentifier = await applicationIdentifierOf(ctx.client(tenant.dev.apiKey));
      const paths = (ctx.app.swagger() as { paths: Record<string, Record<string, unknown>> }).paths;
      const routes = Object.entries(paths)
        .filter(([path]) => path.startsWith("/v1/inbox/"))
        .flatMap(([path, ops]) => Object.keys(ops).map((method) => ({ path, method: method.toUpperCase() })));
      const filterValue = fc.oneof(
        fc.jsonValue(),
        fc.record(
          { tags: fc.jsonValue(), data: fc.jsonValue(), severity: fc.jsonValue() },
          { requiredKeys: [] },
        ),
      );
      const runs = 25;
      let sent = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(...routes),
          fc.oneof(fc.jsonValue(), fc.string(), fc.constant(undefined), filterValue),
          fc.dictionary(
            fc.oneof(
              fc.constantFrom(
                "tags[]",
                "tags[0][]",
                "data",
                "filters",
                "severity",
                "after",
                "createdGte",
                "read",
              ),
              fc.string({ maxLength: 12 }),
            ),
            fc.oneof(
              fc.string({ maxLength: 40 }),
              filterValue.map((v) => JSON.stringify(v)),
            ),
            { maxKeys: 3 },
          ),
          fc.oneof(fc.stringMatching(/^[0-9a-f]{24}$/), fc.string({ maxLength: 30 })),
          async (route, body, query, id) => {
            const path = route.path.replace("{id}", encodeURIComponent(id) || "x");
            const url = `${path}?${new URLSearchParams(query)}`;
            const session = route.path === "/v1/inbox/session";
            const payload =
              session && body !== null && typeof body === "object" && !Array.isArray(body)
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

    test("every /v1/inbox route answers what its OpenAPI document says, errors included", async () => {
      const tenant = await ctx.tenant();
      const me = await subscriberOf(tenant);
      const doc = (await ctx.app.inject({ method: "GET", url: "/openapi.json" })).json();
      const ajv = new Ajv({ strict: false, allErrors: true });
      addFormats(ajv);
      ajv.addSchema(doc, "openapi");
      const pointer = (path: string, method: string, status: number) =>
        `openapi#/paths/${path.replace(/~/g, "~0").replace(/\//g, "~1")}/${method}/responses/${status}/content/application~1json/schema`;
      const soon = () => new Date(ctx.clock.now() + 60_000).toISOString();
      const applicationIdentifier = await applicationIdentifierOf(ctx.client(tenant.dev.apiKey));
      const calls: [string, string, (id: string) => string, unknown?][] = [
        [
          "post",
          "/v1/inbox/session",
          () => "/session",
          { applicationIdentifier, subscriber: { subscriberId: hexId() } },
        ],
        [
          "get",
          "/v1/inbox/notifications",
          () => "/notifications?tags[]=t&data=%7B%22who%22%3A%22me%22%7D&severity=none",
        ],
        [
          "get",
          "/v1/inbox/notifications/count",
          () => `/notifications/count?filters=${encodeURIComponent('[{"read":false},{"tags":["t"]}]')}`,
        ],
        ...["read", "unread", "archive", "unarchive", "unsnooze"].map(
          (mark) =>
            [
              "patch",
              `/v1/inbox/notifications/{id}/${mark}`,
              (id: string) => `/notifications/${id}/${mark}`,
            ] as [string, string, (id: string) => string],
        ),
        [
          "patch",
          "/v1/inbox/notifications/{id}/snooze",
          (id) => `/notifications/${id}/snooze`,
          { snoozeUntil: soon() },
        ],
        [
          "patch",
          "/v1/inbox/notifications/{id}/complete",
          (id) => `/notifications/${id}/complete`,
          { actionType: "primary" },
        ],
        [
          "patch",
          "/v1/inbox/notifications/{id}/revert",
          (id) => `/notifications/${id}/revert`,
          { actionType: "primary" },
        ],
        ["post", "/v1/inbox/notifications/seen", () => "/notifications/seen", { tags: ["t"] }],
        ...["read", "archive", "read-archive", "delete"].map(
          (path) =>
            [
              "post",
              `/v1/inbox/notifications/${path}`,
              () => `/notifications/${path}`,
              { data: '{"who":"x"}' },
            ] as [string, string, (id: string) => string, unknown],
        ),
        ["delete", "/v1/inbox/notifications/{id}/delete", (id) => `/notifications/${id}/delete`],
      ];
      const documented = sessionRoutes(ctx, "x")
        .map((r) => `${r.method} ${r.path}`)
        .concat("POST /v1/inbox/session");
      assert.deepEqual(
        calls.map(([method, path]) => `${method.toUpperCase()} ${path}`).sort(),
        documented.sort(),
        "every documented route is called here",
      );
      const mine = await me.deliver("me");
      for (const [method, path, url, body] of calls) {
        const res = await call(
          ctx,
          path === "/v1/inbox/session" ? undefined : me.token,
          method.toUpperCase(),
          url(mine.id),
          body,
        );
        assert.ok(res.statusCode < 300, `${method} ${path}: ${res.statusCode} ${res.body}`);
        if (res.statusCode === 204) {
          assert.equal(res.body, "");
          continue;
        }
        const validate = ajv.getSchema(pointer(path, method, res.statusCode));
        assert.ok(validate, `${method} ${path} documents its ${res.statusCode}`);
        assert.ok(validate(res.json()), `${method} ${path}: ${JSON.stringify(validate.errors)} ${res.body}`);
        if (path.includes("{id}")) {
          const missing = await call(ctx, me.token, method.toUpperCase(), url(hexId()), body);
          assert.equal(missing.statusCode, 404, `${method} ${path} of another id`);
          const error = ajv.getSchema(pointer(path, method, 404));
          assert.ok(error?.(missing.json()), `${method} ${path} documents its 404`);
        }
      }
    });

    test("CORS: any page may call the session's routes with @novu/js's headers, without credentials", async () => {
      const origin = "https://app.example";
      const preflight = await ctx.app.inject({
        method: "OPTIONS",
        url: "/v1/inbox/notifications/0123456789abcdef01234567/read",
        headers: {
          origin,
          "access-control-request-method": "PATCH",
          "access-control-request-headers": "authorization,content-type,novu-api-version,novu-client-version",
        },
      });
      assert.equal(preflight.statusCode, 204);
      assert.equal(preflight.headers["access-control-allow-origin"], origin);
      assert.match(String(preflight.headers["access-control-allow-methods"]), /PATCH/);
      assert.match(String(preflight.headers["access-control-allow-headers"]), /Novu-Client-Version/);
      assert.equal(preflight.headers["access-control-allow-credentials"], undefined);
    });
  },
  { clock: () => new ManualClock(START) },
);
