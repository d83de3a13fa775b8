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
import { poll } from "../../test/poll.ts";
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

/** What fills each name in a session route's path: a notification, a workflow, a topic, a subscription. */
type PathValues = {
  id: string;
  workflowIdOrIdentifier: string;
  topicKey: string;
  identifier: string;
  workflowId: string;
};

/** The path with every `{name}` filled in; a name without a value fails, rather than be sent as it is. */
function filled(path: string, values: Record<string, string>): string {
  return path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`no value for {${name}} in ${path}`);
    return encodeURIComponent(value);
  });
}

/** Every route a session calls (the session's start aside), with the names in its path filled in. */
function sessionRoutes(ctx: TestContext, values: PathValues) {
  const paths = (ctx.app.swagger() as { paths: Record<string, Record<string, unknown>> }).paths;
  return Object.entries(paths)
    .filter(([path]) => path.startsWith("/v1/inbox/") && path !== "/v1/inbox/session")
    .flatMap(([path, ops]) =>
      Object.keys(ops).map((method) => ({
        method: method.toUpperCase(),
        path,
        url: filled(path.replace("/v1/inbox", ""), values),
      })),
    );
}

forEachBackend(
  "the inbox's session routes: isolation and bad input",
  (ctx) => {
    /** A session for a new subscriber of the environment (Development unless told), its workflow, and a way to deliver to it. */
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
        const list = await poll(notifications, (l) => l.length === before + 1, {
          what: "the notification",
          limitMs: 10_000,
        });
        return list[0] as (typeof list)[number];
      };
      return {
        token,
        subscriberId,
        workflow: { id: workflow._id as string, identifier: workflow.triggers[0].identifier as string },
        notifications,
        deliver,
      };
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
      const { token, workflow } = await subscriberOf(tenant);
      const routes = sessionRoutes(ctx, {
        id: hexId(),
        workflowIdOrIdentifier: workflow.identifier,
        topicKey: `team:${hexId()}`,
        identifier: hexId(),
        workflowId: workflow.id,
      });
      assert.ok(routes.length >= 27, `the session routes: ${routes.length}`);
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
      // With the token, the same requests get past the check: what they answer is their input's doing.
      for (const route of routes) {
        const res = await call(ctx, token, route.method, route.url);
        assert.ok(
          res.statusCode !== 401 && res.statusCode < 500,
          `${route.method} ${route.url} with the token: ${res.statusCode} ${res.body}`,
        );
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
            // Every name in the path (a notification, a workflow, a topic, a subscription) takes the id.
            const path = route.path.replace(/\{\w+\}/g, () => encodeURIComponent(id) || "x");
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
      // What this session cannot see: another subscriber's notification and subscription, and a
      // workflow of another environment.
      const other = await subscriberOf(tenant);
      const foreign = (await subscriberOf(tenant, "prod")).workflow;
      const doc = (await ctx.app.inject({ method: "GET", url: "/openapi.json" })).json() as {
        paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
      };
      const ajv = new Ajv({ strict: false, allErrors: true });
      addFormats(ajv);
      ajv.addSchema(doc, "openapi");
      const pointer = (path: string, method: string, status: number) =>
        `openapi#/paths/${path.replace(/~/g, "~0").replace(/\//g, "~1")}/${method}/responses/${status}/content/application~1json/schema`;
      const documents = (path: string, method: string, status: number) =>
        doc.paths[path]?.[method]?.responses[String(status)] !== undefined;
      const soon = () => new Date(ctx.clock.now() + 60_000).toISOString();
      const applicationIdentifier = await applicationIdentifierOf(ctx.client(tenant.dev.apiKey));
      const topicKey = `team:${hexId()}`;
      const joined = await call(ctx, other.token, "POST", `/topics/${topicKey}/subscriptions`, {
        identifier: "theirs",
        name: "Theirs",
      });
      assert.equal(joined.statusCode, 201, joined.body);
      const theirSubscription = joined.json().data as { id: string; identifier: string };
      const theirNotification = await other.deliver("other");
      const mine = await me.deliver("me");
      const { workflow } = me;

      /**
       * A call of a documented route that succeeds, and `unseen`: the same call naming instead what
       * this session cannot see (or what is not there), with the answer the document gives for it.
       */
      type Documented = {
        method: string;
        path: string;
        url: string;
        body?: unknown;
        unseen?: { url: string; status: 204 | 404 }[];
      };
      const ofNotification = (action: string) => ({
        path: `/v1/inbox/notifications/{id}/${action}`,
        url: `/notifications/${mine.id}/${action}`,
        unseen: [hexId(), theirNotification.id].map((id) => ({
          url: `/notifications/${id}/${action}`,
          status: 404 as const,
        })),
      });
      const notMine = [theirSubscription.identifier, theirSubscription.id, hexId()];
      const ofSubscription = (status: 204 | 404) => ({
        path: "/v1/inbox/topics/{topicKey}/subscriptions/{identifier}",
        unseen: notMine.map((identifier) => ({
          url: `/topics/${topicKey}/subscriptions/${identifier}`,
          status,
        })),
      });
      const calls: Documented[] = [
        {
          method: "post",
          path: "/v1/inbox/session",
          url: "/session",
          body: { applicationIdentifier, subscriber: { subscriberId: hexId() } },
        },
        {
          method: "get",
          path: "/v1/inbox/notifications",
          url: "/notifications?tags[]=t&data=%7B%22who%22%3A%22me%22%7D&severity=none",
        },
        {
          method: "get",
          path: "/v1/inbox/notifications/count",
          url: `/notifications/count?filters=${encodeURIComponent('[{"read":false},{"tags":["t"]}]')}`,
        },
        ...["read", "unread", "archive", "unarchive", "unsnooze"].map((mark) => ({
          method: "patch",
          ...ofNotification(mark),
        })),
        { method: "patch", ...ofNotification("snooze"), body: { snoozeUntil: soon() } },
        { method: "patch", ...ofNotification("complete"), body: { actionType: "primary" } },
        { method: "patch", ...ofNotification("revert"), body: { actionType: "primary" } },
        {
          method: "post",
          path: "/v1/inbox/notifications/seen",
          url: "/notifications/seen",
          body: { tags: ["t"] },
        },
        ...["read", "archive", "read-archive", "delete"].map((path) => ({
          method: "post",
          path: `/v1/inbox/notifications/${path}`,
          url: `/notifications/${path}`,
          body: { data: '{"who":"x"}' },
        })),
        { method: "delete", ...ofNotification("delete") },
        // The preferences: a filter that keeps the subscriber's workflow; the global one with a schedule.
        {
          method: "get",
          path: "/v1/inbox/preferences",
          url: "/preferences?tags=t&severity=none&criticality=all",
        },
        { method: "get", path: "/v1/inbox/preferences/global", url: "/preferences/global" },
        {
          method: "patch",
          path: "/v1/inbox/preferences",
          url: "/preferences",
          body: {
            email: true,
            in_app: true,
            schedule: {
              isEnabled: true,
              weeklySchedule: {
                monday: { isEnabled: true, hours: [{ start: "09:00 AM", end: "05:00 PM" }] },
              },
            },
          },
        },
        {
          method: "patch",
          path: "/v1/inbox/preferences/{workflowIdOrIdentifier}",
          url: `/preferences/${workflow.identifier}`,
          body: { enabled: true, in_app: true },
          unseen: [foreign.id, foreign.identifier].map((id) => ({ url: `/preferences/${id}`, status: 404 })),
        },
        // A topic subscription: joined, read, changed, then left.
        {
          method: "post",
          path: "/v1/inbox/topics/{topicKey}/subscriptions",
          url: `/topics/${topicKey}/subscriptions`,
          body: {
            identifier: "mine",
            name: "Mine",
            topic: { name: "Team" },
            preferences: [{ workflowId: workflow.id, enabled: true }],
          },
        },
        {
          method: "get",
          path: "/v1/inbox/topics/{topicKey}/subscriptions",
          url: `/topics/${topicKey}/subscriptions`,
        },
        {
          method: "get",
          ...ofSubscription(204),
          url: `/topics/${topicKey}/subscriptions/mine?workflowIds=${workflow.identifier}&tags=t`,
        },
        {
          method: "patch",
          ...ofSubscription(404),
          url: `/topics/${topicKey}/subscriptions/mine`,
          body: { name: "Renamed", preferences: [{ filter: { tags: ["t"] }, enabled: true }] },
        },
        {
          method: "patch",
          path: "/v1/inbox/subscriptions/{identifier}/preferences/{workflowId}",
          url: `/subscriptions/mine/preferences/${workflow.id}`,
          body: { in_app: true, condition: { "==": [{ var: "payload.who" }, "me"] } },
          unseen: [
            { url: `/subscriptions/${theirSubscription.identifier}/preferences/${workflow.id}`, status: 404 },
            { url: `/subscriptions/mine/preferences/${foreign.id}`, status: 404 },
          ],
        },
        {
          method: "patch",
          path: "/v1/inbox/preferences/bulk",
          url: "/preferences/bulk",
          body: {
            preferences: [
              { workflowId: workflow.id, in_app: true },
              { workflowId: workflow.identifier, subscriptionIdentifier: "mine", enabled: true },
            ],
          },
        },
        { method: "delete", ...ofSubscription(404), url: `/topics/${topicKey}/subscriptions/mine` },
      ];
      const documented = Object.entries(doc.paths)
        .filter(([path]) => path.startsWith("/v1/inbox/"))
        .flatMap(([path, ops]) => Object.keys(ops).map((method) => `${method.toUpperCase()} ${path}`));
      assert.deepEqual(
        calls.map(({ method, path }) => `${method.toUpperCase()} ${path}`).sort(),
        documented.sort(),
        "every documented route is called here",
      );
      const theirsBefore = await other.notifications();
      for (const { method, path, url, body, unseen = [] } of calls) {
        const res = await call(
          ctx,
          path === "/v1/inbox/session" ? undefined : me.token,
          method.toUpperCase(),
          url,
          body,
        );
        assert.ok(res.statusCode < 300, `${method} ${path}: ${res.statusCode} ${res.body}`);
        if (res.statusCode === 204) {
          assert.ok(documents(path, method, 204), `${method} ${path} documents its 204`);
          assert.equal(res.body, "");
        } else {
          const validate = ajv.getSchema(pointer(path, method, res.statusCode));
          assert.ok(validate, `${method} ${path} documents its ${res.statusCode}`);
          assert.ok(
            validate(res.json()),
            `${method} ${path}: ${JSON.stringify(validate.errors)} ${res.body}`,
          );
        }
        for (const elsewhere of unseen) {
          const answer = await call(ctx, me.token, method.toUpperCase(), elsewhere.url, body);
          assert.equal(answer.statusCode, elsewhere.status, `${method} ${elsewhere.url}: ${answer.body}`);
          assert.ok(
            documents(path, method, elsewhere.status),
            `${method} ${path} documents its ${elsewhere.status}`,
          );
          if (elsewhere.status === 204) assert.equal(answer.body, "");
          else {
            const error = ajv.getSchema(pointer(path, method, elsewhere.status));
            assert.ok(error?.(answer.json()), `${method} ${path} answers its documented ${elsewhere.status}`);
          }
        }
      }
      // The other subscriber's notification and subscription are as they were.
      assert.deepEqual(await other.notifications(), theirsBefore);
      const theirs = await call(ctx, other.token, "GET", `/topics/${topicKey}/subscriptions/theirs`);
      assert.equal(theirs.statusCode, 200, theirs.body);
      assert.equal(theirs.json().data.name, "Theirs");
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
