import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";
import { ManualClock } from "../src/clock.ts";
import { loadConfig } from "../src/config.ts";
import { foldClosedConnections } from "../src/engine/quota-repository.ts";
import { assertErrorBody } from "./error-body.ts";
import { createWorkflow } from "./factories.ts";
import { type Client, forEachBackend, type TestContext } from "./harness.ts";
import { poll } from "./poll.ts";
import { drain } from "./queue-helpers.ts";

// The environments' quotas (README, "Quotas"): recipients per trigger (topics and broadcasts too),
// recipients per minute, and jobs waiting or running. Past one, nothing of the trigger is written;
// time is the app's ManualClock, moved to open the next minute.

const hexId = () => randomBytes(12).toString("hex");
const PER_TRIGGER = 5;
const PER_MINUTE = 10;
const PENDING = 20;

forEachBackend<ManualClock>(
  "quotas per environment",
  (ctx) => {
    async function setup(steps: unknown[] = [{ template: { type: "in_app", content: "Hi" } }]) {
      const tenant = await ctx.tenant();
      const api = ctx.client(tenant.dev.apiKey);
      const workflow = await createWorkflow(ctx, tenant.dev.apiKey, tenant.dev.generalGroupId, {
        active: true,
        steps,
      });
      return { tenant, api, name: workflow.triggers[0].identifier as string };
    }

    /** Subscribers, created; their ids. */
    async function subscribers(api: Client, count: number): Promise<string[]> {
      const ids = Array.from({ length: count }, hexId);
      const res = await api.post("/v1/subscribers/bulk", {
        subscribers: ids.map((subscriberId) => ({ subscriberId })),
      });
      assert.equal(res.statusCode, 201, res.body);
      return ids;
    }

    async function trigger(api: Client, body: Record<string, unknown>) {
      return api.post("/v1/events/trigger", { transactionId: hexId(), ...body });
    }

    /** What the transaction wrote: its notifications (none when refused). */
    async function written(api: Client, transactionId: string): Promise<number> {
      const res = await api.get(`/v1/notifications?transactionId=${transactionId}`);
      assert.equal(res.statusCode, 200, res.body);
      return res.json().data.length;
    }

    /** Moves the clock to the start of the next minute (where every environment's count starts again). */
    function nextMinute(clock: ManualClock) {
      clock.advance(60_000 - (clock.now() % 60_000));
    }

    test("one trigger may reach QUOTA_RECIPIENTS_PER_TRIGGER subscribers: a larger topic, list or broadcast is a 422 and writes nothing", async () => {
      nextMinute(ctx.clock);
      const { api, name } = await setup();
      const six = await subscribers(api, PER_TRIGGER + 1);
      assert.equal((await api.post("/v1/topics", { key: "everyone", name: "Everyone" })).statusCode, 201);
      assert.equal((await api.post("/v1/topics/everyone/subscribers", { subscribers: six })).statusCode, 200);
      const message =
        /^quota_exceeded: the trigger would reach more than 5 subscribers, the most one trigger may reach \(QUOTA_RECIPIENTS_PER_TRIGGER\)$/;
      const cases: [string, Record<string, unknown>][] = [
        ["/v1/events/trigger", { name, to: { type: "Topic", topicKey: "everyone" } }],
        ["/v1/events/trigger", { name, to: six }],
        ["/v1/events/trigger", { name, to: [six[0], { type: "Topic", topicKey: "everyone" }] }],
        ["/v1/events/trigger/broadcast", { name }],
      ];
      for (const [path, body] of cases) {
        const transactionId = hexId();
        const res = await api.post(path, { ...body, transactionId });
        assertErrorBody(res, 422, { path, message, fields: ["to"] });
        assert.equal(res.headers["retry-after"], undefined, "no retry can make it fit");
        assert.equal(await written(api, transactionId), 0);
      }
      // Five are fine: the topic less one member.
      assert.equal(
        (await api.post("/v1/topics/everyone/subscribers/removal", { subscribers: [six[0]] })).statusCode,
        204,
      );
      const fits = await trigger(api, { name, to: { type: "Topic", topicKey: "everyone" } });
      assert.equal(fits.statusCode, 201, fits.body);
    });

    test("QUOTA_RECIPIENTS_PER_MINUTE: past it a 429 with Retry-After to the next minute, nothing written; the next minute accepts", async () => {
      nextMinute(ctx.clock);
      const { api, name } = await setup();
      const ids = await subscribers(api, PER_MINUTE);
      for (const to of [ids.slice(0, 5), ids.slice(5, 10)]) {
        const res = await trigger(api, { name, to });
        assert.equal(res.statusCode, 201, res.body);
      }
      ctx.clock.advance(45_500);
      const transactionId = hexId();
      const refused = await api.post("/v1/events/trigger", { name, to: ids[0], transactionId });
      assertErrorBody(refused, 429, {
        path: "/v1/events/trigger",
        message:
          /^quota_exceeded: the environment's triggers reached 10 subscribers this minute, and this trigger's 1 would pass the 10 a minute allows \(QUOTA_RECIPIENTS_PER_MINUTE\); retry in 15 s$/,
      });
      assert.equal(refused.headers["retry-after"], "15");
      assert.equal(await written(api, transactionId), 0);
      // Another environment has its own count.
      const other = await setup();
      const prodFine = await trigger(other.api, { name: other.name, to: hexId() });
      assert.equal(prodFine.statusCode, 201, prodFine.body);

      ctx.clock.advance(14_000);
      assert.equal(
        (await api.post("/v1/events/trigger", { name, to: ids[0], transactionId })).statusCode,
        429,
      );
      ctx.clock.advance(500);
      const accepted = await api.post("/v1/events/trigger", { name, to: ids[0], transactionId });
      assert.equal(accepted.statusCode, 201, accepted.body);
      assert.equal(accepted.json().data.status, "processed");
      assert.equal(await written(api, transactionId), 1);
    });

    test("a retry of an accepted trigger (its transactionId) gets its acknowledgement, even past the quota", async () => {
      nextMinute(ctx.clock);
      const { api, name } = await setup();
      const ids = await subscribers(api, PER_MINUTE);
      const transactionId = hexId();
      const first = await api.post("/v1/events/trigger", { name, to: ids.slice(0, 5), transactionId });
      assert.equal(first.statusCode, 201, first.body);
      assert.equal((await trigger(api, { name, to: ids.slice(5, 10) })).statusCode, 201);
      const again = await api.post("/v1/events/trigger", { name, to: ids.slice(0, 5), transactionId });
      assert.equal(again.statusCode, 201, again.body);
      assert.deepEqual(again.json(), first.json());
      assert.equal(await written(api, transactionId), 5);
    });

    test("bulk: each event stands alone and whole; those past the quota are refused with the reason, and the answer carries Retry-After", async () => {
      nextMinute(ctx.clock);
      const { api, name } = await setup();
      const ids = await subscribers(api, 12);
      const events = [ids.slice(0, 4), ids.slice(4, 8), ids.slice(8, 12), ids.slice(0, 2)].map((to) => ({
        name,
        to,
        transactionId: hexId(),
      }));
      const res = await api.post("/v1/events/trigger/bulk", { events });
      assert.equal(res.statusCode, 201, res.body);
      const results = res.json().data as { acknowledged: boolean; error?: string[] }[];
      assert.deepEqual(
        results.map((r) => r.acknowledged),
        [true, true, false, true],
      );
      assert.match(
        results[2]?.error?.[0] ?? "",
        /^quota_exceeded: .* \(QUOTA_RECIPIENTS_PER_MINUTE\); retry in 60 s$/,
      );
      assert.equal(res.headers["retry-after"], "60");
      const counts = [];
      for (const event of events) counts.push(await written(api, event.transactionId));
      assert.deepEqual(counts, [4, 4, 0, 2], "the refused event wrote nothing, the others all of theirs");
      // Within quota, no Retry-After.
      nextMinute(ctx.clock);
      const fine = await api.post("/v1/events/trigger/bulk", { events: [{ name, to: ids[0] }] });
      assert.equal(fine.statusCode, 201, fine.body);
      assert.equal(fine.headers["retry-after"], undefined);
    });

    test("QUOTA_PENDING_JOBS: jobs waiting past it are a 429; as they run (or are canceled) triggers are accepted again", async () => {
      // Two jobs per subscriber, both waiting an hour: a delay, then the message.
      const { tenant, api, name } = await setup([
        { template: { type: "delay" }, metadata: { amount: 1, unit: "hours" } },
        { template: { type: "in_app", content: "Later" } },
      ]);
      const five = () => Array.from({ length: 5 }, hexId);
      nextMinute(ctx.clock);
      const first = await trigger(api, { name, to: five() });
      assert.equal(first.statusCode, 201, first.body);
      assert.equal((await trigger(api, { name, to: five() })).statusCode, 201);
      await drain(ctx);
      nextMinute(ctx.clock);
      const transactionId = hexId();
      const refused = await api.post("/v1/events/trigger", { name, to: hexId(), transactionId });
      assertErrorBody(refused, 429, {
        path: "/v1/events/trigger",
        message:
          /^quota_exceeded: the environment has 20 jobs waiting or running, and this trigger's 2 would pass the 20 it may have \(QUOTA_PENDING_JOBS\); retry once the worker has run them$/,
      });
      assert.equal(refused.headers["retry-after"], "30");
      assert.equal(await written(api, transactionId), 0);
      // The other environment of the organization is not held back.
      const prodWorkflow = await createWorkflow(ctx, tenant.prod.apiKey, tenant.prod.generalGroupId, {
        active: true,
        steps: [{ template: { type: "in_app", content: "Hi" } }],
      });
      const prod = ctx.client(tenant.prod.apiKey);
      assert.equal(
        (await trigger(prod, { name: prodWorkflow.triggers[0].identifier, to: hexId() })).statusCode,
        201,
      );

      // A canceled trigger's jobs are final: room for another.
      const canceled = await api.delete(`/v1/events/trigger/${first.json().data.transactionId}`);
      assert.equal(canceled.statusCode, 200, canceled.body);
      assert.equal((await trigger(api, { name, to: five() })).statusCode, 201);
      assert.equal((await trigger(api, { name, to: hexId() })).statusCode, 429);
      await openJobsMatch(ctx, tenant.dev.environmentId, 20);
      // The hour passes and the worker runs them all: room again.
      ctx.clock.advance(60 * 60_000);
      await drain(ctx);
      // On PostgreSQL the queue runs the hour's tasks on real time once they are due: wait for them.
      await poll(
        () => openJobs(ctx, tenant.dev.environmentId),
        (n) => n === 0,
        { what: "every job of the hour run" },
      );
      await openJobsMatch(ctx, tenant.dev.environmentId, 0);
      nextMinute(ctx.clock);
      assert.equal((await trigger(api, { name, to: five() })).statusCode, 201);
      await openJobsMatch(ctx, tenant.dev.environmentId, 10);
    });

    test("the open-job counts: one row per environment on SQLite; on PostgreSQL one per connection, those of closed connections folded, the sum unchanged", async () => {
      const { tenant, api, name } = await setup([
        { template: { type: "delay" }, metadata: { amount: 1, unit: "hours" } },
        { template: { type: "in_app", content: "Later" } },
      ]);
      nextMinute(ctx.clock);
      assert.equal((await trigger(api, { name, to: hexId() })).statusCode, 201);
      await drain(ctx);
      const environmentId = tenant.dev.environmentId;
      const rows = () =>
        ctx.store.db
          .selectFrom("quota_open_jobs")
          .select(["shard", "open"])
          .where("environment_id", "=", environmentId)
          .execute();
      const sum = async () => (await rows()).reduce((total, row) => total + Number(row.open), 0);
      await openJobsMatch(ctx, environmentId, 2);
      if (ctx.backend === "sqlite") {
        assert.deepEqual(
          (await rows()).map((row) => [row.shard, Number(row.open)]),
          [[0, 2]],
        );
        return;
      }
      // As a connection that has since closed would have left it: 3 open jobs counted under its pid.
      const gone = 2_000_000_000;
      await ctx.store.db
        .insertInto("quota_open_jobs")
        .values({ environment_id: environmentId, shard: gone, open: 3 })
        .execute();
      assert.equal(await sum(), 2 + 3);
      assert.ok((await foldClosedConnections(ctx.store.db)) >= 1);
      assert.equal(await sum(), 2 + 3);
      assert.ok(!(await rows()).some((row) => row.shard === gone), "the closed connection's row is gone");
      assert.ok(
        (await rows()).some((row) => row.shard === 0 && Number(row.open) === 3),
        "folded into row 0",
      );
    });
  },
  {
    clock: () => new ManualClock(),
    app: () => ({
      config: loadConfig({
        QUOTA_RECIPIENTS_PER_TRIGGER: String(PER_TRIGGER),
        QUOTA_RECIPIENTS_PER_MINUTE: String(PER_MINUTE),
        QUOTA_PENDING_JOBS: String(PENDING),
      }),
    }),
  },
);

/** The counter of the environment's open jobs (kept by triggers on `jobs`), against a count of them. */
async function openJobs(ctx: TestContext, environmentId: string): Promise<number> {
  const counted = await ctx.store.db
    .selectFrom("jobs")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("environment_id", "=", environmentId)
    .where("status", "in", ["pending", "queued", "delayed", "running"])
    .executeTakeFirstOrThrow();
  return Number(counted.n);
}

async function openJobsMatch(ctx: TestContext, environmentId: string, expected: number) {
  const counted = { n: await openJobs(ctx, environmentId) };
  const kept = await ctx.store.db
    .selectFrom("quota_open_jobs")
    .select((eb) => eb.fn.sum<number>("open").as("n"))
    .where("environment_id", "=", environmentId)
    .executeTakeFirst();
  assert.deepEqual([Number(kept?.n ?? 0), Number(counted.n)], [expected, expected]);
}
