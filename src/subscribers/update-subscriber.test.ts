import assert from "node:assert/strict";
import { test } from "node:test";
import { assertErrorBody } from "../../test/error-body.ts";
import { createSubscriber, nextMillisecond } from "../../test/factories.ts";
import { forEachBackend } from "../../test/harness.ts";

forEachBackend("PUT /v1/subscribers/:subscriberId", (ctx) => {
  test("changes the fields sent and only those; same _id, later updatedAt", async () => {
    const { dev } = await ctx.tenant();
    const before = await createSubscriber(ctx, dev.apiKey, {
      subscriberId: "u",
      firstName: "Ada",
      lastName: "Byron",
      email: "ada@example.com",
      data: { keep: true },
    });
    await nextMillisecond();
    const res = await ctx
      .client(dev.apiKey)
      .put("/v1/subscribers/u", { lastName: "Lovelace", phone: "+1 555" });
    assert.equal(res.statusCode, 200, res.body);
    const after = res.json().data;
    assert.deepEqual(
      { ...after, updatedAt: "" },
      { ...before, lastName: "Lovelace", phone: "+1 555", updatedAt: "" },
    );
    assert.ok(after.updatedAt > String(before.updatedAt));
    assert.deepEqual((await ctx.client(dev.apiKey).get("/v1/subscribers/u")).json().data, after);
  });

  test("null or an empty string clears a field; an empty body changes nothing", async () => {
    const { dev } = await ctx.tenant();
    const before = await createSubscriber(ctx, dev.apiKey, {
      subscriberId: "u",
      email: "a@example.com",
      locale: "fr",
      data: { x: 1 },
    });
    const api = ctx.client(dev.apiKey);
    const same = await api.put("/v1/subscribers/u", {});
    assert.deepEqual(same.json().data, before);
    const cleared = (await api.put("/v1/subscribers/u", { email: "", locale: null, data: null })).json().data;
    assert.equal(cleared.email, "");
    assert.equal(cleared.locale, "");
    assert.deepEqual(cleared.data, {});
  });

  test("bad fields → 400 naming them, and the subscriber is unchanged", async () => {
    const { dev } = await ctx.tenant();
    const before = await createSubscriber(ctx, dev.apiKey, { subscriberId: "u", email: "a@example.com" });
    const api = ctx.client(dev.apiKey);
    for (const [body, fields] of [
      [{ email: "nope", firstName: "Changed" }, ["email"]],
      [{ locale: "not a tag" }, ["locale"]],
      [{ data: "text" }, ["data"]],
      [{ data: { big: "x".repeat(70_000) } }, ["data"]],
      [{ subscriberId: "other" }, ["subscriberId"]],
      [{ email: "x", locale: "!" }, ["email", "locale"]],
    ] as const) {
      const res = await api.put("/v1/subscribers/u", body);
      assertErrorBody(res, 400, { path: "/v1/subscribers/u", fields: [...fields] });
    }
    assert.deepEqual((await api.get("/v1/subscribers/u")).json().data, before);
  });

  test("an unknown subscriber, or another environment's, is a 404 and nothing is created", async () => {
    const { dev, prod } = await ctx.tenant();
    await createSubscriber(ctx, prod.apiKey, { subscriberId: "p", firstName: "Prod" });
    for (const id of ["p", "nobody"]) {
      const res = await ctx.client(dev.apiKey).put(`/v1/subscribers/${id}`, { firstName: "Dev" });
      assertErrorBody(res, 404, { path: `/v1/subscribers/${id}`, message: /was not found/ });
    }
    assert.equal((await ctx.client(dev.apiKey).get("/v1/subscribers")).json().totalCount, 0);
    assert.equal((await ctx.client(prod.apiKey).get("/v1/subscribers/p")).json().data.firstName, "Prod");
  });
});

forEachBackend("PATCH /v1/subscribers/:subscriberId/online-status", (ctx) => {
  test("sets isOnline and stamps lastOnlineAt; takes {isOnline} and @novu/node's {online}", async () => {
    const { dev } = await ctx.tenant();
    await createSubscriber(ctx, dev.apiKey, { subscriberId: "u" });
    const api = ctx.client(dev.apiKey);
    const on = await api.patch("/v1/subscribers/u/online-status", { isOnline: true });
    assert.equal(on.statusCode, 200, on.body);
    assert.equal(on.json().data.isOnline, true);
    assert.match(on.json().data.lastOnlineAt, /^\d{4}-\d{2}-\d{2}T/);
    await nextMillisecond();
    const off = await api.patch("/v1/subscribers/u/online-status", { online: false });
    assert.equal(off.json().data.isOnline, false);
    assert.ok(off.json().data.lastOnlineAt > on.json().data.lastOnlineAt);
  });

  test("a missing, non-boolean or contradictory flag is a 400; an unknown subscriber a 404", async () => {
    const { dev } = await ctx.tenant();
    const before = await createSubscriber(ctx, dev.apiKey, { subscriberId: "u" });
    const api = ctx.client(dev.apiKey);
    const path = "/v1/subscribers/u/online-status";
    assertErrorBody(await api.patch(path, {}), 400, {
      path,
      fields: ["isOnline"],
      message: /^isOnline is required$/,
    });
    assertErrorBody(await api.patch(path, { isOnline: "yes" }), 400, { path, fields: ["isOnline"] });
    assertErrorBody(await api.patch(path, { isOnline: true, online: false }), 400, {
      path,
      fields: ["online"],
    });
    assert.deepEqual((await api.get("/v1/subscribers/u")).json().data, before);
    const missing = "/v1/subscribers/nobody/online-status";
    assertErrorBody(await api.patch(missing, { isOnline: true }), 404, { path: missing });
  });
});
