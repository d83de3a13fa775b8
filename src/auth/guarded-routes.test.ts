import assert from "node:assert/strict";
import { test } from "node:test";
import { sql } from "kysely";
import { assertErrorBody } from "../../test/error-body.ts";
import { forEachBackend } from "../../test/harness.ts";
import { drain } from "../../test/queue-helpers.ts";
import { type CatalogRoute, makeFixtures, ROUTES } from "../../test/route-catalog.ts";
import type { Store } from "../store/store.ts";
import { findKeyOwner, revokeApiKey } from "../tenancy/repository.ts";
import { isKeyGuarded } from "./guarded-route.ts";
import { cachedKeys } from "./key-verifier.ts";

// Every route the app registers as key-guarded, seen as Fastify registers it: a route marked
// tomorrow is in this list without anyone adding it here. Each backend's app has its own store.
const guardedRoutes = new Map<Store, { method: string; url: string }[]>();
// How many times the app looked a key up in the database.
let lookups = 0;

forEachBackend(
  "every key-guarded route: a key revoked between two calls is refused on the second, which changes nothing",
  (ctx) => {
    /** Resolves once the worker has nothing running and nothing due (polled on PostgreSQL). */
    const settle = () => drain(ctx);

    /**
     * Every row of every table of the app, so that any write at all shows; but queue_workers, where
     * the job queue's workers on PostgreSQL come and go and beat on their own (graphile-queue.ts).
     */
    async function snapshot(): Promise<Record<string, string[]>> {
      const tables = await ctx.store.db.introspection.getTables();
      const all: Record<string, string[]> = {};
      for (const { name } of tables) {
        if (name === "queue_workers") continue;
        const { rows } = await sql<Record<string, unknown>>`select * from ${sql.table(name)}`.execute(
          ctx.store.db,
        );
        all[name] = rows.map((row) => JSON.stringify(row)).sort();
      }
      return all;
    }

    const send = (route: CatalogRoute, url: string, body: unknown, apiKey: string) =>
      ctx.app.inject({
        method: route.method,
        url,
        headers: {
          authorization: `ApiKey ${apiKey}`,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
      });

    test("each one answers from memory, then refuses the revoked key and writes nothing", async (t) => {
      const routes = guardedRoutes.get(ctx.store) ?? [];
      const names = routes.map((r) => `${r.method} ${r.url}`);
      // The walk sees the mark: the routes known to be guarded are among those it found.
      for (const known of [
        "POST /v1/events/trigger",
        "PUT /v1/workflows/:workflowId/status",
        "PUT /v1/notification-templates/:workflowId/status",
      ]) {
        assert.ok(names.includes(known), `${known} in ${names.join(", ")}`);
      }
      const other = await ctx.connect();
      for (const route of routes) {
        await t.test(`${route.method} ${route.url}`, async () => {
          const entry = ROUTES.find((r) => r.method === route.method && r.path === route.url);
          assert.ok(entry, "a key-guarded route is in test/route-catalog.ts, with a valid call");
          const f = await makeFixtures(ctx);
          const url = entry.url(f);
          const apiKey = f.tenant.dev.apiKey;

          const before = lookups;
          const first = await send(entry, url, entry.body?.(f), apiKey);
          assert.equal(first.statusCode, entry.ok, first.body);
          assert.equal(lookups, before, "the first call took the key from memory");
          await settle();

          const key = await ctx.store.db
            .selectFrom("api_keys")
            .select("id")
            .where("environment_id", "=", f.tenant.dev.environmentId)
            .executeTakeFirstOrThrow();
          // Through another connection, as the CLI or a second API process would.
          assert.ok(await revokeApiKey(other.db, key.id, new Date().toISOString()));
          const unchanged = await snapshot();

          const second = await send(entry, url, entry.body?.(f), apiKey);
          assertErrorBody(second, 401, { path: url, message: /^Invalid API key$/ });
          assert.equal(second.headers["www-authenticate"], "ApiKey");
          await settle();
          assert.deepEqual(await snapshot(), unchanged, "the refused call wrote nothing");
        });
      }
    });
  },
  {
    app: (store) => {
      const routes: { method: string; url: string }[] = [];
      guardedRoutes.set(store, routes);
      return {
        keyLookup: cachedKeys((hash) => {
          lookups++;
          return findKeyOwner(store.db, hash);
        }),
        onRoute: (route) => {
          if (!isKeyGuarded(route.config)) return;
          for (const method of [route.method].flat()) routes.push({ method, url: route.url });
        },
      };
    },
  },
);
