import assert from "node:assert/strict";
import { test } from "node:test";
import { assertErrorBody } from "./error-body.ts";
import { createWorkflow } from "./factories.ts";
import { forEachBackend } from "./harness.ts";
import { drain } from "./queue-helpers.ts";

// Feeds (Novu's /v1/feeds): named by their name, in the key's environment; a feed an in-app step
// names cannot be deleted until the step no longer names it. An in-app message records the feed its
// step named (`_feedId`), and the widget's feed and counts (and the subscriber's feed) filter by the
// feeds' identifiers (`feedIdentifier`, one or several), and so does marking all of them.

interface FeedMessage {
  content: string;
  _feedId: string | null;
}

forEachBackend("feeds", (ctx) => {
  test("create (the identifier is the name), list, delete answering the rest; a named feed stays while a step names it", async () => {
    const { dev, prod } = await ctx.tenant();
    const api = ctx.client(dev.apiKey);
    const created = await api.post("/v1/feeds", { name: "Test name" });
    assert.equal(created.statusCode, 201, created.body);
    const feed = created.json().data;
    assert.deepEqual(
      [feed.name, feed.identifier, feed._environmentId, feed.deleted],
      ["Test name", "Test name", dev.environmentId, false],
    );
    assertErrorBody(await api.post("/v1/feeds", { name: "Test name" }), 409, {
      path: "/v1/feeds",
      message:
        /^Feed with identifier: given already exists$|^Feed with identifier: Test name already exists$/,
    });
    for (const body of [{}, { name: "" }, { name: "  " }]) {
      assertErrorBody(await api.post("/v1/feeds", body), 400, { path: "/v1/feeds", fields: ["name"] });
    }
    const second = (await api.post("/v1/feeds", { name: "Feed 2" })).json().data;
    assert.deepEqual(
      (await api.get("/v1/feeds")).json().data.map((f: { name: string }) => f.name),
      ["Test name", "Feed 2"],
    );
    assert.deepEqual((await ctx.client(prod.apiKey).get("/v1/feeds")).json().data, []);

    const workflow = await createWorkflow(ctx, dev.apiKey, dev.generalGroupId, {
      steps: [{ template: { type: "in_app", content: "Hi", _feedId: second._id } }],
    });
    assertErrorBody(await api.delete(`/v1/feeds/${second._id}`), 409, {
      path: `/v1/feeds/${second._id}`,
      message: /^Can not delete feed that has existing/,
    });
    assert.equal((await api.delete(`/v1/workflows/${workflow._id}`)).statusCode, 200);
    const deleted = await api.delete(`/v1/feeds/${second._id}`);
    assert.equal(deleted.statusCode, 200, deleted.body);
    assert.deepEqual(
      deleted.json().data.map((f: { _id: string }) => f._id),
      [feed._id],
    );
    assertErrorBody(await api.delete(`/v1/feeds/${second._id}`), 404, { path: `/v1/feeds/${second._id}` });
    assertErrorBody(await ctx.client(prod.apiKey).delete(`/v1/feeds/${feed._id}`), 404, {
      path: `/v1/feeds/${feed._id}`,
    });
  });

  test("a message records its step's feed; feedIdentifier filters the widget's feed and counts, and the subscriber's feed", async () => {
    const { dev } = await ctx.tenant();
    const api = ctx.client(dev.apiKey);
    const a = (await api.post("/v1/feeds", { name: "Feed A" })).json().data;
    const b = (await api.post("/v1/feeds", { name: "Feed B" })).json().data;
    const workflows = await Promise.all(
      [
        [{ template: { type: "in_app", content: "A1", _feedId: a._id } }],
        [
          { template: { type: "in_app", content: "B1", _feedId: b._id } },
          { template: { type: "in_app", content: "A2", _feedId: a._id } },
        ],
        [{ template: { type: "in_app", content: "None" } }],
      ].map((steps) => createWorkflow(ctx, dev.apiKey, dev.generalGroupId, { active: true, steps })),
    );
    const subscriberId = "feeds-reader";
    for (const workflow of workflows) {
      const res = await api.post("/v1/events/trigger", {
        name: workflow.triggers[0].identifier,
        to: subscriberId,
      });
      assert.equal(res.statusCode, 201, res.body);
    }
    await drain(ctx);

    const identifier = (await api.get("/v1/environments/me")).json().data.identifier;
    const session = await ctx.app.inject({
      method: "POST",
      url: "/v1/widgets/session/initialize",
      payload: { applicationIdentifier: identifier, subscriberId },
    });
    assert.equal(session.statusCode, 201, session.body);
    const headers = { authorization: `Bearer ${session.json().data.token}` };
    const widget = async (url: string) => {
      const res = await ctx.app.inject({ method: "GET", url: `/v1/widgets${url}`, headers });
      assert.equal(res.statusCode, 200, res.body);
      return res.json();
    };
    const contents = (page: { data: FeedMessage[] }) => page.data.map((m) => m.content).sort();
    const counts = async (query: string) =>
      Promise.all(
        ["unseen", "unread", "count"].map(
          async (path) => (await widget(`/notifications/${path}?${query}`)).data.count as number,
        ),
      );

    const all = await widget("/notifications/feed");
    assert.deepEqual(contents(all), ["A1", "A2", "B1", "None"]);
    assert.deepEqual(Object.fromEntries(all.data.map((m: FeedMessage) => [m.content, m._feedId])), {
      A1: a._id,
      A2: a._id,
      B1: b._id,
      None: null,
    });
    assert.deepEqual(await counts(""), [4, 4, 4]);

    const onA = await widget("/notifications/feed?feedIdentifier=Feed%20A");
    assert.deepEqual([contents(onA), onA.totalCount], [["A1", "A2"], 2]);
    assert.deepEqual(await counts("feedIdentifier=Feed%20A"), [2, 2, 2]);
    // Several: repeated, or as axios writes an array.
    for (const query of [
      "feedIdentifier=Feed%20A&feedIdentifier=Feed%20B",
      "feedIdentifier[]=Feed%20A&feedIdentifier[]=Feed%20B",
    ]) {
      assert.deepEqual(contents(await widget(`/notifications/feed?${query}`)), ["A1", "A2", "B1"]);
      assert.deepEqual(await counts(query), [3, 3, 3]);
    }
    // An identifier no feed has: an empty feed, as Novu answers.
    const unknown = await widget("/notifications/feed?feedIdentifier=Nowhere");
    assert.deepEqual([unknown.data, unknown.totalCount], [[], 0]);
    assert.deepEqual(await counts("feedIdentifier=Nowhere"), [0, 0, 0]);

    // Marking all: of one feed from the widget (`feedId`, identifiers), of feeds from the API.
    const seen = await ctx.app.inject({
      method: "POST",
      url: "/v1/widgets/messages/seen",
      headers,
      payload: { feedId: "Feed B" },
    });
    assert.deepEqual([seen.statusCode, seen.json().data], [201, 1], seen.body);
    assert.deepEqual(await counts("feedIdentifier=Feed%20B&seen=true"), [1, 1, 1]);
    assert.deepEqual(await counts(""), [3, 4, 4]);
    const read = await api.post(`/v1/subscribers/${subscriberId}/messages/mark-all`, {
      markAs: "read",
      feedIdentifier: ["Feed A"],
    });
    assert.deepEqual([read.statusCode, read.json().data], [201, 2], read.body);
    assert.deepEqual(await counts(""), [1, 2, 4]);

    const subscriberFeed = await api.get(
      `/v1/subscribers/${subscriberId}/notifications/feed?feedIdentifier=Feed%20B`,
    );
    assert.equal(subscriberFeed.statusCode, 200, subscriberFeed.body);
    assert.deepEqual(
      subscriberFeed.json().data.map((m: FeedMessage) => [m.content, m._feedId]),
      [["B1", b._id]],
    );
    assert.equal((await api.get(`/v1/subscribers/${subscriberId}/notifications/feed`)).json().totalCount, 4);

    // Deleting all from the widget: of one feed (`feedId`: the feed's id, as Novu's), a 404 for an
    // id no feed of the environment has (nothing deleted), then all that is left.
    const deleteAll = (query: string) =>
      ctx.app.inject({ method: "DELETE", url: `/v1/widgets/messages${query}`, headers });
    const missing = await deleteAll(`?feedId=${"0".repeat(24)}`);
    assertErrorBody(missing, 404, { path: "/v1/widgets/messages", message: /^Feed with 0{24} not found$/ });
    assert.deepEqual(contents(await widget("/notifications/feed")), ["A1", "A2", "B1", "None"]);
    const ofA = await deleteAll(`?feedId=${a._id}`);
    assert.equal(ofA.statusCode, 200, ofA.body);
    assert.deepEqual(contents(await widget("/notifications/feed")), ["B1", "None"]);
    const empty = await deleteAll("?feedId=");
    assert.equal(empty.statusCode, 200, empty.body);
    assert.deepEqual(contents(await widget("/notifications/feed")), []);
  });
});
