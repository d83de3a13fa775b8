import assert from "node:assert/strict";
import { test } from "node:test";
import { assertErrorBody } from "../../test/error-body.ts";
import { createSubscriber, nextMillisecond } from "../../test/factories.ts";
import { forEachBackend } from "../../test/harness.ts";

forEachBackend("topics", (ctx) => {
  async function setup() {
    const tenant = await ctx.tenant();
    return { ...tenant, api: ctx.client(tenant.dev.apiKey) };
  }

  test("create (201 {_id, key}), read with its subscribers, rename, delete (204)", async () => {
    const { api, dev, organizationId } = await setup();
    const created = await api.post("/v1/topics", { key: "team:eng.backend-1_x", name: "  Backend  " });
    assert.equal(created.statusCode, 201, created.body);
    const { _id, key } = created.json().data;
    assert.match(_id, /^[0-9a-f]{24}$/);
    assert.deepEqual(created.json(), { data: { _id, key: "team:eng.backend-1_x" } });
    const read = await api.get(`/v1/topics/${key}`);
    assert.equal(read.statusCode, 200, read.body);
    const topic = read.json().data;
    assert.deepEqual(
      { ...topic, createdAt: "", updatedAt: "" },
      {
        _id,
        _organizationId: organizationId,
        _environmentId: dev.environmentId,
        key,
        name: "Backend",
        subscribers: [],
        createdAt: "",
        updatedAt: "",
      },
    );
    await nextMillisecond();
    const renamed = await api.patch(`/v1/topics/${key}`, { name: "Backend team" });
    assert.equal(renamed.statusCode, 200, renamed.body);
    assert.equal(renamed.json().data.name, "Backend team");
    assert.ok(renamed.json().data.updatedAt > topic.updatedAt);
    const deleted = await api.delete(`/v1/topics/${key}`);
    assert.equal(deleted.statusCode, 204, deleted.body);
    assertErrorBody(await api.get(`/v1/topics/${key}`), 404, {
      path: `/v1/topics/${key}`,
      message: /^Topic .* was not found$/,
    });
    // The key is free again.
    assert.equal((await api.post("/v1/topics", { key, name: "Again" })).statusCode, 201);
  });

  test("a key the environment already has → 409; another environment may use it", async () => {
    const { api, prod } = await setup();
    await api.post("/v1/topics", { key: "news", name: "News" });
    const again = await api.post("/v1/topics", { key: "news", name: "Other" });
    assertErrorBody(again, 409, {
      path: "/v1/topics",
      message: /^A topic with the key news already exists$/,
    });
    assert.equal((await api.get("/v1/topics/news")).json().data.name, "News");
    assert.equal(
      (await ctx.client(prod.apiKey).post("/v1/topics", { key: "news", name: "Prod" })).statusCode,
      201,
    );
  });

  for (const [label, body, fields] of [
    ["a key with a space", { key: "a b", name: "x" }, ["key"]],
    ["a key with a slash", { key: "a/b", name: "x" }, ["key"]],
    ["a key with a non-ASCII letter", { key: "café", name: "x" }, ["key"]],
    ["an empty key", { key: "", name: "x" }, ["key"]],
    ["a key of 101 characters", { key: "k".repeat(101), name: "x" }, ["key"]],
    ["a key that is a number", { key: 12, name: "x" }, ["key"]],
    ["no key", { name: "x" }, ["key"]],
    ["no name", { key: "ok" }, ["name"]],
    ["a blank name", { key: "ok", name: "   " }, ["name"]],
    ["a name with a control character", { key: "ok", name: "a\u0000b" }, ["name"]],
    ["an unknown field", { key: "ok", name: "x", subscribers: [] }, ["subscribers"]],
  ] as const) {
    test(`create with ${label} → 400 naming the field; nothing is created`, async () => {
      const { api } = await setup();
      assertErrorBody(await api.post("/v1/topics", body as Record<string, unknown>), 400, {
        path: "/v1/topics",
        fields: [...fields],
      });
      assert.equal((await api.get("/v1/topics")).json().totalCount, 0);
    });
  }

  test("a malformed key in the path → 400; an unknown or another environment's topic → 404", async () => {
    const { api, prod } = await setup();
    assertErrorBody(await api.get("/v1/topics/a%20b"), 400, {
      path: "/v1/topics/a%20b",
      fields: ["topicKey"],
    });
    await ctx.client(prod.apiKey).post("/v1/topics", { key: "prod-topic", name: "Prod" });
    for (const [method, url, body] of [
      ["GET", "/v1/topics/prod-topic", undefined],
      ["PATCH", "/v1/topics/prod-topic", { name: "Mine now" }],
      ["DELETE", "/v1/topics/prod-topic", undefined],
      ["POST", "/v1/topics/prod-topic/subscribers/removal", { subscribers: ["x"] }],
      ["GET", "/v1/topics/prod-topic/subscribers/x", undefined],
      ["GET", "/v1/topics/never/subscribers/x", undefined],
    ] as const) {
      const res = await api.request({
        method,
        url,
        ...(body ? { payload: body, headers: { "content-type": "application/json" } } : {}),
      });
      assertErrorBody(res, 404, { path: url });
    }
    assert.equal((await ctx.client(prod.apiKey).get("/v1/topics/prod-topic")).json().data.name, "Prod");
  });

  test("list: pages oldest first, filter by key, bounds", async () => {
    const { api } = await setup();
    for (const key of ["t1", "t2", "t3"]) {
      await api.post("/v1/topics", { key, name: key.toUpperCase() });
      await nextMillisecond();
    }
    const first = (await api.get("/v1/topics?page=0&pageSize=2")).json();
    assert.deepEqual(
      [
        first.page,
        first.pageSize,
        first.totalCount,
        first.hasMore,
        first.data.map((t: { key: string }) => t.key),
      ],
      [0, 2, 3, true, ["t1", "t2"]],
    );
    const second = (await api.get("/v1/topics?page=1&pageSize=2")).json();
    assert.deepEqual([second.hasMore, second.data.map((t: { key: string }) => t.key)], [false, ["t3"]]);
    const byKey = (await api.get("/v1/topics?key=t2")).json();
    assert.deepEqual([byKey.totalCount, byKey.data.map((t: { name: string }) => t.name)], [1, ["T2"]]);
    assert.equal((await api.get("/v1/topics")).json().pageSize, 10);
    for (const query of ["pageSize=101", "pageSize=0", "page=-1"]) {
      assertErrorBody(await api.get(`/v1/topics?${query}`), 400, {
        path: "/v1/topics",
        fields: [query.split("=")[0] as string],
      });
    }
  });

  test("add subscribers: the existing join (once), unknown ones are named; a missing topic is created", async () => {
    const { api, dev, prod } = await setup();
    await createSubscriber(ctx, dev.apiKey, { subscriberId: "a" });
    await createSubscriber(ctx, dev.apiKey, { subscriberId: "b" });
    await createSubscriber(ctx, prod.apiKey, { subscriberId: "prod-sub" });
    const res = await api.post("/v1/topics/fresh/subscribers", {
      subscribers: ["a", "ghost", "a", "prod-sub", "b"],
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), {
      data: { succeeded: ["a", "b"], failed: { notFound: ["ghost", "prod-sub"] } },
    });
    const topic = (await api.get("/v1/topics/fresh")).json().data;
    assert.equal(topic.name, "Autogenerated-fresh");
    assert.deepEqual([...topic.subscribers].sort(), ["a", "b"]);
    const again = await api.post("/v1/topics/fresh/subscribers", { subscribers: ["b"] });
    assert.deepEqual(again.json().data, { succeeded: ["b"], failed: { notFound: [] } });
    assert.equal((await api.get("/v1/topics/fresh")).json().data.subscribers.length, 2, "b is in it once");

    const member = await api.get("/v1/topics/fresh/subscribers/a");
    assert.equal(member.statusCode, 200, member.body);
    const a = (await api.get("/v1/subscribers/a")).json().data;
    assert.deepEqual(member.json().data, {
      _organizationId: topic._organizationId,
      _environmentId: topic._environmentId,
      _subscriberId: a._id,
      _topicId: topic._id,
      topicKey: "fresh",
      externalSubscriberId: "a",
    });
    // Another environment adding to the same key gets a topic of its own; this one is untouched.
    const foreign = await ctx
      .client(prod.apiKey)
      .post("/v1/topics/fresh/subscribers", { subscribers: ["a", "prod-sub"] });
    assert.deepEqual(foreign.json().data, { succeeded: ["prod-sub"], failed: { notFound: ["a"] } });
    assert.deepEqual([...(await api.get("/v1/topics/fresh")).json().data.subscribers].sort(), ["a", "b"]);
  });

  test("remove subscribers (204): gone from the topic, unknown ones ignored; delete needs an empty topic", async () => {
    const { api, dev } = await setup();
    for (const id of ["a", "b", "c"]) await createSubscriber(ctx, dev.apiKey, { subscriberId: id });
    await api.post("/v1/topics/crew/subscribers", { subscribers: ["a", "b", "c"] });
    const blocked = await api.delete("/v1/topics/crew");
    assertErrorBody(blocked, 409, { path: "/v1/topics/crew", message: /while it has 3 subscribers/ });
    const removed = await api.post("/v1/topics/crew/subscribers/removal", {
      subscribers: ["a", "ghost", "c"],
    });
    assert.equal(removed.statusCode, 204, removed.body);
    assert.equal(removed.body, "");
    assert.deepEqual((await api.get("/v1/topics/crew")).json().data.subscribers, ["b"]);
    assertErrorBody(await api.get("/v1/topics/crew/subscribers/a"), 404, {
      path: "/v1/topics/crew/subscribers/a",
      message: /^Subscriber a is not a subscriber of topic crew$/,
    });
    assertErrorBody(await api.delete("/v1/topics/crew"), 409, {
      path: "/v1/topics/crew",
      message: /1 subscriber;/,
    });
    await api.post("/v1/topics/crew/subscribers/removal", { subscribers: ["b"] });
    assert.equal((await api.delete("/v1/topics/crew")).statusCode, 204);
    // Subscribers outlive their topics.
    assert.equal((await api.get("/v1/subscribers/b")).statusCode, 200);
  });

  for (const [label, body, fields] of [
    ["a list that is not one", { subscribers: "a" }, ["subscribers"]],
    ["ids that are not strings", { subscribers: [1] }, ["subscribers[0]"]],
    ["no list", {}, ["subscribers"]],
    [
      "more than 10,000 ids",
      { subscribers: Array.from({ length: 10_001 }, (_, i) => `s${i}`) },
      ["subscribers"],
    ],
  ] as const) {
    test(`add or remove with ${label} → 400; membership unchanged`, async () => {
      const { api, dev } = await setup();
      await createSubscriber(ctx, dev.apiKey, { subscriberId: "a" });
      await api.post("/v1/topics/t/subscribers", { subscribers: ["a"] });
      for (const url of ["/v1/topics/t/subscribers", "/v1/topics/t/subscribers/removal"]) {
        assertErrorBody(await api.post(url, body as Record<string, unknown>), 400, {
          path: url,
          fields: [...fields],
        });
      }
      assert.deepEqual((await api.get("/v1/topics/t")).json().data.subscribers, ["a"]);
    });
  }
  test("adding subscribers while they are deleted: never a 5xx, never a membership without its subscriber", async () => {
    const { api, dev } = await setup();
    const ids = Array.from({ length: 30 }, (_, i) => `racer-${i}`);
    await api.post("/v1/subscribers/bulk", { subscribers: ids.map((subscriberId) => ({ subscriberId })) });
    await api.post("/v1/topics", { key: "race", name: "Race" });
    const results = await Promise.all(
      ids.flatMap((id) => [
        api.post("/v1/topics/race/subscribers", { subscribers: [id] }),
        api.delete(`/v1/subscribers/${id}`),
      ]),
    );
    for (const res of results) assert.ok(res.statusCode < 500, `${res.statusCode}: ${res.body}`);
    assert.deepEqual((await api.get("/v1/topics/race")).json().data.subscribers, []);
    const orphans = await ctx.store.db
      .selectFrom("topic_subscribers")
      .select("subscriber_ref")
      .where("environment_id", "=", dev.environmentId)
      .execute();
    assert.deepEqual(orphans, []);
  });
});
