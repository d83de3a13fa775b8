import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";
import { createWorkflow, uniqueName } from "../../test/factories.ts";
import { forEachBackend, type Client as TestClient } from "../../test/harness.ts";
import { poll } from "../../test/poll.ts";
import { drain } from "../../test/queue-helpers.ts";
import { ManualClock } from "../clock.ts";

// Digest steps (docs/engine.md, "Delays and digests"), on both backends, with the clock moved by hand:
// windows per key, `step.events` and `step.total_count` in the template, merged jobs, backoff, the close
// racing new events and cancels, and 100 concurrent events for one key.

const START = Date.UTC(2026, 5, 1, 12);
const MINUTE = 60_000;
const hexId = () => randomBytes(12).toString("hex");

interface JobView {
  type: string;
  status: string;
  digest: Record<string, unknown>;
  executionDetails: { detail: string; status: string }[];
}

const WAITING = ["pending", "queued", "running"];

forEachBackend(
  "digest steps",
  (ctx) => {
    async function setup(digestMetadata: Record<string, unknown>, content: string) {
      const tenant = await ctx.tenant();
      const api = ctx.client(tenant.dev.apiKey);
      const workflow = await createWorkflow(ctx, tenant.dev.apiKey, tenant.dev.generalGroupId, {
        name: uniqueName("Digest workflow"),
        active: true,
        steps: [
          { template: { type: "digest" }, metadata: { amount: 5, unit: "minutes", ...digestMetadata } },
          { template: { type: "in_app", content } },
        ],
      });
      return { api, name: workflow.triggers[0].identifier as string };
    }

    async function fire(api: TestClient, name: string, to: string, payload: Record<string, unknown>) {
      const transactionId = hexId();
      const res = await api.post("/v1/events/trigger", { name, to, payload, transactionId });
      assert.equal(res.statusCode, 201, res.body);
      return transactionId;
    }

    async function jobsOf(api: TestClient, transactionId: string): Promise<JobView[]> {
      const res = await api.get(`/v1/notifications?transactionId=${transactionId}`);
      assert.equal(res.statusCode, 200, res.body);
      return res.json().data.flatMap((n: { jobs: JobView[] }) => n.jobs);
    }

    /** Waits until the transaction's digest job has settled into a window (or gone on). */
    async function digested(api: TestClient, transactionId: string) {
      return poll(
        () => jobsOf(api, transactionId),
        (jobs) => jobs.length > 0 && !WAITING.includes(jobs[0]?.status ?? "pending"),
        { what: `the digest job of ${transactionId}` },
      );
    }

    async function messagesOf(api: TestClient, subscriberId: string) {
      const res = await api.get(`/v1/messages?subscriberId=${subscriberId}&limit=100`);
      assert.equal(res.statusCode, 200, res.body);
      return (res.json().data as { content: string; transactionId: string; createdAt: string }[]).sort(
        (a, b) => a.createdAt.localeCompare(b.createdAt),
      );
    }

    /**
     * Waits until the subscriber has `count` messages, then until the queue has done all that is due,
     * so that a message still to come would be there too.
     */
    async function settledMessages(api: TestClient, subscriberId: string, count: number) {
      await poll(
        () => messagesOf(api, subscriberId),
        (m) => m.length >= count,
        { what: `${count} messages` },
      );
      await drain(ctx);
      return messagesOf(api, subscriberId);
    }

    test("three events in one window: one message, '3 new comments', events oldest first; the others merged", async () => {
      const { api, name } = await setup(
        { digestKey: "postId" },
        "{{step.total_count}} new comments: {{#each step.events}}{{author}};{{/each}} (first: {{author}})",
      );
      const subscriberId = hexId();
      const txs: string[] = [];
      for (const author of ["ann", "bob", "cy"]) {
        txs.push(await fire(api, name, subscriberId, { postId: "p1", author }));
        await digested(api, txs.at(-1) as string);
        ctx.clock.advance(MINUTE);
      }
      await drain(ctx);
      assert.equal((await messagesOf(api, subscriberId)).length, 0, "nothing while the window is open");
      const [lead, ...others] = await Promise.all(txs.map((tx) => jobsOf(api, tx)));
      assert.equal(lead?.[0]?.status, "delayed", JSON.stringify(lead));
      for (const jobs of others) {
        assert.deepEqual(
          jobs.map((j) => j.status),
          ["merged", "merged"],
          "a merged event's digest job and the steps after it are merged",
        );
      }
      ctx.clock.advance(2 * MINUTE); // five minutes after the first event
      const messages = await settledMessages(api, subscriberId, 1);
      assert.deepEqual(
        messages.map((m) => [m.content, m.transactionId]),
        [["3 new comments: ann;bob;cy; (first: ann)", txs[0]]],
      );
      const leadJobs = await jobsOf(api, txs[0] as string);
      assert.deepEqual(
        leadJobs.map((j) => j.status),
        ["completed", "completed"],
      );
      assert.equal(leadJobs[0]?.digest.total_count, 3);
      assert.ok(leadJobs[0]?.executionDetails.some((d) => /closed with 3 events/.test(d.detail)));
    });

    test("each digestKey value and each subscriber has its own window; without a digestKey all events share one", async () => {
      const { api, name } = await setup({ digestKey: "postId" }, "{{step.total_count}} on {{postId}}");
      const [alice, bob] = [hexId(), hexId()];
      const txs = [
        await fire(api, name, alice, { postId: "p1" }),
        await fire(api, name, alice, { postId: "p2" }),
        await fire(api, name, alice, { postId: "p1" }),
        await fire(api, name, bob, { postId: "p1" }),
      ];
      for (const tx of txs) await digested(api, tx);
      ctx.clock.advance(5 * MINUTE);
      assert.deepEqual((await settledMessages(api, alice, 2)).map((m) => m.content).sort(), [
        "1 on p2",
        "2 on p1",
      ]);
      assert.deepEqual(
        (await settledMessages(api, bob, 1)).map((m) => m.content),
        ["1 on p1"],
      );

      const open = await setup({}, "{{step.total_count}} events");
      const carol = hexId();
      for (const postId of ["p1", "p2", "p3"])
        await digested(open.api, await fire(open.api, open.name, carol, { postId }));
      ctx.clock.advance(5 * MINUTE);
      assert.deepEqual(
        (await settledMessages(open.api, carol, 1)).map((m) => m.content),
        ["3 events"],
      );
    });

    test("an event after the window closed opens the next window", async () => {
      const { api, name } = await setup(
        { digestKey: "postId" },
        "{{step.total_count}}:{{#each step.events}}{{n}}{{/each}}",
      );
      const subscriberId = hexId();
      await digested(api, await fire(api, name, subscriberId, { postId: "p", n: 1 }));
      await digested(api, await fire(api, name, subscriberId, { postId: "p", n: 2 }));
      ctx.clock.advance(5 * MINUTE);
      await settledMessages(api, subscriberId, 1);
      await digested(api, await fire(api, name, subscriberId, { postId: "p", n: 3 }));
      ctx.clock.advance(5 * MINUTE);
      assert.deepEqual(
        (await settledMessages(api, subscriberId, 2)).map((m) => m.content),
        ["2:12", "1:3"],
      );
    });

    test("backoff: a lone event goes on at once; events within the backoff window are digested", async () => {
      const { api, name } = await setup(
        { digestKey: "postId", backoff: true, backoffAmount: 10, backoffUnit: "minutes" },
        "{{step.total_count}}:{{#each step.events}}{{n}}{{/each}}",
      );
      const subscriberId = hexId();
      const first = await fire(api, name, subscriberId, { postId: "p", n: 1 });
      assert.deepEqual(
        (await settledMessages(api, subscriberId, 1)).map((m) => m.content),
        ["1:1"],
        "no event before it: at once, without moving the clock",
      );
      assert.ok((await jobsOf(api, first))[0]?.executionDetails.some((d) => /backoff/.test(d.detail)));
      ctx.clock.advance(2 * MINUTE);
      await digested(api, await fire(api, name, subscriberId, { postId: "p", n: 2 }));
      await digested(api, await fire(api, name, subscriberId, { postId: "p", n: 3 }));
      await drain(ctx);
      assert.equal((await messagesOf(api, subscriberId)).length, 1, "the second and third wait");
      ctx.clock.advance(5 * MINUTE);
      assert.deepEqual(
        (await settledMessages(api, subscriberId, 2)).map((m) => m.content),
        ["1:1", "2:23"],
      );
      // Eleven minutes after the last event: lone again, at once.
      ctx.clock.advance(11 * MINUTE);
      await fire(api, name, subscriberId, { postId: "p", n: 4 });
      assert.deepEqual(
        (await settledMessages(api, subscriberId, 3)).map((m) => m.content),
        ["1:1", "2:23", "1:4"],
      );
    });

    test("100 concurrent events for one key: exactly one digest, total_count 100, every event once", async () => {
      const { api, name } = await setup(
        { digestKey: "postId" },
        "{{step.total_count}}|{{#each step.events}}{{n}},{{/each}}",
      );
      const subscriberId = hexId();
      assert.equal((await api.post("/v1/subscribers", { subscriberId })).statusCode, 201);
      const txs = await Promise.all(
        Array.from({ length: 100 }, (_, n) => fire(api, name, subscriberId, { postId: "hot", n })),
      );
      // Read from the database (one query a poll): a hundred pollers over the API would be the load.
      const statuses = await poll(
        async () =>
          (
            await ctx.store.db
              .selectFrom("jobs")
              .select("status")
              .where("transaction_id", "in", txs)
              .where("type", "=", "digest")
              .execute()
          ).map((row) => row.status),
        (all) => all.length === 100 && all.every((s) => !WAITING.includes(s)),
        { what: "100 digest jobs in their window" },
      );
      assert.equal(statuses.filter((s) => s === "delayed").length, 1, "one lead");
      assert.equal(statuses.filter((s) => s === "merged").length, 99, "99 merged");
      ctx.clock.advance(5 * MINUTE);
      const messages = await settledMessages(api, subscriberId, 1);
      assert.equal(messages.length, 1, JSON.stringify(messages));
      const [count, list] = (messages[0]?.content ?? "").split("|");
      assert.equal(count, "100");
      const seen = (list ?? "").split(",").filter(Boolean).map(Number);
      assert.deepEqual(
        [...seen].sort((a, b) => a - b),
        Array.from({ length: 100 }, (_, n) => n),
      );
    });

    test("an event arriving while its window closes lands in that digest or the next, never both or neither", async () => {
      const { api, name } = await setup({ digestKey: "k" }, "{{#each step.events}}{{n}},{{/each}}");
      for (let round = 0; round < 5; round++) {
        const subscriberId = hexId();
        let n = 0;
        for (let i = 0; i < 3; i++)
          await digested(api, await fire(api, name, subscriberId, { k: "x", n: n++ }));
        // The close and five more events, at once.
        const racing = Array.from({ length: 5 }, () => fire(api, name, subscriberId, { k: "x", n: n++ }));
        ctx.clock.advance(5 * MINUTE);
        const txs = await Promise.all(racing);
        for (const tx of txs) await digested(api, tx);
        ctx.clock.advance(5 * MINUTE);
        const all = await poll(
          async () =>
            (await messagesOf(api, subscriberId)).flatMap((m) =>
              m.content.split(",").filter(Boolean).map(Number),
            ),
          (events) => events.length >= n,
          { what: "every event delivered" },
        );
        await drain(ctx);
        const delivered = (await messagesOf(api, subscriberId)).flatMap((m) =>
          m.content.split(",").filter(Boolean).map(Number),
        );
        assert.deepEqual(
          [...delivered].sort((a, b) => a - b),
          Array.from({ length: n }, (_, i) => i),
          `round ${round}: every event exactly once (${JSON.stringify(all)})`,
        );
      }
    });

    test("cancel: a merged event leaves the digest; a canceled lead hands the delivery to the next event", async () => {
      const { api, name } = await setup(
        { digestKey: "k" },
        "{{step.total_count}}:{{#each step.events}}{{n}}{{/each}}",
      );
      const subscriberId = hexId();
      const txs: string[] = [];
      for (const n of [1, 2, 3]) {
        txs.push(await fire(api, name, subscriberId, { k: "x", n }));
        await digested(api, txs.at(-1) as string);
      }
      const [first, second, third] = txs as [string, string, string];
      assert.deepEqual((await api.delete(`/v1/events/trigger/${second}`)).json(), { data: true });
      assert.deepEqual(
        (await jobsOf(api, second)).map((j) => j.status),
        ["canceled", "canceled"],
      );
      assert.deepEqual((await api.delete(`/v1/events/trigger/${first}`)).json(), { data: true });
      assert.deepEqual(
        (await jobsOf(api, first)).map((j) => j.status),
        ["canceled", "canceled"],
      );
      ctx.clock.advance(5 * MINUTE);
      const messages = await settledMessages(api, subscriberId, 1);
      assert.deepEqual(
        messages.map((m) => [m.content, m.transactionId]),
        [["1:3", third]],
        "the third event carries a digest of itself alone",
      );
      assert.deepEqual(
        (await jobsOf(api, third)).map((j) => j.status),
        ["completed", "completed"],
      );
      // Once the window has closed, its events are delivered: nothing left to cancel.
      assert.deepEqual((await api.delete(`/v1/events/trigger/${third}`)).json(), { data: false });
    });

    test("a closed digest of several triggers is delivered: canceling the trigger that carries it stops nothing", async () => {
      const tenant = await ctx.tenant();
      const api = ctx.client(tenant.dev.apiKey);
      const workflow = await createWorkflow(ctx, tenant.dev.apiKey, tenant.dev.generalGroupId, {
        name: uniqueName("Digest then delay"),
        active: true,
        steps: [
          { template: { type: "digest" }, metadata: { amount: 5, unit: "minutes" } },
          { template: { type: "delay" }, metadata: { amount: 1, unit: "minutes" } },
          { template: { type: "in_app", content: "{{step.total_count}}" } },
        ],
      });
      const name = workflow.triggers[0].identifier as string;
      const subscriberId = hexId();
      const txs: string[] = [];
      for (let i = 0; i < 3; i++) {
        txs.push(await fire(api, name, subscriberId, {}));
        await digested(api, txs.at(-1) as string);
      }
      ctx.clock.advance(5 * MINUTE);
      // The window closed; the carrier's delay waits.
      await poll(
        () => jobsOf(api, txs[0] as string),
        (jobs) => jobs[1]?.status === "delayed",
        { what: "the carrier's delay" },
      );
      assert.deepEqual((await api.delete(`/v1/events/trigger/${txs[0]}`)).json(), { data: false });
      assert.deepEqual((await api.delete(`/v1/events/trigger/${txs[1]}`)).json(), { data: false });
      ctx.clock.advance(MINUTE);
      assert.deepEqual(
        (await settledMessages(api, subscriberId, 1)).map((m) => m.content),
        ["3"],
      );

      // A digest of the trigger's own event alone is its own: canceled as anything else.
      const alone = await fire(api, name, subscriberId, {});
      await digested(api, alone);
      ctx.clock.advance(5 * MINUTE);
      await poll(
        () => jobsOf(api, alone),
        (jobs) => jobs[1]?.status === "delayed",
        { what: "the lone event's delay" },
      );
      assert.deepEqual((await api.delete(`/v1/events/trigger/${alone}`)).json(), { data: true });
      ctx.clock.advance(MINUTE);
      await drain(ctx);
      assert.equal((await messagesOf(api, subscriberId)).length, 1);
    });

    test("a cancel racing the close: each event is delivered or canceled, never both, never neither", async () => {
      const { api, name } = await setup({ digestKey: "k" }, "{{#each step.events}}{{n}},{{/each}}");
      for (let round = 0; round < 6; round++) {
        const subscriberId = hexId();
        const txs: string[] = [];
        for (const n of [0, 1, 2]) {
          txs.push(await fire(api, name, subscriberId, { k: "x", n }));
          await digested(api, txs.at(-1) as string);
        }
        // Alternate between canceling the lead and a merged event.
        const victim = round % 2;
        const cancel = api.delete(`/v1/events/trigger/${txs[victim]}`);
        ctx.clock.advance(5 * MINUTE);
        const canceled = (await cancel).json().data as boolean;
        const delivered = (
          await poll(
            () => messagesOf(api, subscriberId),
            (m) => m.length >= 1,
            { what: "the digest" },
          )
        ).flatMap((m) => m.content.split(",").filter(Boolean).map(Number));
        await drain(ctx);
        assert.equal((await messagesOf(api, subscriberId)).length, 1, "one digest");
        const victimJobs = await jobsOf(api, txs[victim] as string);
        const victimCanceled = victimJobs.some((j) => j.status === "canceled");
        assert.equal(canceled, victimCanceled, `round ${round}: the answer says what happened`);
        assert.equal(
          delivered.includes(victim),
          !victimCanceled,
          `round ${round}: delivered ${JSON.stringify(delivered)}, canceled ${victimCanceled}`,
        );
        for (const other of [0, 1, 2].filter((n) => n !== victim)) {
          assert.ok(delivered.includes(other), `round ${round}: event ${other} is delivered`);
        }
      }
    });
  },
  { clock: () => new ManualClock(START) },
);
