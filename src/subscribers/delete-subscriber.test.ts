import assert from "node:assert/strict";
import { test } from "node:test";
import { assertErrorBody } from "../../test/error-body.ts";
import { createSubscriber, createWorkflow, uniqueName } from "../../test/factories.ts";
import { type Client, forEachBackend } from "../../test/harness.ts";
import { poll } from "../../test/poll.ts";
import { ManualClock } from "../clock.ts";

forEachBackend("DELETE /v1/subscribers/:subscriberId", (ctx) => {
  test("deletes the subscriber with its preferences and topic memberships; the id can be used again", async () => {
    const { dev } = await ctx.tenant();
    const api = ctx.client(dev.apiKey);
    const s = await createSubscriber(ctx, dev.apiKey, { subscriberId: "gone" });
    await createSubscriber(ctx, dev.apiKey, { subscriberId: "stays" });
    const workflow = await createWorkflow(ctx, dev.apiKey, dev.generalGroupId, { active: true });
    assert.equal(
      (await api.patch(`/v1/subscribers/gone/preferences/${workflow._id}`, { enabled: false })).statusCode,
      200,
    );
    assert.equal((await api.patch("/v1/subscribers/gone/preferences", { enabled: false })).statusCode, 200);
    assert.equal(
      (await api.post("/v1/topics/news/subscribers", { subscribers: ["gone", "stays"] })).statusCode,
      200,
    );

    const res = await api.delete("/v1/subscribers/gone");
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), { data: { acknowledged: true, status: "deleted" } });

    assertErrorBody(await api.get("/v1/subscribers/gone"), 404, { path: "/v1/subscribers/gone" });
    assert.deepEqual((await api.get("/v1/topics/news")).json().data.subscribers, ["stays"]);
    const preferences = await ctx.store.db
      .selectFrom("subscriber_preferences")
      .select("id")
      .where("subscriber_ref", "=", s._id)
      .execute();
    assert.deepEqual(preferences, []);
    const memberships = await ctx.store.db
      .selectFrom("topic_subscribers")
      .select("topic_id")
      .where("subscriber_ref", "=", s._id)
      .execute();
    assert.deepEqual(memberships, []);
    assertErrorBody(await api.delete("/v1/subscribers/gone"), 404, { path: "/v1/subscribers/gone" });

    const again = await createSubscriber(ctx, dev.apiKey, { subscriberId: "gone" });
    assert.notEqual(again._id, s._id);
    const fresh = (await api.get("/v1/subscribers/gone/preferences/global")).json().data[0];
    assert.equal(fresh.preference.enabled, true, "a new subscriber starts with no preferences");
  });

  test("another environment's subscriber is a 404 and stays", async () => {
    const { dev, prod } = await ctx.tenant();
    await createSubscriber(ctx, prod.apiKey, { subscriberId: "p" });
    assertErrorBody(await ctx.client(dev.apiKey).delete("/v1/subscribers/p"), 404, {
      path: "/v1/subscribers/p",
    });
    assert.equal((await ctx.client(prod.apiKey).get("/v1/subscribers/p")).statusCode, 200);
  });
});

interface JobView {
  type: string;
  status: string;
}

const FINAL = new Set(["completed", "failed", "canceled", "merged", "skipped"]);

/** The transaction's one notification once `done` holds for its jobs (polled, with a deadline). */
async function notificationOf(api: Client, transactionId: string, done: (jobs: JobView[]) => boolean) {
  const found = await poll(
    async () => {
      const res = await api.get(`/v1/notifications?transactionId=${transactionId}`);
      assert.equal(res.statusCode, 200, res.body);
      return res.json().data[0] as { _id: string; jobs: JobView[] } | undefined;
    },
    (notification) => notification !== undefined && done(notification.jobs),
    { what: `the jobs of ${transactionId}` },
  );
  assert.ok(found);
  return found;
}

const statuses = (jobs: JobView[]) => jobs.map((j) => [j.type, j.status]);

