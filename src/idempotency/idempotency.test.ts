import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { test } from "node:test";
import { assertErrorBody } from "../../test/error-body.ts";
import { createGroup, uniqueName } from "../../test/factories.ts";
import { forEachBackend } from "../../test/harness.ts";
import { makeFixtures, ROUTES } from "../../test/route-catalog.ts";
import { buildApp } from "../app.ts";
import { CLAIM_LEASE_MS, hashRequest, KEY_TTL_MS } from "./idempotency.ts";
import { purgeExpiredIdempotencyKeys } from "./purge.ts";
import { claimKey, completeKey, findKey, takeOverKey } from "./repository.ts";

forEachBackend("Idempotency-Key on POST and PATCH", (ctx) => {
  const key = () => `key-${randomUUID()}`;
  const groupNames = async (apiKey: string) =>
    (await ctx.client(apiKey).get("/v1/notification-groups"))
      .json()
      .data.map((g: { name: string }) => g.name);

  for (const route of ROUTES.filter(
    (r) => (r.method === "POST" || r.method === "PATCH") && !r.noIdempotencyKey,
  )) {
    const name = `${route.method} ${route.path}`;
    test(`${name}: a retry replays the first response; another body with the key is a 422`, async () => {
      const f = await makeFixtures(ctx);
      const api = ctx.client(f.tenant.dev.apiKey);
      const k = key();
      const body = route.body?.(f) ?? {};
      const send = (payload: Record<string, unknown>) =>
        api.request({
          method: route.method,
          url: route.url(f),
          headers: { "content-type": "application/json", "idempotency-key": k },
          payload: JSON.stringify(payload),
        });
      const first = await send(body);
      assert.equal(first.statusCode, route.ok, first.body);
      assert.equal(first.headers["idempotency-replay"], undefined);
      const again = await send(body);
      assert.equal(again.statusCode, route.ok, again.body);
      assert.equal(again.headers["idempotency-replay"], "true");
      // A 204 is replayed as it was sent: no body, so no Content-Type.
      if (route.ok === 204) assert.equal(again.headers["content-type"], undefined);
      else assert.match(String(again.headers["content-type"]), /^application\/json/);
      assert.equal(again.body, first.body);
      const other = await send(route.body?.(f) ?? { other: true });
      assertErrorBody(other, 422, {
        path: route.url(f),
        message: /Idempotency-Key/,
        fields: ["idempotency-key"],
      });
    });
  }

  test("a replayed create creates nothing: one group, one workflow", async () => {
    const { dev } = await ctx.tenant();
    const api = ctx.client(dev.apiKey);
    const k = key();
    const name = uniqueName("Once");
    for (let i = 0; i < 3; i++) {
      const res = await api.post("/v1/notification-groups", { name }, { "idempotency-key": k });
      assert.equal(res.statusCode, 201, res.body);
    }
    assert.deepEqual(await groupNames(dev.apiKey), ["General", name].sort());
    const wk = key();
    const body = { name: "Welcome", notificationGroupId: dev.generalGroupId, steps: [] };
    const a = await api.post("/v1/notification-templates", body, { "idempotency-key": wk });
    const b = await api.post("/v1/notification-templates", body, { "idempotency-key": wk });
    assert.equal(b.json().data._id, a.json().data._id);
    assert.equal((await api.get("/v1/workflows")).json().totalCount, 1);
  });

  test("without a key, two identical creates are two workflows", async () => {
    const { dev } = await ctx.tenant();
    const api = ctx.client(dev.apiKey);
    const body = { name: "Twice", notificationGroupId: dev.generalGroupId };
    assert.equal((await api.post("/v1/workflows", body)).statusCode, 201);
    assert.equal((await api.post("/v1/workflows", body)).statusCode, 201);
    assert.equal((await api.get("/v1/workflows")).json().totalCount, 2);
  });

  test("the same body with its keys in another order is the same request", async () => {
    const { dev } = await ctx.tenant();
    const api = ctx.client(dev.apiKey);
    const k = key();
    const first = await api.post(
      "/v1/workflows",
      `{"name":"Ordered","notificationGroupId":"${dev.generalGroupId}","tags":["a"]}`,
      { "idempotency-key": k },
    );
    const second = await api.post(
      "/v1/workflows",
      `{"tags":["a"],"notificationGroupId":"${dev.generalGroupId}","name":"Ordered"}`,
      { "idempotency-key": k },
    );
    assert.equal(second.statusCode, 201, second.body);
    assert.equal(second.headers["idempotency-replay"], "true");
    assert.equal(second.json().data._id, first.json().data._id);
  });

  test("the key on another path is another request: 422", async () => {
    const { dev } = await ctx.tenant();
    const api = ctx.client(dev.apiKey);
    const k = key();
    const body = { name: "Path bound", notificationGroupId: dev.generalGroupId };
    assert.equal((await api.post("/v1/workflows", body, { "idempotency-key": k })).statusCode, 201);
    const other = await api.post("/v1/notification-templates", body, { "idempotency-key": k });
    assert.equal(other.statusCode, 422, other.body);
  });

  test("a PATCH replay answers as the first time and does not apply again", async () => {
    const { dev } = await ctx.tenant();
    const api = ctx.client(dev.apiKey);
    const group = await createGroup(ctx, dev.apiKey, "Before");
    const k = key();
    const first = await api.patch(
      `/v1/notification-groups/${group._id}`,
      { name: "After" },
      { "idempotency-key": k },
    );
    assert.equal(first.statusCode, 200, first.body);
    const later = await api.patch(`/v1/notification-groups/${group._id}`, { name: "Later" });
    assert.equal(later.statusCode, 200, later.body);
    const replay = await api.patch(
      `/v1/notification-groups/${group._id}`,
      { name: "After" },
      { "idempotency-key": k },
    );
    assert.equal(replay.statusCode, 200);
    assert.equal(replay.headers["idempotency-replay"], "true");
    assert.equal(replay.body, first.body);
    assert.equal((await api.get(`/v1/notification-groups/${group._id}`)).json().data.name, "Later");
  });

  test("keys are scoped to the environment: one key in two environments is two requests", async () => {
    const { dev, prod } = await ctx.tenant();
    const k = key();
    const a = await ctx
      .client(dev.apiKey)
      .post("/v1/notification-groups", { name: "Shared" }, { "idempotency-key": k });
    const b = await ctx
      .client(prod.apiKey)
      .post("/v1/notification-groups", { name: "Shared" }, { "idempotency-key": k });
    assert.equal(a.statusCode, 201, a.body);
    assert.equal(b.statusCode, 201, b.body);
    assert.equal(b.headers["idempotency-replay"], undefined);
    assert.notEqual(a.json().data._id, b.json().data._id);
    assert.equal(b.json().data._environmentId, prod.environmentId);
  });

  test("a key of 255 characters is taken; 256 or an empty one is a 400 naming the header", async () => {
    const { dev } = await ctx.tenant();
    const api = ctx.client(dev.apiKey);
    const ok = await api.post(
      "/v1/notification-groups",
      { name: uniqueName("Long key") },
      { "idempotency-key": "k".repeat(255) },
    );
    assert.equal(ok.statusCode, 201, ok.body);
    for (const bad of ["k".repeat(256), ""]) {
      const res = await api.post(
        "/v1/notification-groups",
        { name: uniqueName("Bad key") },
        { "idempotency-key": bad },
      );
      assert.equal(res.statusCode, 400, res.body);
      assert.deepEqual(
        res.json().errors.map((e: { field: string }) => e.field),
        ["idempotency-key"],
      );
    }
    assert.equal((await groupNames(dev.apiKey)).length, 2);
  });

  test("a failed request keeps nothing: the same key may carry a corrected request", async () => {
    const { dev } = await ctx.tenant();
    const api = ctx.client(dev.apiKey);
    const k = key();
    const duplicate = await api.post(
      "/v1/notification-groups",
      { name: "General" },
      { "idempotency-key": k },
    );
    assert.equal(duplicate.statusCode, 409, duplicate.body);
    const again = await api.post("/v1/notification-groups", { name: "General" }, { "idempotency-key": k });
    assert.equal(again.statusCode, 409, again.body);
    assert.equal(again.headers["idempotency-replay"], undefined);
    const fixed = await api.post(
      "/v1/notification-groups",
      { name: "Not General" },
      { "idempotency-key": k },
    );
    assert.equal(fixed.statusCode, 201, fixed.body);
  });

  test("while the first request with the key runs, the same request is a 409 with Retry-After: 1", async () => {
    const { dev } = await ctx.tenant();
    const k = key();
    const body = { name: "In flight" };
    const now = new Date();
    // A claim as a running request leaves it: status 0, claimed a moment ago.
    assert.ok(
      await claimKey(ctx.store.db, {
        environmentId: dev.environmentId,
        key: k,
        requestHash: hashRequest("POST", "/v1/notification-groups", body),
        token: randomUUID(),
        now: now.toISOString(),
        expiresAt: new Date(now.getTime() + KEY_TTL_MS).toISOString(),
      }),
    );
    const res = await ctx.client(dev.apiKey).post("/v1/notification-groups", body, { "idempotency-key": k });
    assert.equal(res.statusCode, 409, res.body);
    assert.equal(res.headers["retry-after"], "1");
    assert.match(res.json().message, /still being processed/);
    // Another body with that key is a 422 even then.
    const other = await ctx
      .client(dev.apiKey)
      .post("/v1/notification-groups", { name: "Else" }, { "idempotency-key": k });
    assert.equal(other.statusCode, 422, other.body);
    assert.deepEqual(await groupNames(dev.apiKey), ["General"]);
  });

  test("concurrent requests with one key create one resource; the others replay it or are told to retry", async () => {
    const { dev } = await ctx.tenant();
    const api = ctx.client(dev.apiKey);
    const k = key();
    const body = { name: "Raced", notificationGroupId: dev.generalGroupId };
    const results = await Promise.all(
      Array.from({ length: 8 }, () => api.post("/v1/workflows", body, { "idempotency-key": k })),
    );
    const created = results.filter((r) => r.statusCode === 201);
    assert.ok(created.length >= 1, "one of them created it");
    assert.equal(new Set(created.map((r) => r.json().data._id)).size, 1);
    assert.equal(created.filter((r) => r.headers["idempotency-replay"] === undefined).length, 1);
    for (const r of results.filter((r) => r.statusCode !== 201)) {
      assert.equal(r.statusCode, 409, r.body);
      assert.equal(r.headers["retry-after"], "1");
    }
    assert.equal((await api.get("/v1/workflows")).json().totalCount, 1);
    // Once done, a retry of any of them replays.
    const retry = await api.post("/v1/workflows", body, { "idempotency-key": k });
    assert.equal(retry.headers["idempotency-replay"], "true");
    assert.equal(retry.json().data._id, created[0]?.json().data._id);
  });

  test("after a restart (a new process: nothing in memory) a finished request replays from the database", async () => {
    const { dev } = await ctx.tenant();
    const k = key();
    const body = { name: uniqueName("Durable") };
    const first = await ctx
      .client(dev.apiKey)
      .post("/v1/notification-groups", body, { "idempotency-key": k });
    assert.equal(first.statusCode, 201, first.body);
    const restarted = await buildApp({ store: ctx.store });
    try {
      const retry = await restarted.inject({
        method: "POST",
        url: "/v1/notification-groups",
        headers: {
          authorization: `ApiKey ${dev.apiKey}`,
          "content-type": "application/json",
          "idempotency-key": k,
        },
        payload: JSON.stringify(body),
      });
      assert.equal(retry.statusCode, 201, retry.body);
      assert.equal(retry.headers["idempotency-replay"], "true");
      assert.equal(retry.body, first.body);
    } finally {
      await restarted.close();
    }
  });

  test("a claim whose process died before committing is taken over after the lease: the retry creates it once", async () => {
    const { dev } = await ctx.tenant();
    const k = key();
    const body = { name: "Orphaned" };
    const claimedAt = new Date(Date.now() - CLAIM_LEASE_MS - 1000);
    await claimKey(ctx.store.db, {
      environmentId: dev.environmentId,
      key: k,
      requestHash: hashRequest("POST", "/v1/notification-groups", body),
      token: randomUUID(),
      now: claimedAt.toISOString(),
      expiresAt: new Date(claimedAt.getTime() + KEY_TTL_MS).toISOString(),
    });
    const api = ctx.client(dev.apiKey);
    const res = await api.post("/v1/notification-groups", body, { "idempotency-key": k });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.headers["idempotency-replay"], undefined);
    const replay = await api.post("/v1/notification-groups", body, { "idempotency-key": k });
    assert.equal(replay.headers["idempotency-replay"], "true");
    assert.deepEqual(await groupNames(dev.apiKey), ["General", "Orphaned"]);
  });

  test("a request whose claim was taken over cannot store its response (so its write rolls back)", async () => {
    const { dev } = await ctx.tenant();
    const now = new Date();
    const claim = {
      environmentId: dev.environmentId,
      key: key(),
      requestHash: "h",
      token: randomUUID(),
      now: now.toISOString(),
      expiresAt: new Date(now.getTime() + KEY_TTL_MS).toISOString(),
    };
    assert.ok(await claimKey(ctx.store.db, claim));
    const taker = { ...claim, token: randomUUID() };
    // Not abandoned yet: no takeover.
    assert.equal(await takeOverKey(ctx.store.db, taker, new Date(now.getTime() - 1).toISOString()), false);
    assert.ok(await takeOverKey(ctx.store.db, taker, new Date(now.getTime() + 1).toISOString()));
    assert.equal(await completeKey(ctx.store.db, claim, 201, "{}"), false);
    assert.ok(await completeKey(ctx.store.db, taker, 201, '{"data":1}'));
    assert.equal((await findKey(ctx.store.db, dev.environmentId, claim.key))?.responseBody, '{"data":1}');
  });

  test("an expired key is a new request; expired keys are purged, live ones kept", async () => {
    const { dev } = await ctx.tenant();
    const api = ctx.client(dev.apiKey);
    const k = key();
    const first = await api.post("/v1/notification-groups", { name: "Yesterday" }, { "idempotency-key": k });
    assert.equal(first.statusCode, 201);
    await ctx.store.db
      .updateTable("idempotency_keys")
      .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
      .where("environment_id", "=", dev.environmentId)
      .where("key", "=", k)
      .execute();
    // The same key with another body is no longer a 422: the old request is forgotten.
    const fresh = await api.post("/v1/notification-groups", { name: "Today" }, { "idempotency-key": k });
    assert.equal(fresh.statusCode, 201, fresh.body);
    assert.equal(fresh.headers["idempotency-replay"], undefined);

    // 2,500 expired keys (more than one purge batch) and one live key.
    const past = new Date(Date.now() - 2 * KEY_TTL_MS).toISOString();
    const expiredAt = new Date(Date.now() - KEY_TTL_MS).toISOString();
    const rows = Array.from({ length: 2500 }, (_, i) => ({
      environment_id: dev.environmentId,
      key: `old-${i}`,
      request_hash: "h",
      status_code: 201,
      response_body: "{}",
      created_at: past,
      expires_at: expiredAt,
    }));
    for (let i = 0; i < rows.length; i += 500) {
      await ctx.store.db
        .insertInto("idempotency_keys")
        .values(rows.slice(i, i + 500))
        .execute();
    }
    const purged = await purgeExpiredIdempotencyKeys(ctx.store.db, new Date());
    assert.ok(purged >= 2500, `purged ${purged}`);
    const left = await ctx.store.db
      .selectFrom("idempotency_keys")
      .select("key")
      .where("environment_id", "=", dev.environmentId)
      .execute();
    assert.deepEqual(
      left.map((r) => r.key),
      [k],
    );
  });
});
