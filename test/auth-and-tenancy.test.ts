import assert from "node:assert/strict";
import { test } from "node:test";
import type { LightMyRequestResponse } from "fastify";
import { revokeApiKey } from "../src/tenancy/repository.ts";
import { documentedAnswers } from "./documented-answers.ts";
import { assertErrorBody } from "./error-body.ts";
import { anonymous, forEachBackend } from "./harness.ts";
import { OBJECT_ID_ANYWHERE } from "./patterns.ts";
import { type CatalogRoute, type Fixtures, makeFixtures, ROUTES } from "./route-catalog.ts";

function call(
  route: CatalogRoute,
  url: string,
  body: Record<string, unknown> | undefined,
  headers: Record<string, string>,
) {
  return {
    method: route.method,
    url,
    headers: { ...headers, ...(body ? { "content-type": "application/json" } : {}) },
    ...(body ? { payload: JSON.stringify(body) } : {}),
  };
}

/** The request path, as the error body reports it: without the query string. */
const pathOf = (url: string) => url.split("?")[0] as string;

forEachBackend(
  "every /v1 and /v2 route: authentication and tenancy",
  (ctx) => {
    // The other environments' 404 cases change nothing (each asserts so), so they share one set of
    // fixtures, as do the valid calls of the routes that only read (GET); the valid calls that
    // change something make their own.
    let shared: Promise<Fixtures> | undefined;
    const sharedFixtures = () => {
      shared ??= makeFixtures(ctx);
      return shared;
    };
    // One revoked key for every route's 401 cases: in use (and so remembered wherever keys are)
    // before it is revoked, as a live key would be. Each route then sends it after the revocation.
    let revoked: Promise<string> | undefined;
    const revokedKey = () => {
      revoked ??= (async () => {
        const tenant = await ctx.tenant();
        const inUse = await ctx.client(tenant.dev.apiKey).get("/v1/environments/me");
        assert.equal(inUse.statusCode, 200, inUse.body);
        const key = await ctx.store.db
          .selectFrom("api_keys")
          .select("id")
          .where("environment_id", "=", tenant.dev.environmentId)
          .executeTakeFirstOrThrow();
        assert.ok(await revokeApiKey(ctx.store.db, key.id, new Date().toISOString()));
        return tenant.dev.apiKey;
      })();
      return revoked;
    };
    // Another organization, whose key must reach nothing of the fixtures' (its requests change
    // nothing, which each case checks, so one serves them all).
    let otherTenant: ReturnType<typeof ctx.tenant> | undefined;
    const other = () => {
      otherTenant ??= ctx.tenant();
      return otherTenant;
    };

    test("the catalog lists every /v1 and /v2 route the OpenAPI document describes", async () => {
      const paths = (ctx.app.swagger() as { paths: Record<string, Record<string, unknown>> }).paths;
      const documented = Object.entries(paths)
        // The inbox's and the widget's routes take a session token, not an API key: their own tests
        // (src/inbox/*.test.ts, src/widgets/widgets.test.ts) have their cases.
        .filter(
          ([path]) =>
            /^\/v[12]\//.test(path) && !path.startsWith("/v1/widgets/") && !path.startsWith("/v1/inbox/"),
        )
        .flatMap(([path, ops]) =>
          Object.keys(ops).map((m) => `${m.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ":$1")}`),
        );
      const catalogued = ROUTES.map((r) => `${r.method} ${r.path}`);
      assert.deepEqual([...documented].sort(), [...catalogued].sort());
    });

    // The OpenAPI document's responses, which every answer below must match.
    let documented: ReturnType<typeof documentedAnswers> | undefined;
    const matchesDocument = (route: CatalogRoute, res: LightMyRequestResponse) => {
      documented ??= documentedAnswers(ctx.app.swagger());
      documented(route, res);
    };

    for (const route of ROUTES) {
      const name = `${route.method} ${route.path}`;

      // The scheme word in any case, with extra spaces: the valid call is made with it (every other
      // test of the suite sends the canonical "ApiKey <key>"), so one set of fixtures serves both.
      // Its answer, and a 404 for what does not exist, are what the OpenAPI document says they are.
      test(`${name}: a valid call succeeds (so the cases below can fail), the scheme word in any case and extra spaces allowed; the answers are the documented ones`, async () => {
        const f = route.method === "GET" ? await sharedFixtures() : await makeFixtures(ctx);
        const res = await ctx.app.inject(
          call(route, route.url(f), route.body?.(f), {
            authorization: `  apikey   ${f.tenant.dev.apiKey}  `,
          }),
        );
        assert.equal(res.statusCode, route.ok, res.body);
        matchesDocument(route, res);
        const missing = await ctx.app.inject(
          call(route, route.url(f).replace(OBJECT_ID_ANYWHERE, "0123456789abcdef01234567"), route.body?.(f), {
            authorization: `ApiKey ${f.tenant.dev.apiKey}`,
          }),
        );
        if (missing.statusCode === 404) matchesDocument(route, missing);
      });

      test(`${name}: 401 for a missing, foreign-scheme, empty, unknown, revoked or query-string key`, async () => {
        // Nothing here gets past authentication, so the shared fixtures serve; the revoked key is a
        // tenant's of its own.
        const f = await sharedFixtures();
        const url = route.url(f);
        const body = route.body?.(f);
        const cases: [Record<string, string>, RegExp, string?][] = [
          [{}, /^Missing Authorization header$/],
          [{ authorization: "Bearer x" }, /^Unsupported authorization scheme "Bearer"; use "ApiKey <key>"$/],
          [{ authorization: "ApiKey" }, /^Invalid API key$/],
          [{ authorization: "ApiKey    " }, /^Invalid API key$/],
          [{ authorization: "ApiKey tid_sk_notarealkeyatallnotarealkey00" }, /^Invalid API key$/],
          [{}, /^Missing Authorization header$/, `?apiKey=${f.tenant.dev.apiKey}`],
        ];
        for (const [headers, message, query] of cases) {
          const res = await ctx.app.inject(call(route, url + (query ?? ""), body, headers));
          assertErrorBody(res, 401, { path: pathOf(url), message });
          assert.equal(res.headers["www-authenticate"], "ApiKey");
        }
        // A key revoked after it was used is refused.
        const res = await ctx.app.inject(
          call(route, url, body, { authorization: `ApiKey ${await revokedKey()}` }),
        );
        assertErrorBody(res, 401, { path: pathOf(url), message: /^Invalid API key$/ });
        assert.equal(res.headers["www-authenticate"], "ApiKey");
      });

      const resourceUrls = route.resourceUrls;
      if (resourceUrls) {
        test(`${name}: another environment's or organization's key gets 404, and nothing changes`, async () => {
          const f = await sharedFixtures();
          const stranger = await other();
          // Everything the routes could touch: the workflow, the spare group, the whole group list,
          // the subscriber (with its credentials and preferences), the topics, the environment.
          const snapshot = async () => {
            const api = ctx.client(f.tenant.dev.apiKey);
            return Promise.all(
              [
                `/v1/workflows/${f.workflowId}`,
                `/v1/notification-groups/${f.groupId}`,
                "/v1/notification-groups",
                `/v1/subscribers/${f.subscriberId}`,
                `/v1/subscribers/${f.subscriberId}/preferences`,
                `/v1/subscribers/${f.subscriberId}/preferences/global`,
                `/v1/topics/${f.topicKey}`,
                `/v1/topics/${f.emptyTopicKey}`,
                "/v1/environments/me",
                "/v1/environments/api-keys",
                "/v1/integrations",
                // The subscriber's notifications, every state of them (the snoozed are listed apart).
                `/v2/subscribers/${f.subscriberId}/notifications?limit=100`,
                `/v2/subscribers/${f.subscriberId}/notifications?limit=100&snoozed=true`,
              ].map(async (url) => (await api.get(url)).json()),
            );
          };
          const before = await snapshot();
          // Sent all at once, several times each: no interleaving lets one through either.
          const attempts = resourceUrls(f).flatMap(({ url, notFound }) =>
            [f.tenant.prod.apiKey, stranger.dev.apiKey].flatMap((key) =>
              Array.from({ length: 4 }, async () => {
                const res = await ctx.app.inject(
                  call(route, url, route.body?.(f), { authorization: `ApiKey ${key}` }),
                );
                assertErrorBody(res, 404, { path: pathOf(url), message: notFound });
              }),
            ),
          );
          await Promise.all(attempts);
          assert.deepEqual(await snapshot(), before);
        });
      }
    }

    test("a key sent without its scheme word, or glued to it, is never echoed back", async () => {
      const { dev } = await ctx.tenant();
      for (const authorization of [
        dev.apiKey,
        `ApiKey:${dev.apiKey}`,
        `Token=${dev.apiKey}`,
        `x${dev.apiKey.slice(7)}`,
      ]) {
        const res = await anonymous(ctx).request({
          method: "GET",
          url: "/v1/notification-groups",
          headers: { authorization },
        });
        assertErrorBody(res, 401, {
          path: "/v1/notification-groups",
          message: /^Unsupported authorization scheme; use "ApiKey <key>"$/,
        });
        assert.ok(!res.body.includes(dev.apiKey.slice(7, 15)), `the key leaked back: ${res.body}`);
      }
    });

    test("requests without a key reach /health, /openapi.json and /docs", async () => {
      for (const url of ["/health", "/openapi.json", "/docs"]) {
        const res = await anonymous(ctx).get(url);
        assert.ok(res.statusCode === 200 || res.statusCode === 302, `${url}: ${res.statusCode}`);
      }
    });
  },
  // Each route's cases make their own fixtures or only read the shared ones (the 404 cases change
  // nothing, and check so): they run four at a time, their waits on the database overlapping.
  { concurrency: 4 },
);