forEachBackend<ManualClock>(
  "DELETE /v1/subscribers/:subscriberId takes the subscriber's messages and pending work",
  (ctx) => {
    test("messages deleted, a delayed run canceled, another subscriber untouched, a re-created one starts empty", async () => {
      const { dev } = await ctx.tenant();
      const api = ctx.client(dev.apiKey);
      const now = await createWorkflow(ctx, dev.apiKey, dev.generalGroupId, {
        name: uniqueName("Now"),
        active: true,
        steps: [{ template: { type: "in_app", content: "Now for {{subscriber.subscriberId}}" } }],
      });
      const later = await createWorkflow(ctx, dev.apiKey, dev.generalGroupId, {
        name: uniqueName("Later"),
        active: true,
        steps: [
          { template: { type: "delay" }, metadata: { type: "regular", amount: 5, unit: "minutes" } },
          { template: { type: "in_app", content: "Later for {{subscriber.subscriberId}}" } },
        ],
      });
      for (const who of ["gone", "stays"]) {
        for (const [workflow, tx] of [
          [now, `now-${who}`],
          [later, `later-${who}`],
        ] as const) {
          const res = await api.post("/v1/events/trigger", {
            name: workflow.triggers[0].identifier,
            to: who,
            transactionId: tx,
          });
          assert.equal(res.statusCode, 201, res.body);
        }
        await notificationOf(api, `now-${who}`, (jobs) => jobs.every((j) => FINAL.has(j.status)));
        await notificationOf(api, `later-${who}`, (jobs) => jobs[0]?.status === "delayed");
      }
      const before = await api.get("/v1/messages?subscriberId=gone");
      assert.equal(before.json().totalCount, 1, before.body);
      const oldRef = before.json().data[0]._subscriberId as string;

      const res = await api.delete("/v1/subscribers/gone");
      assert.equal(res.statusCode, 200, res.body);

      // Its messages are gone, however they are looked for.
      assert.equal((await api.get("/v1/messages?transactionId=now-gone")).json().totalCount, 0);
      const left = await ctx.store.db
        .selectFrom("messages")
        .select("id")
        .where("subscriber_ref", "=", oldRef)
        .execute();
      assert.deepEqual(left, []);
      // Its delayed run is canceled, step by step, and says so in the activity.
      const canceled = await notificationOf(api, "later-gone", () => true);
      assert.deepEqual(statuses(canceled.jobs), [
        ["delay", "canceled"],
        ["in_app", "canceled"],
      ]);

      // The delay passes: the other subscriber's run goes on; the canceled one stays canceled.
      ctx.clock.advance(5 * 60_000);
      const delivered = await notificationOf(api, "later-stays", (jobs) =>
        jobs.every((j) => FINAL.has(j.status)),
      );
      assert.deepEqual(statuses(delivered.jobs), [
        ["delay", "completed"],
        ["in_app", "completed"],
      ]);
      const one = await api.get(`/v1/notifications/${canceled._id}`);
      assert.equal(one.statusCode, 200, one.body);
      assert.deepEqual(statuses(one.json().data.jobs), [
        ["delay", "canceled"],
        ["in_app", "canceled"],
      ]);
      assert.equal((await api.get("/v1/messages?transactionId=later-gone")).json().totalCount, 0);
      const stays = await api.get("/v1/subscribers/stays/notifications/feed");
      assert.deepEqual(
        stays
          .json()
          .data.map((m: { content: string }) => m.content)
          .sort(),
        ["Later for stays", "Now for stays"],
      );
      const all = await api.get("/v1/messages");
      assert.deepEqual(
        all.json().data.map((m: { subscriberId: string }) => m.subscriberId),
        ["stays", "stays"],
      );

      // The same subscriberId again: a new subscriber, with none of the old messages.
      const again = await createSubscriber(ctx, dev.apiKey, { subscriberId: "gone" });
      assert.notEqual(again._id, oldRef);
      const feed = await api.get("/v1/subscribers/gone/notifications/feed");
      assert.equal(feed.statusCode, 200, feed.body);
      assert.deepEqual(feed.json().data, []);
      assert.equal((await api.get("/v1/subscribers/gone/notifications/unseen")).json().data.count, 0);
      assert.equal((await api.get("/v1/messages?subscriberId=gone")).json().totalCount, 0);
    });
  },
  { clock: () => new ManualClock(Date.UTC(2026, 5, 1, 12)) },
);
