import assert from "node:assert/strict";
import { test } from "node:test";
import { assertErrorBody } from "../../test/error-body.ts";
import {
  createSubscriber,
  nextMillisecond,
  storedChannelCredentials,
  uniqueName,
} from "../../test/factories.ts";
import { forEachBackend } from "../../test/harness.ts";

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

forEachBackend("POST /v1/subscribers", (ctx) => {
  test("creates a subscriber with every field, the unset ones empty (never null)", async () => {
    const { dev } = await ctx.tenant();
    const res = await ctx.client(dev.apiKey).post("/v1/subscribers", { subscriberId: "user-1" });
    assert.equal(res.statusCode, 201, res.body);
    const s = res.json().data;
    assert.match(s._id, /^[0-9a-f]{24}$/);
    assert.match(s.createdAt, ISO);
    assert.equal(s.updatedAt, s.createdAt);
    assert.deepEqual(
      { ...s, _id: "", createdAt: "", updatedAt: "" },
      {
        _id: "",
        _organizationId: s._organizationId,
        _environmentId: dev.environmentId,
        subscriberId: "user-1",
        firstName: "",
        lastName: "",
        email: "",
        phone: "",
        avatar: "",
        locale: "",
        timezone: "",
        data: {},
        channels: [],
        isOnline: false,
        lastOnlineAt: "",
        deleted: false,
        createdAt: "",
        updatedAt: "",
      },
    );
  });

  test("stores every field sent, and the channels' credentials per provider (answers mask them)", async () => {
    const { dev, organizationId } = await ctx.tenant();
    const s = await createSubscriber(ctx, dev.apiKey, {
      subscriberId: "user-2",
      firstName: "Ada",
      lastName: "Lovelace",
      email: " ada@example.com ",
      phone: "+441234567890",
      avatar: "https://example.com/ada.png",
      locale: "en-GB",
      timezone: "Europe/London",
      data: { plan: "pro", seats: 3, tags: ["a"] },
      channels: [
        { providerId: "slack", credentials: { webhookUrl: "https://hooks.slack.com/services/x" } },
        {
          providerId: "fcm",
          integrationIdentifier: "fcm-main",
          credentials: { deviceTokens: ["t1", "t1", "t2"] },
        },
      ],
    });
    assert.equal(s.email, "ada@example.com", "the email is trimmed");
    assert.equal(s.locale, "en-GB");
    assert.equal(s.timezone, "Europe/London");
    assert.deepEqual(s.data, { plan: "pro", seats: 3, tags: ["a"] });
    assert.deepEqual(s.channels, [
      {
        providerId: "slack",
        integrationIdentifier: "",
        _integrationId: "",
        credentials: { webhookUrl: "https://hooks.slack.com/********", deviceTokens: [] },
      },
      {
        providerId: "fcm",
        integrationIdentifier: "fcm-main",
        _integrationId: "",
        credentials: { webhookUrl: "", deviceTokens: ["********", "********"] },
      },
    ]);
    assert.deepEqual(
      await storedChannelCredentials(ctx, { organizationId, environmentId: dev.environmentId }, "user-2"),
      [
        { providerId: "slack", webhookUrl: "https://hooks.slack.com/services/x", deviceTokens: [] },
        { providerId: "fcm", webhookUrl: "", deviceTokens: ["t1", "t2"] },
      ],
    );
    const read = await ctx.client(dev.apiKey).get("/v1/subscribers/user-2");
    assert.deepEqual(read.json().data, s);
  });

  test("a repeat with the same subscriberId is an update of the fields sent: same _id, 201", async () => {
    const { dev } = await ctx.tenant();
    const first = await createSubscriber(ctx, dev.apiKey, {
      subscriberId: "user-3",
      firstName: "Grace",
      email: "grace@example.com",
      data: { a: 1 },
    });
    await nextMillisecond();
    const again = await ctx.client(dev.apiKey).post("/v1/subscribers", {
      subscriberId: "user-3",
      lastName: "Hopper",
      data: { b: 2 },
      email: null,
    });
    assert.equal(again.statusCode, 201, again.body);
    const s = again.json().data;
    assert.equal(s._id, first._id);
    assert.equal(s.createdAt, first.createdAt);
    assert.notEqual(s.updatedAt, first.updatedAt);
    assert.equal(s.firstName, "Grace", "a field not sent keeps its value");
    assert.equal(s.lastName, "Hopper");
    assert.equal(s.email, "", "null clears a field");
    assert.deepEqual(s.data, { b: 2 }, "data is replaced whole");
    // Only the subscriberId: nothing changes, not even updatedAt.
    const bare = await ctx.client(dev.apiKey).post("/v1/subscribers", { subscriberId: "user-3" });
    assert.deepEqual(bare.json().data, s);
    const list = await ctx.client(dev.apiKey).get("/v1/subscribers");
    assert.equal(list.json().totalCount, 1);
  });

  test("20 concurrent creates of one subscriberId: all succeed, one subscriber, one _id", async () => {
    const { dev } = await ctx.tenant();
    const api = ctx.client(dev.apiKey);
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        api.post("/v1/subscribers", { subscriberId: "racer", firstName: `Racer ${i}` }),
      ),
    );
    for (const res of responses) assert.equal(res.statusCode, 201, res.body);
    const ids = new Set(responses.map((res) => res.json().data._id));
    assert.equal(ids.size, 1, `one _id, got ${[...ids].join(", ")}`);
    const list = await api.get("/v1/subscribers?limit=100");
    assert.equal(list.json().totalCount, 1);
    assert.equal(list.json().data[0]._id, [...ids][0]);
    const rows = await ctx.store.db
      .selectFrom("subscribers")
      .select("id")
      .where("environment_id", "=", dev.environmentId)
      .execute();
    assert.equal(rows.length, 1);
  });

  test("the same subscriberId in two environments is two subscribers", async () => {
    const { dev, prod } = await ctx.tenant();
    const a = await createSubscriber(ctx, dev.apiKey, { subscriberId: "shared", firstName: "Dev" });
    const b = await createSubscriber(ctx, prod.apiKey, { subscriberId: "shared", firstName: "Prod" });
    assert.notEqual(a._id, b._id);
    assert.equal((await ctx.client(dev.apiKey).get("/v1/subscribers/shared")).json().data.firstName, "Dev");
    assert.equal((await ctx.client(prod.apiKey).get("/v1/subscribers/shared")).json().data.firstName, "Prod");
  });

  test("a 128-character subscriberId with unicode, spaces and a slash round-trips through the path", async () => {
    const { dev } = await ctx.tenant();
    const subscriberId = `é/ x🙂${"y".repeat(123)}`;
    assert.equal([...subscriberId].length, 128);
    const s = await createSubscriber(ctx, dev.apiKey, { subscriberId });
    const read = await ctx.client(dev.apiKey).get(`/v1/subscribers/${encodeURIComponent(subscriberId)}`);
    assert.equal(read.statusCode, 200, read.body);
    assert.equal(read.json().data._id, s._id);
  });

  const bad: [string, Record<string, unknown>, string[], RegExp][] = [
    [
      "no subscriberId",
      { subscriberId: undefined, firstName: "x" },
      ["subscriberId"],
      /^subscriberId is required/,
    ],
    ["an empty subscriberId", { subscriberId: "" }, ["subscriberId"], /^subscriberId must not be empty/],
    ["a blank subscriberId", { subscriberId: "   " }, ["subscriberId"], /must not be empty/],
    ["a subscriberId of 129 characters", { subscriberId: "a".repeat(129) }, ["subscriberId"], /at most 128/],
    ["a subscriberId with a control character", { subscriberId: "a\u0001b" }, ["subscriberId"], /control/],
    ["a subscriberId with a newline", { subscriberId: "a\nb" }, ["subscriberId"], /control/],
    ["a subscriberId that is a number", { subscriberId: 42 }, ["subscriberId"], /must be a string/],
    ["an email that is not an address", { email: "not-an-email" }, ["email"], /^email must be an email/],
    ["an email without a domain dot", { email: "a@localhost" }, ["email"], /email/],
    ["an email that is a number", { email: 5 }, ["email"], /email/],
    ["data that is a string", { data: "x" }, ["data"], /^data must be/],
    ["data that is a list", { data: [1, 2] }, ["data"], /^data must be/],
    ["data over 64 KiB as JSON", { data: { big: "x".repeat(65 * 1024) } }, ["data"], /64 KiB/],
    ["a locale that is not a language tag", { locale: "english!" }, ["locale"], /language tag/],
    ["a one-letter locale", { locale: "e" }, ["locale"], /language tag/],
    ["a timezone that is not an IANA zone", { timezone: "Mars/Olympus" }, ["timezone"], /IANA timezone/],
    ["an offset instead of a zone", { timezone: "+02:00" }, ["timezone"], /IANA timezone/],
    ["a first name with a control character", { firstName: "A\u0007" }, ["firstName"], /control/],
    ["an unknown field", { nickname: "x" }, ["nickname"], /not allowed/],
    [
      "a webhook that is not http(s)",
      { channels: [{ providerId: "slack", credentials: { webhookUrl: "ftp://x.example" } }] },
      ["channels[0].credentials.webhookUrl"],
      /http or https URL/,
    ],
    [
      "a provider id with a space",
      { channels: [{ providerId: "sl ack", credentials: {} }] },
      ["channels[0].providerId"],
      /providerId/,
    ],
  ];
  for (const [label, body, fields, message] of bad) {
    test(`${label} → 400 naming the field; nothing is written`, async () => {
      const { dev } = await ctx.tenant();
      const api = ctx.client(dev.apiKey);
      const existing = await createSubscriber(ctx, dev.apiKey, { subscriberId: "kept", firstName: "Kept" });
      const res = await api.post("/v1/subscribers", { subscriberId: uniqueName("new"), ...body });
      assertErrorBody(res, 400, { path: "/v1/subscribers", fields, message });
      // The same bad fields against an existing subscriber change nothing either.
      if (!("subscriberId" in body)) {
        const update = await api.post("/v1/subscribers", { subscriberId: "kept", ...body });
        assertErrorBody(update, 400, { path: "/v1/subscribers", fields, message });
      }
      const list = await api.get("/v1/subscribers?limit=100");
      assert.equal(list.json().totalCount, 1);
      assert.deepEqual(list.json().data[0], existing);
    });
  }
});

