import assert from "node:assert/strict";
import { test } from "node:test";
import { assertErrorBody } from "../../test/error-body.ts";
import { createSubscriber, storedChannelCredentials } from "../../test/factories.ts";
import { forEachBackend } from "../../test/harness.ts";

const PATH = "/v1/subscribers/bulk";

forEachBackend("POST /v1/subscribers/bulk", (ctx) => {
  test("upserts each entry and says which were created, updated or refused", async () => {
    const { dev, organizationId } = await ctx.tenant();
    const api = ctx.client(dev.apiKey);
    const existing = await createSubscriber(ctx, dev.apiKey, {
      subscriberId: "old",
      firstName: "Old",
      email: "o@example.com",
    });
    const res = await api.post(PATH, {
      subscribers: [
        { subscriberId: "new-1", firstName: "One" },
        { subscriberId: "old", lastName: "Timer" },
        { subscriberId: "", firstName: "Nobody" },
        { subscriberId: "new-2", email: "not-an-email" },
        {
          subscriberId: "new-3",
          email: "three@example.com",
          channels: [{ providerId: "slack", credentials: { webhookUrl: "https://h.example/3" } }],
        },
        { subscriberId: "new-1", lastName: "Again" },
      ],
    });
    assert.equal(res.statusCode, 201, res.body);
    assert.deepEqual(res.json(), {
      data: {
        created: [{ subscriberId: "new-1" }, { subscriberId: "new-3" }],
        updated: [{ subscriberId: "old" }, { subscriberId: "new-1" }],
        failed: [
          { subscriberId: "", message: "subscriberId must not be empty" },
          { subscriberId: "new-2", message: "email must be an email address" },
        ],
      },
    });
    const old = (await api.get("/v1/subscribers/old")).json().data;
    assert.equal(old._id, existing._id);
    assert.equal(old.firstName, "Old");
    assert.equal(old.lastName, "Timer");
    assert.equal(old.email, "o@example.com");
    const one = (await api.get("/v1/subscribers/new-1")).json().data;
    assert.deepEqual(
      [one.firstName, one.lastName],
      ["One", "Again"],
      "a repeated entry's fields are merged in order",
    );
    const three = (await api.get("/v1/subscribers/new-3")).json().data;
    assert.equal(three.channels[0].credentials.webhookUrl, "https://h.example/********");
    assert.deepEqual(
      await storedChannelCredentials(ctx, { organizationId, environmentId: dev.environmentId }, "new-3"),
      [{ providerId: "slack", webhookUrl: "https://h.example/3", deviceTokens: [] }],
    );
    assertErrorBody(await api.get("/v1/subscribers/new-2"), 404, { path: "/v1/subscribers/new-2" });
    assert.equal((await api.get("/v1/subscribers")).json().totalCount, 3);
  });

  test("500 entries at once", async () => {
    const { dev } = await ctx.tenant();
    const api = ctx.client(dev.apiKey);
    const subscribers = Array.from({ length: 500 }, (_, i) => ({
      subscriberId: `bulk-${i}`,
      firstName: `N${i}`,
    }));
    const first = await api.post(PATH, { subscribers });
    assert.equal(first.statusCode, 201, first.body);
    assert.equal(first.json().data.created.length, 500);
    const second = await api.post(PATH, { subscribers: subscribers.map((s) => ({ ...s, lastName: "L" })) });
    assert.equal(second.json().data.updated.length, 500);
    assert.equal(second.json().data.created.length, 0);
    const page = (await api.get("/v1/subscribers?limit=100&page=4")).json();
    assert.equal(page.totalCount, 500);
    assert.ok(page.data.every((s: { lastName: string }) => s.lastName === "L"));
  });

  for (const [label, body, fields] of [
    [
      "501 entries",
      { subscribers: Array.from({ length: 501 }, (_, i) => ({ subscriberId: `x${i}` })) },
      ["subscribers"],
    ],
    ["a list that is not one", { subscribers: { subscriberId: "x" } }, ["subscribers"]],
    ["no list at all", {}, ["subscribers"]],
    [
      "an entry of the wrong type",
      { subscribers: [{ subscriberId: "ok" }, { subscriberId: 7 }] },
      ["subscribers[1].subscriberId"],
    ],
    ["an entry that is not an object", { subscribers: [{ subscriberId: "ok" }, "x"] }, ["subscribers[1]"]],
    [
      "an entry with an unknown field",
      { subscribers: [{ subscriberId: "ok", role: "admin" }] },
      ["subscribers[0].role"],
    ],
  ] as const) {
    test(`${label} → 400, and nothing is written`, async () => {
      const { dev } = await ctx.tenant();
      const res = await ctx.client(dev.apiKey).post(PATH, body as Record<string, unknown>);
      assertErrorBody(res, 400, { path: PATH, fields: [...fields] });
      assert.equal((await ctx.client(dev.apiKey).get("/v1/subscribers")).json().totalCount, 0);
    });
  }

  test("a body that is a bare list → 400", async () => {
    const { dev } = await ctx.tenant();
    const res = await ctx.client(dev.apiKey).post(PATH, [{ subscriberId: "x" }]);
    assertErrorBody(res, 400, { path: PATH, fields: ["body"] });
  });
});
