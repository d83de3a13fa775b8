import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";
import { assertErrorBody } from "../../test/error-body.ts";
import { createWorkflow, nextMillisecond, uniqueName } from "../../test/factories.ts";
import { type Client, forEachBackend } from "../../test/harness.ts";
import { poll } from "../../test/poll.ts";

const hexId = () => randomBytes(12).toString("hex");

interface FeedMessage {
  _id: string;
  _notificationId: string;
  transactionId: string;
  seen: boolean;
  read: boolean;
  content: string;
  cta: { action?: Record<string, unknown> };
}

async function feed(api: Client, subscriberId: string, query = "") {
  const res = await api.get(`/v1/subscribers/${subscriberId}/notifications/feed${query}`);
  assert.equal(res.statusCode, 200, res.body);
  return res.json() as { data: FeedMessage[]; totalCount: number; hasMore: boolean; pageSize: number };
}

async function unseen(api: Client, subscriberId: string) {
  const res = await api.get(`/v1/subscribers/${subscriberId}/notifications/unseen`);
  assert.equal(res.statusCode, 200, res.body);
  return res.json().data.count as number;
}

forEachBackend("the inbox and activity", (ctx) => {
  /** A subscriber with three processed in-app messages (payload n = 0, 1, 2), waited for. */
  async function setup() {
    const tenant = await ctx.tenant();
    const api = ctx.client(tenant.dev.apiKey);
    const workflow = await createWorkflow(ctx, tenant.dev.apiKey, tenant.dev.generalGroupId, {
      name: uniqueName("Inbox workflow"),
      active: true,
      steps: [{ template: { type: "in_app", content: "Number {{n}}" } }],
    });
    const subscriberId = hexId();
    const transactionIds: string[] = [];
    for (const n of [0, 1, 2]) {
      const transactionId = hexId();
      transactionIds.push(transactionId);
      const res = await api.post("/v1/events/trigger", {
        name: workflow.triggers[0].identifier,
        to: subscriberId,
        payload: { n, group: n === 2 ? "b" : "a" },
        transactionId,
      });
      assert.equal(res.statusCode, 201, res.body);
      // One at a time, a millisecond apart: workers may run jobs in parallel, and the feed is newest first.
      await poll(
        async () => (await feed(api, subscriberId)).data.length,
        (count) => count > n,
        { what: `message ${n} in the feed` },
      );
      await nextMillisecond();
    }
    const messages = (await feed(api, subscriberId)).data;
    assert.equal(messages.length, 3);
    return { tenant, api, subscriberId, transactionIds, messages };
  }

  test("the feed pages, and filters by seen, read and a payload subset", async () => {
    const { api, subscriberId, messages } = await setup();
    const page = await feed(api, subscriberId, "?page=0&limit=2");
    assert.equal(page.data.length, 2);
    assert.equal(page.totalCount, 3);
    assert.equal(page.hasMore, true);
    const second = await feed(api, subscriberId, "?page=1&limit=2");
    assert.equal(second.data.length, 1);
    assert.equal(second.hasMore, false);
    assert.deepEqual(
      [...page.data, ...second.data].map((m) => m.content),
      ["Number 2", "Number 1", "Number 0"],
    );
    const payload = Buffer.from(JSON.stringify({ group: "b" })).toString("base64");
    assert.deepEqual(
      (await feed(api, subscriberId, `?payload=${encodeURIComponent(payload)}`)).data.map((m) => m.content),
      ["Number 2"],
    );
    const first = messages[0];
    assert.ok(first);
    const marked = await api.post(`/v1/subscribers/${subscriberId}/messages/mark-as`, {
      messageId: first._id,
      markAs: "read",
    });
    assert.equal(marked.statusCode, 201, marked.body);
    assert.deepEqual(
      (await feed(api, subscriberId, "?read=true")).data.map((m) => m._id),
      [first._id],
    );
    assert.equal((await feed(api, subscriberId, "?read=false")).data.length, 2);
    assert.equal((await feed(api, subscriberId, "?seen=true")).data.length, 1, "read implies seen");
    const bad = await api.get(`/v1/subscribers/${subscriberId}/notifications/feed?payload=%25%25`);
    assertErrorBody(bad, 400, {
      path: `/v1/subscribers/${subscriberId}/notifications/feed`,
      fields: ["payload"],
    });
  });

  test("unseen count, mark-as (single and array, all four), the older markAs body, mark-all", async () => {
    const { api, subscriberId, messages } = await setup();
    const ids = messages.map((m) => m._id);
    const base = `/v1/subscribers/${subscriberId}/messages`;
    assert.equal(await unseen(api, subscriberId), 3);
    let res = await api.post(`${base}/mark-as`, { messageId: ids[0], markAs: "seen" });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().data[0].seen, true);
    assert.equal(await unseen(api, subscriberId), 2);
    res = await api.post(`${base}/mark-as`, { messageId: [ids[0], ids[1]], markAs: "read" });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().data.length, 2);
    assert.equal(await unseen(api, subscriberId), 1);
    res = await api.post(`${base}/mark-as`, { messageId: [ids[1]], markAs: "unread" });
    assert.equal(res.json().data[0].read, false);
    res = await api.post(`${base}/mark-as`, { messageId: [ids[0], ids[1]], markAs: "unseen" });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(await unseen(api, subscriberId), 3);
    res = await api.post(`${base}/markAs`, { messageId: ids[2], mark: { seen: true } });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().data[0].seen, true);
    assert.equal(await unseen(api, subscriberId), 2);
    res = await api.post(`${base}/mark-all`, { markAs: "seen" });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().data, 2);
    assert.equal(await unseen(api, subscriberId), 0);
  });

  test("a message action is recorded; DELETE removes a message", async () => {
    const { api, subscriberId, messages } = await setup();
    const [first, second] = messages;
    assert.ok(first && second);
    const res = await api.post(`/v1/subscribers/${subscriberId}/messages/${first._id}/actions/primary`, {
      status: "done",
      payload: { ok: 1 },
    });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().data.cta.action.status, "done");
    const gone = await api.delete(`/v1/messages/${second._id}`);
    assert.equal(gone.statusCode, 200, gone.body);
    assert.deepEqual(
      (await feed(api, subscriberId)).data.map((m) => m._id).sort(),
      messages
        .filter((m) => m._id !== second._id)
        .map((m) => m._id)
        .sort(),
    );
    assertErrorBody(await api.delete(`/v1/messages/${second._id}`), 404, {
      path: `/v1/messages/${second._id}`,
      message: /was not found/,
    });
  });

  test("activity: notifications with jobs and details, filters, one by id, execution details", async () => {
    const { api, subscriberId, transactionIds, messages } = await setup();
    const all = await api.get("/v1/notifications?page=0");
    assert.equal(all.statusCode, 200, all.body);
    assert.equal(all.json().data.length, 3);
    for (const n of all.json().data) {
      assert.equal(n.jobs.length, 1);
      assert.ok(n.jobs[0].executionDetails.length > 0);
    }
    const one = await api.get(`/v1/notifications?transactionId=${transactionIds[1]}`);
    assert.deepEqual(
      one.json().data.map((n: { transactionId: string }) => n.transactionId),
      [transactionIds[1]],
    );
    const bySubscriber = await api.get(`/v1/notifications?subscriberIds=${subscriberId}`);
    assert.equal(bySubscriber.json().data.length, 3);
    const none = await api.get(`/v1/notifications?subscriberIds=${hexId()}`);
    assert.equal(none.json().data.length, 0);
    const notificationId = messages[0]?._notificationId;
    const got = await api.get(`/v1/notifications/${notificationId}`);
    assert.equal(got.statusCode, 200, got.body);
    assert.equal(got.json().data._id, notificationId);
    const details = await api.get(`/v1/execution-details?notificationId=${notificationId}`);
    assert.equal(details.statusCode, 200, details.body);
    assert.ok(details.json().data.length > 0);
    for (const d of details.json().data) assert.equal(d._notificationId, notificationId);
  });

  test("another environment's key sees none of it", async () => {
    const { subscriberId, messages } = await setup();
    const other = ctx.client((await ctx.tenant()).dev.apiKey);
    const notificationId = messages[0]?._notificationId;
    assert.equal((await other.get(`/v1/subscribers/${subscriberId}/notifications/feed`)).statusCode, 404);
    assert.equal((await other.get("/v1/messages")).json().data.length, 0);
    assert.equal((await other.get("/v1/notifications")).json().data.length, 0);
    assert.equal((await other.get(`/v1/notifications/${notificationId}`)).statusCode, 404);
    const details = await other.get(`/v1/execution-details?notificationId=${notificationId}`);
    assert.equal(details.statusCode, 200, details.body);
    assert.equal(details.json().data.length, 0);
  });
});
