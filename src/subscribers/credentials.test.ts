import assert from "node:assert/strict";
import { test } from "node:test";
import { assertErrorBody } from "../../test/error-body.ts";
import { createSubscriber } from "../../test/factories.ts";
import { forEachBackend } from "../../test/harness.ts";

const PATH = "/v1/subscribers/u/credentials";

forEachBackend("subscriber credentials", (ctx) => {
  async function setup() {
    const { dev, prod } = await ctx.tenant();
    await createSubscriber(ctx, dev.apiKey, { subscriberId: "u" });
    return { dev, prod, api: ctx.client(dev.apiKey) };
  }
  const channelsOf = async (api: ReturnType<typeof ctx.client>) =>
    (await api.get("/v1/subscribers/u")).json().data.channels;

  test("PUT sets one provider's credentials, replacing what it had; other providers stay", async () => {
    const { api } = await setup();
    const first = await api.put(PATH, {
      providerId: "slack",
      integrationIdentifier: "slack-main",
      credentials: { webhookUrl: "https://hooks.slack.com/a" },
    });
    assert.equal(first.statusCode, 200, first.body);
    assert.deepEqual(first.json().data.channels, [
      {
        providerId: "slack",
        integrationIdentifier: "slack-main",
        _integrationId: "",
        credentials: { webhookUrl: "https://hooks.slack.com/a", deviceTokens: [] },
      },
    ]);
    await api.put(PATH, { providerId: "fcm", credentials: { deviceTokens: ["a", "b", "a"] } });
    await api.put(PATH, { providerId: "fcm", credentials: { deviceTokens: ["c"] } });
    const channels = await channelsOf(api);
    assert.deepEqual(
      channels.map((c: { providerId: string; credentials: unknown }) => [c.providerId, c.credentials]),
      [
        ["slack", { webhookUrl: "https://hooks.slack.com/a", deviceTokens: [] }],
        ["fcm", { webhookUrl: "", deviceTokens: ["c"] }],
      ],
    );
  });

  test("PATCH merges: a webhookUrl replaces, device tokens join, an empty list clears", async () => {
    const { api } = await setup();
    await api.put(PATH, {
      providerId: "fcm",
      credentials: { deviceTokens: ["a"], webhookUrl: "https://x.example/1" },
    });
    const merged = await api.patch(PATH, { providerId: "fcm", credentials: { deviceTokens: ["b", "a"] } });
    assert.equal(merged.statusCode, 200, merged.body);
    assert.deepEqual(merged.json().data.channels[0].credentials, {
      webhookUrl: "https://x.example/1",
      deviceTokens: ["a", "b"],
    });
    await api.patch(PATH, { providerId: "fcm", credentials: { webhookUrl: "https://x.example/2" } });
    assert.deepEqual((await channelsOf(api))[0].credentials, {
      webhookUrl: "https://x.example/2",
      deviceTokens: ["a", "b"],
    });
    await api.patch(PATH, { providerId: "fcm", credentials: { deviceTokens: [] } });
    assert.deepEqual((await channelsOf(api))[0].credentials.deviceTokens, []);
    // PATCH for a provider it has none for adds it.
    await api.patch(PATH, {
      providerId: "discord",
      credentials: { webhookUrl: "https://discord.example/w" },
    });
    assert.equal((await channelsOf(api)).length, 2);
  });

  test("DELETE removes one provider's credentials (204); an absent provider is already removed", async () => {
    const { api } = await setup();
    await api.put(PATH, { providerId: "slack", credentials: { webhookUrl: "https://hooks.slack.com/a" } });
    await api.put(PATH, { providerId: "discord", credentials: { webhookUrl: "https://discord.example/w" } });
    const res = await api.delete(`${PATH}/slack`);
    assert.equal(res.statusCode, 204, res.body);
    assert.equal(res.body, "");
    assert.deepEqual(
      (await channelsOf(api)).map((c: { providerId: string }) => c.providerId),
      ["discord"],
    );
    assert.equal((await api.delete(`${PATH}/slack`)).statusCode, 204);
    assertErrorBody(await api.delete("/v1/subscribers/nobody/credentials/slack"), 404, {
      path: "/v1/subscribers/nobody/credentials/slack",
    });
  });

  for (const [label, body, fields] of [
    [
      "a webhook that is not a URL",
      { providerId: "slack", credentials: { webhookUrl: "not a url" } },
      ["credentials.webhookUrl"],
    ],
    [
      "a javascript: webhook",
      { providerId: "slack", credentials: { webhookUrl: "javascript:alert(1)" } },
      ["credentials.webhookUrl"],
    ],
    ["no providerId", { credentials: {} }, ["providerId"]],
    ["a providerId with a slash", { providerId: "a/b", credentials: {} }, ["providerId"]],
    ["no credentials", { providerId: "slack" }, ["credentials"]],
    [
      "device tokens that are not strings",
      { providerId: "fcm", credentials: { deviceTokens: [1] } },
      ["credentials.deviceTokens[0]"],
    ],
    ["an unknown credential", { providerId: "fcm", credentials: { apiKey: "x" } }, ["credentials.apiKey"]],
  ] as const) {
    test(`${label} → 400 (PUT and PATCH), nothing changes`, async () => {
      const { api } = await setup();
      await api.put(PATH, { providerId: "slack", credentials: { webhookUrl: "https://hooks.slack.com/a" } });
      const before = await channelsOf(api);
      assertErrorBody(await api.put(PATH, body), 400, { path: PATH, fields: [...fields] });
      assertErrorBody(await api.patch(PATH, body), 400, { path: PATH, fields: [...fields] });
      assert.deepEqual(await channelsOf(api), before);
    });
  }

  test("another environment's subscriber is a 404 and keeps its credentials", async () => {
    const { prod } = await setup();
    await createSubscriber(ctx, prod.apiKey, { subscriberId: "p" });
    const papi = ctx.client(prod.apiKey);
    await papi.put("/v1/subscribers/p/credentials", {
      providerId: "slack",
      credentials: { webhookUrl: "https://h.example/p" },
    });
    const { dev } = await ctx.tenant();
    const api = ctx.client(dev.apiKey);
    const body = { providerId: "slack", credentials: { webhookUrl: "https://evil.example" } };
    assertErrorBody(await api.put("/v1/subscribers/p/credentials", body), 404, {
      path: "/v1/subscribers/p/credentials",
    });
    assertErrorBody(await api.patch("/v1/subscribers/p/credentials", body), 404, {
      path: "/v1/subscribers/p/credentials",
    });
    assert.equal(
      (await papi.get("/v1/subscribers/p")).json().data.channels[0].credentials.webhookUrl,
      "https://h.example/p",
    );
  });
});
