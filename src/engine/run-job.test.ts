import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";
import { workflowInNewTenant } from "../../test/factories.ts";
import { forEachBackend, type Client as TestClient } from "../../test/harness.ts";
import { poll } from "../../test/poll.ts";
import { drain } from "../../test/queue-helpers.ts";
import { ManualClock } from "../clock.ts";

const START = Date.UTC(2026, 5, 1, 12);
const hexId = () => randomBytes(12).toString("hex");

interface JobView {
  type: string;
  status: string;
  executionDetails: { detail: string }[];
}

async function jobsOf(api: TestClient, transactionId: string): Promise<JobView[]> {
  const res = await api.get(`/v1/notifications?transactionId=${transactionId}`);
  assert.equal(res.statusCode, 200, res.body);
  return res.json().data.flatMap((n: { jobs: JobView[] }) => n.jobs);
}

async function messagesOf(api: TestClient, transactionId: string) {
  const res = await api.get(`/v1/messages?transactionId=${transactionId}`);
  assert.equal(res.statusCode, 200, res.body);
  return res.json().data as { content: string }[];
}

const settled = (type: string) => (jobs: JobView[]) =>
  jobs.some((j) => j.type === type && !["pending", "queued", "running", "delayed"].includes(j.status));

forEachBackend(
  "the worker's step runner",
  (ctx) => {
    const setup = (steps: unknown[], more: Record<string, unknown> = {}) =>
      workflowInNewTenant(ctx, "Runner workflow", steps, more);
    const inApp = { template: { type: "in_app", content: "Hello {{who}}" } };
    const delay = (amount: number) => ({
      template: { type: "delay" },
      metadata: { type: "regular", amount, unit: "minutes" },
    });

    async function fire(api: TestClient, name: string, extra: Record<string, unknown> = {}) {
      const transactionId = hexId();
      const res = await api.post("/v1/events/trigger", {
        name,
        to: (extra.to as string | undefined) ?? hexId(),
        payload: { who: "you", ...((extra.payload as object) ?? {}) },
        transactionId,
        ...(extra.overrides ? { overrides: extra.overrides } : {}),
      });
      assert.equal(res.statusCode, 201, res.body);
      assert.equal(res.json().data.status, "processed", res.body);
      return transactionId;
    }

    test("a delay holds the message until the clock passes it", async () => {
      const { api, name } = await setup([delay(5), inApp]);
      const tx = await fire(api, name);
      await poll(
        () => jobsOf(api, tx),
        (jobs) => jobs.some((j) => j.type === "delay" && j.status === "delayed"),
        { what: "the delay job to wait" },
      );
      ctx.clock.advance(4 * 60_000);
      await drain(ctx);
      assert.equal((await messagesOf(api, tx)).length, 0, "nothing before the delay is over");
      ctx.clock.advance(60_000);
      const jobs = await poll(() => jobsOf(api, tx), settled("in_app"), { what: "the in-app job to settle" });
      assert.equal(jobs.find((j) => j.type === "in_app")?.status, "completed", JSON.stringify(jobs));
      assert.equal((await messagesOf(api, tx)).length, 1);
    });

    test("overrides.delay changes the delay", async () => {
      const { api, name } = await setup([delay(5), inApp]);
      const tx = await fire(api, name, { overrides: { delay: { amount: 1, unit: "hours" } } });
      await poll(
        () => jobsOf(api, tx),
        (jobs) => jobs.some((j) => j.type === "delay" && j.status === "delayed"),
        { what: "the delay job to wait" },
      );
      ctx.clock.advance(30 * 60_000);
      await drain(ctx);
      assert.equal((await messagesOf(api, tx)).length, 0, "five minutes were overridden by an hour");
      ctx.clock.advance(30 * 60_000);
      await poll(() => jobsOf(api, tx), settled("in_app"), { what: "the in-app job to settle" });
      assert.equal((await messagesOf(api, tx)).length, 1);
    });

    test("cancel before the delay is over: {data:true}, job canceled, no message after the clock moves", async () => {
      const { api, name } = await setup([delay(5), inApp]);
      const tx = await fire(api, name);
      await poll(
        () => jobsOf(api, tx),
        (jobs) => jobs.some((j) => j.type === "delay" && j.status === "delayed"),
        { what: "the delay job to wait" },
      );
      const res = await api.delete(`/v1/events/trigger/${tx}`);
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json(), { data: true });
      ctx.clock.advance(10 * 60_000);
      await drain(ctx);
      const jobs = await jobsOf(api, tx);
      assert.ok(
        jobs.some((j) => j.status === "canceled"),
        JSON.stringify(jobs.map((j) => [j.type, j.status])),
      );
      assert.equal((await messagesOf(api, tx)).length, 0);
    });

    test("a step whose filter fails is skipped as filtered; one that passes sends", async () => {
      const filtered = {
        ...inApp,
        filters: [
          {
            isNegated: false,
            type: "GROUP",
            value: "AND",
            children: [{ on: "payload", field: "plan", value: "pro", operator: "EQUAL" }],
          },
        ],
      };
      const { api, name } = await setup([filtered]);
      const miss = await fire(api, name, { payload: { plan: "free" } });
      const jobs = await poll(() => jobsOf(api, miss), settled("in_app"), {
        what: "the in-app job to settle",
      });
      const job = jobs.find((j) => j.type === "in_app");
      assert.equal(job?.status, "skipped", JSON.stringify(jobs));
      assert.ok(job?.executionDetails.some((d) => d.detail === "filtered"));
      assert.equal((await messagesOf(api, miss)).length, 0);
      const hit = await fire(api, name, { payload: { plan: "pro" } });
      await poll(() => jobsOf(api, hit), settled("in_app"), { what: "the in-app job to settle" });
      assert.equal((await messagesOf(api, hit)).length, 1);
    });

    test("an inactive step is skipped", async () => {
      const off = { template: { type: "in_app", content: "Off {{who}}" }, active: false };
      const { api, name } = await setup([off, inApp]);
      const tx = await fire(api, name);
      await poll(
        () => jobsOf(api, tx),
        (jobs) => jobs.filter((j) => j.status === "completed").length === 1,
        { what: "one job to complete" },
      );
      const messages = await messagesOf(api, tx);
      assert.deepEqual(
        messages.map((m) => m.content),
        ["Hello you"],
      );
    });
    for (const critical of [false, true]) {
      test(`in_app turned off for the workflow: ${critical ? "a critical workflow sends anyway" : "skipped"}`, async () => {
        const { api, name, workflowId } = await setup([inApp]);
        const subscriberId = hexId();
        assert.equal((await api.post("/v1/subscribers", { subscriberId })).statusCode, 201);
        const off = await api.patch(`/v1/subscribers/${subscriberId}/preferences/${workflowId}`, {
          channel: { type: "in_app", enabled: false },
        });
        assert.equal(off.statusCode, 200, off.body);
        // Made critical after the subscriber turned it off (a critical workflow refuses the change).
        if (critical) {
          const made = await api.put(`/v1/workflows/${workflowId}`, { critical: true });
          assert.equal(made.statusCode, 200, made.body);
        }
        const tx = await fire(api, name, { to: subscriberId });
        const jobs = await poll(() => jobsOf(api, tx), settled("in_app"), {
          what: "the in-app job to settle",
        });
        const job = jobs.find((j) => j.type === "in_app");
        assert.equal(job?.status, critical ? "completed" : "skipped", JSON.stringify(jobs));
        assert.equal((await messagesOf(api, tx)).length, critical ? 1 : 0);
      });
    }
  },
  { clock: () => new ManualClock(START) },
);
