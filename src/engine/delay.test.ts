import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";
import { createWorkflow, uniqueName } from "../../test/factories.ts";
import { forEachBackend, type Client as TestClient } from "../../test/harness.ts";
import { poll } from "../../test/poll.ts";
import { drain } from "../../test/queue-helpers.ts";
import { ManualClock } from "../clock.ts";
import { addUnits } from "./time-units.ts";

// Delay steps (docs/engine.md, "Delays and digests"), on both backends with the clock moved by hand: every
// unit, a scheduled date from the payload, what fails a delay (and sends nothing), and a cancel racing the
// delay's timer.

const START = Date.UTC(2026, 0, 31, 12);
const hexId = () => randomBytes(12).toString("hex");

interface JobView {
  type: string;
  status: string;
  runAt: string;
  executionDetails: { detail: string; status: string }[];
}

const settled = (jobs: JobView[]) =>
  jobs.length > 0 &&
  jobs.every((j) => !["queued", "running"].includes(j.status)) &&
  jobs[0]?.status !== "pending";

forEachBackend(
  "delay steps",
  (ctx) => {
    async function setup(delayMetadata: Record<string, unknown>) {
      const tenant = await ctx.tenant();
      const api = ctx.client(tenant.dev.apiKey);
      const workflow = await createWorkflow(ctx, tenant.dev.apiKey, tenant.dev.generalGroupId, {
        name: uniqueName("Delay workflow"),
        active: true,
        steps: [
          { template: { type: "delay" }, metadata: delayMetadata },
          { template: { type: "in_app", content: "Delivered {{n}}" } },
        ],
      });
      return { api, name: workflow.triggers[0].identifier as string };
    }

    async function fire(api: TestClient, name: string, payload: Record<string, unknown> = {}, more = {}) {
      const transactionId = hexId();
      const res = await api.post("/v1/events/trigger", {
        name,
        to: hexId(),
        payload,
        transactionId,
        ...more,
      });
      assert.equal(res.statusCode, 201, res.body);
      return transactionId;
    }

    async function jobsOf(api: TestClient, transactionId: string): Promise<JobView[]> {
      const res = await api.get(`/v1/notifications?transactionId=${transactionId}`);
      assert.equal(res.statusCode, 200, res.body);
      return res.json().data.flatMap((n: { jobs: JobView[] }) => n.jobs);
    }

    async function messagesOf(api: TestClient, transactionId: string) {
      const res = await api.get(`/v1/messages?transactionId=${transactionId}`);
      assert.equal(res.statusCode, 200, res.body);
      return res.json().data as { content: string; createdAt: string }[];
    }

    test("a regular delay waits amount × unit, seconds to months (months by the calendar)", async () => {
      const units = ["seconds", "minutes", "hours", "days", "weeks", "months"] as const;
      for (const unit of units) {
        const { api, name } = await setup({ type: "regular", amount: 2, unit });
        const startedAt = ctx.clock.now();
        const tx = await fire(api, name, { n: unit });
        const [delay] = await poll(() => jobsOf(api, tx), settled, { what: `the ${unit} delay` });
        const due = addUnits(startedAt, 2, unit);
        assert.equal(delay?.status, "delayed", unit);
        assert.equal(delay?.runAt, new Date(due).toISOString(), `2 ${unit} from now`);
        ctx.clock.set(due - 1);
        await drain(ctx);
        assert.equal((await messagesOf(api, tx)).length, 0, `nothing 1 ms before 2 ${unit}`);
        ctx.clock.set(due);
        const messages = await poll(
          () => messagesOf(api, tx),
          (m) => m.length === 1,
          { what: `the message after 2 ${unit}` },
        );
        assert.equal(messages[0]?.content, `Delivered ${unit}`);
        assert.equal(messages[0]?.createdAt, new Date(due).toISOString(), "delivered at the due moment");
      }
    });

    test("a scheduled delay waits until the ISO date at delayPath, nested paths included", async () => {
      const { api, name } = await setup({ type: "scheduled", delayPath: "meeting.startsAt" });
      const at = ctx.clock.now() + 90 * 60_000;
      const tx = await fire(api, name, { n: 1, meeting: { startsAt: new Date(at).toISOString() } });
      const [delay] = await poll(() => jobsOf(api, tx), settled, { what: "the scheduled delay" });
      assert.equal(delay?.runAt, new Date(at).toISOString());
      ctx.clock.advance(89 * 60_000);
      await drain(ctx);
      assert.equal((await messagesOf(api, tx)).length, 0);
      ctx.clock.advance(60_000);
      await poll(
        () => messagesOf(api, tx),
        (m) => m.length === 1,
        { what: "the message at the date" },
      );
    });

    test("a scheduled date that passes while the step waits (here behind a longer delay) is delivered at once, not dropped", async () => {
      const tenant = await ctx.tenant();
      const api = ctx.client(tenant.dev.apiKey);
      const workflow = await createWorkflow(ctx, tenant.dev.apiKey, tenant.dev.generalGroupId, {
        name: uniqueName("Held-back schedule"),
        active: true,
        steps: [
          { template: { type: "delay" }, metadata: { type: "regular", amount: 10, unit: "minutes" } },
          { template: { type: "delay" }, metadata: { type: "scheduled", delayPath: "sendAt" } },
          { template: { type: "in_app", content: "Delivered {{n}}" } },
        ],
      });
      const name = workflow.triggers[0].identifier as string;
      // Ahead when accepted; behind by the time the scheduled step runs (after the 10-minute delay).
      const sendAt = new Date(ctx.clock.now() + 60_000).toISOString();
      const tx = await fire(api, name, { n: 3, sendAt });
      await poll(() => jobsOf(api, tx), settled, { what: "the first delay" });
      ctx.clock.advance(10 * 60_000);
      const messages = await poll(
        () => messagesOf(api, tx),
        (m) => m.length === 1,
        { what: "the message once the first delay is over" },
      );
      assert.equal(messages[0]?.content, "Delivered 3");
      const scheduled = (await jobsOf(api, tx))[1];
      assert.equal(scheduled?.status, "completed");
      assert.match(
        scheduled?.executionDetails.map((d) => d.detail).join(" | ") ?? "",
        /passed while the step waited: sending now/,
      );
    });

    test("a due delay's detail is written once, whether the in-app step after it runs in its commit or in a task of its own", async () => {
      const tenant = await ctx.tenant();
      const api = ctx.client(tenant.dev.apiKey);
      // A template that loops needs a render thread: that in-app step cannot run in the delay's
      // commit and gets a task of its own; the plain one runs in the delay's commit.
      const contents = { inCommit: "Delivered {{n}}", ownTask: "{{#each items}}{{this}}{{/each}} {{n}}" };
      const runs = [];
      for (const [which, content] of Object.entries(contents)) {
        const workflow = await createWorkflow(ctx, tenant.dev.apiKey, tenant.dev.generalGroupId, {
          name: uniqueName(`Delay then in-app, ${which}`),
          active: true,
          steps: [
            { template: { type: "delay" }, metadata: { type: "regular", amount: 5, unit: "minutes" } },
            { template: { type: "in_app", content } },
          ],
        });
        const tx = await fire(api, workflow.triggers[0].identifier as string, {
          n: which,
          items: ["a", "b"],
        });
        runs.push({ which, tx });
      }
      for (const { which, tx } of runs)
        await poll(() => jobsOf(api, tx), settled, { what: `the delay (${which})` });
      ctx.clock.advance(5 * 60_000);
      for (const { which, tx } of runs) {
        await poll(
          () => messagesOf(api, tx),
          (m) => m.length === 1,
          { what: `the message after the delay (${which})` },
        );
        const [delay, inApp] = await poll(
          () => jobsOf(api, tx),
          (jobs) => jobs.every((j) => j.status === "completed"),
          { what: `both jobs completed (${which})` },
        );
        const details = (job: JobView | undefined) => job?.executionDetails.map((d) => d.detail) ?? [];
        assert.deepEqual(
          details(delay).filter((d) => d === "The delay is over"),
          ["The delay is over"],
          `${which}: ${JSON.stringify(details(delay))}`,
        );
        assert.deepEqual(
          details(inApp).filter((d) => d === "In-app message created"),
          ["In-app message created"],
          `${which}: ${JSON.stringify(details(inApp))}`,
        );
      }
    });

    test("forty delays due at one moment (run together): each run's in-app steps once, with their details; a canceled run and a deleted subscriber's get nothing", async () => {
      const tenant = await ctx.tenant();
      const api = ctx.client(tenant.dev.apiKey);
      const workflow = await createWorkflow(ctx, tenant.dev.apiKey, tenant.dev.generalGroupId, {
        name: uniqueName("Delays due together"),
        active: true,
        steps: [
          { template: { type: "delay" }, metadata: { type: "regular", amount: 5, unit: "minutes" } },
          { template: { type: "in_app", content: "first {{n}}" } },
          {
            template: { type: "in_app", content: "second {{n}}" },
            filters: [
              {
                isNegated: false,
                type: "GROUP",
                value: "AND",
                children: [{ on: "payload", field: "kind", operator: "EQUAL", value: "both" }],
              },
            ],
          },
        ],
      });
      const name = workflow.triggers[0].identifier as string;
      const runs = await Promise.all(
        Array.from({ length: 40 }, async (_, n) => {
          const subscriberId = hexId();
          const kind = n % 2 === 0 ? "both" : "one";
          const transactionId = hexId();
          const res = await api.post("/v1/events/trigger", {
            name,
            to: subscriberId,
            payload: { n, kind },
            transactionId,
          });
          assert.equal(res.statusCode, 201, res.body);
          return { n, kind, subscriberId, transactionId };
        }),
      );
      for (const run of runs)
        await poll(() => jobsOf(api, run.transactionId), settled, { what: `run ${run.n}'s delay` });
      const [gone, canceled] = runs as [(typeof runs)[number], (typeof runs)[number]];
      assert.equal((await api.delete(`/v1/subscribers/${gone.subscriberId}`)).statusCode, 200);
      assert.equal((await api.delete(`/v1/events/trigger/${canceled.transactionId}`)).statusCode, 200);
      ctx.clock.advance(5 * 60_000);
      await poll(
        async () => (await Promise.all(runs.map((run) => jobsOf(api, run.transactionId)))).flat(),
        (jobs) => jobs.every((j) => !["pending", "queued", "running", "delayed"].includes(j.status)),
        { what: "every run to settle" },
      );
      await drain(ctx);
      for (const run of runs) {
        const jobs = await jobsOf(api, run.transactionId);
        const contents = (await messagesOf(api, run.transactionId)).map((m) => m.content).sort();
        const details = jobs.map((j) => j.executionDetails.map((d) => d.detail));
        if (run === gone || run === canceled) {
          assert.deepEqual(contents, [], `run ${run.n}`);
          assert.ok(
            jobs.slice(1).every((j) => j.status === "canceled"),
            `run ${run.n}: ${JSON.stringify(jobs.map((j) => j.status))}`,
          );
          continue;
        }
        const both = run.kind === "both";
        assert.deepEqual(
          jobs.map((j) => j.status),
          ["completed", "completed", both ? "completed" : "skipped"],
          `run ${run.n}`,
        );
        assert.deepEqual(contents, both ? [`first ${run.n}`, `second ${run.n}`] : [`first ${run.n}`]);
        assert.deepEqual(
          details[0]?.filter((d) => d === "The delay is over"),
          ["The delay is over"],
          `run ${run.n}: ${JSON.stringify(details)}`,
        );
        assert.deepEqual(
          details[1]?.filter((d) => d === "In-app message created"),
          ["In-app message created"],
          `run ${run.n}: ${JSON.stringify(details)}`,
        );
        assert.deepEqual(
          details[2]?.filter((d) => d === "In-app message created" || d === "filtered"),
          [both ? "In-app message created" : "filtered"],
          `run ${run.n}: ${JSON.stringify(details)}`,
        );
      }
    });

    test("overrides.delay replaces the step's delay for one trigger", async () => {
      const { api, name } = await setup({ type: "scheduled", delayPath: "sendAt" });
      const tx = await fire(api, name, { n: 2 }, { overrides: { delay: { amount: 3, unit: "days" } } });
      const [delay] = await poll(() => jobsOf(api, tx), settled, { what: "the overridden delay" });
      assert.equal(delay?.runAt, new Date(ctx.clock.now() + 3 * 86_400_000).toISOString());
    });

    test("a date in the past, a value that is not a date, a bad override: that job fails with the reason, nothing is sent", async () => {
      const { api, name } = await setup({ type: "scheduled", delayPath: "sendAt" });
      const cases: [Record<string, unknown>, Record<string, unknown>, RegExp][] = [
        [
          { sendAt: new Date(ctx.clock.now() - 60_000).toISOString() },
          {},
          /payload\.sendAt \(.*\) was already in the past when the trigger was accepted: nothing is sent/,
        ],
        [{ sendAt: "next tuesday-ish" }, {}, /payload\.sendAt is not a date: nothing is sent/],
        [{}, {}, /payload\.sendAt is not a date/],
        [{ sendAt: 12 }, {}, /is not a date/],
        [{}, { overrides: { delay: { amount: 2, unit: "fortnights" } } }, /overrides\.delay must be/],
        [{}, { overrides: { delay: { amount: -2, unit: "days" } } }, /overrides\.delay must be/],
      ];
      // Another trigger of the same workflow, fine, goes on.
      const good = await fire(api, name, { sendAt: new Date(ctx.clock.now() + 60_000).toISOString() });
      for (const [payload, more, reason] of cases) {
        const tx = await fire(api, name, payload, more);
        // Settled, and its reason readable (the job's row and its detail are one commit).
        const jobs = await poll(
          () => jobsOf(api, tx),
          (js) => settled(js) && (js[0]?.executionDetails.some((d) => d.status === "Failed") ?? false),
          { what: "the failed delay and its reason" },
        );
        assert.deepEqual(
          jobs.map((j) => j.status),
          ["failed", "canceled"],
          JSON.stringify(payload),
        );
        const detail = jobs[0]?.executionDetails.find((d) => d.status === "Failed")?.detail ?? "";
        assert.match(detail, reason, JSON.stringify(jobs[0]?.executionDetails));
        assert.equal((await messagesOf(api, tx)).length, 0);
      }
      ctx.clock.advance(60_000);
      await poll(
        () => messagesOf(api, good),
        (m) => m.length === 1,
        { what: "the good trigger's message" },
      );
    });

    test("a cancel racing the delay's timer: the message is delivered or its job canceled, never both, never neither", async () => {
      const { api, name } = await setup({ type: "regular", amount: 5, unit: "minutes" });
      for (let round = 0; round < 8; round++) {
        const tx = await fire(api, name, { n: round });
        await poll(() => jobsOf(api, tx), settled, { what: "the delay" });
        const cancel = api.delete(`/v1/events/trigger/${tx}`);
        ctx.clock.advance(5 * 60_000);
        const answer = (await cancel).json().data as boolean;
        const jobs = await poll(
          () => jobsOf(api, tx),
          (all) => all.every((j) => !["pending", "queued", "running", "delayed"].includes(j.status)),
          { what: "the run to settle" },
        );
        await drain(ctx);
        const delivered = (await messagesOf(api, tx)).length;
        const inApp = jobs.find((j) => j.type === "in_app")?.status;
        assert.ok(
          (delivered === 1 && inApp === "completed" && !answer) ||
            (delivered === 0 && inApp === "canceled" && answer),
          `round ${round}: delivered ${delivered}, in_app ${inApp}, cancel answered ${answer}`,
        );
      }
    });
  },
  { clock: () => new ManualClock(START) },
);