forEachBackend("GET /v1/subscribers/:subscriberId", (ctx) => {
  test("an unknown subscriberId, or another environment's, is a 404", async () => {
    const { dev, prod } = await ctx.tenant();
    await createSubscriber(ctx, prod.apiKey, { subscriberId: "prod-only" });
    for (const id of ["prod-only", "never-existed"]) {
      const res = await ctx.client(dev.apiKey).get(`/v1/subscribers/${id}`);
      assertErrorBody(res, 404, {
        path: `/v1/subscribers/${id}`,
        message: new RegExp(`^Subscriber ${id} was not found$`),
      });
    }
  });

  test("a subscriberId that is free text is not repeated in the message", async () => {
    const { dev } = await ctx.tenant();
    const id = "1 UNION SELECT key_hash FROM api_keys --";
    const path = `/v1/subscribers/${encodeURIComponent(id)}`;
    const res = await ctx.client(dev.apiKey).get(path);
    assertErrorBody(res, 404, { path, message: /^The subscriber with this subscriberId was not found$/ });
  });

  test("a subscriberId over 128 characters or with a control character in the path is a 400", async () => {
    const { dev } = await ctx.tenant();
    for (const segment of ["a".repeat(129), "a%01b", "a%0Ab"]) {
      const res = await ctx.client(dev.apiKey).get(`/v1/subscribers/${segment}`);
      assertErrorBody(res, 400, {
        path: `/v1/subscribers/${segment}`,
        fields: ["subscriberId"],
        message: /^subscriberId must be 1–128 characters without control characters$/,
      });
    }
  });
});
