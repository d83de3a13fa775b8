// In-app delivery in the acknowledgement (docs/engine.md, "Triggering and the acknowledgement"): a run
// whose first steps are in-app steps has them decided and written in the trigger's own transaction. The
// app here runs no worker at all, so whatever is in the feed when the trigger answers was written by
// the trigger, and whatever is left to the queue stays `queued`.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";
import { ManualClock } from "../src/clock.ts";
import { fanOut } from "../src/engine/fan-out.ts";
import { runJob } from "../src/engine/run-job.ts";
import { workflowInNewTenant } from "./factories.ts";
import { type Client, forEachBackend, testConfig } from "./harness.ts";
import { countTasks } from "./queue-helpers.ts";

const hexId = () => randomBytes(12).toString("hex");

interface JobView {
  type: string;
  status: string;
  executionDetails: { status: string; detail: string; raw?: string }[];
}

async function feed(api: Client, subscriberId: string) {
  const res = await api.get(`/v1/subscribers/${subscriberId}/notifications/feed?limit=100`);
  assert.equal(res.statusCode, 200, res.body);
  return res.json().data as { content: string; transactionId: string }[];
}

async function jobsOf(api: Client, transactionId: string): Promise<JobView[]> {
  const res = await api.get(`/v1/notifications?transactionId=${transactionId}`);
  assert.equal(res.statusCode, 200, res.body);
  const [notification] = res.json().data as { jobs: JobView[] }[];
  assert.ok(notification, `the notification of ${transactionId}`);
  return notification.jobs;
}

forEachBackend(
  "in-app steps delivered in the trigger's acknowledgement",
  (ctx) => {
    const setup = (steps: unknown[], extra: Record<string, unknown> = {}) =>
      workflowInNewTenant(ctx, "At once", steps, extra);

    async function trigger(api: Client, body: Record<string, unknown>): Promise<string> {
      const transactionId = (body.transactionId as string | undefined) ?? hexId();
      const res = await api.post("/v1/events/trigger", { ...body, transactionId });
      assert.equal(res.statusCode, 201, res.body);
      assert.equal(res.json().data.status, "processed");
      return transactionId;
    }

    const inApp = (content: string, extra: Record<string, unknown> = {}) => ({
      template: { type: "in_app", content },
      ...extra,
    });

    test("a lone in-app step is rendered and in the feed when the trigger answers, with no worker running", async () => {
      const { api, name } = await setup([inApp("Hi {{subscriber.firstName}}, order {{orderId}}")]);
      const subscriberId = hexId();
      const tx = await trigger(api, {
        name,
        to: { subscriberId, firstName: "Ada" },
        payload: { orderId: "<A-1>" },
      });
      const messages = await feed(api, subscriberId);
      assert.deepEqual(
        messages.map((m) => [m.transactionId, m.content]),
        [[tx, "Hi Ada, order &lt;A-1&gt;"]],
      );
      const [job] = await jobsOf(api, tx);
      assert.equal(job?.status, "completed");
      assert.deepEqual(job?.executionDetails.map((d) => [d.status, d.detail]).at(-1), [
        "Success",
        "In-app message created",
      ]);
    });

    test("a lone surrogate in the payload (a broken escape, not text) reaches the feed as U+FFFD", async () => {
      const { api, name } = await setup([inApp("Hi {{name}}")]);
      const subscriberId = hexId();
      // api.post writes the lone surrogate as the escape \ud800; a pair stays a pair.
      const tx = await trigger(api, { name, to: subscriberId, payload: { name: "A\ud800da \ud83c\udf89" } });
      const messages = await feed(api, subscriberId);
      assert.deepEqual(
        messages.map((m) => [m.transactionId, m.content]),
        [[tx, "Hi A\ufffdda \ud83c\udf89"]],
      );
    });

    test("leading in-app steps run, filtered or not; the first other step is queued for the worker", async () => {
      const { api, name } = await setup([
        inApp("filtered out", {
          filters: [
            {
              isNegated: false,
              type: "GROUP",
              value: "AND",
              children: [{ on: "payload", field: "kind", operator: "EQUAL", value: "never" }],
            },
          ],
        }),
        inApp("second"),
        { template: { type: "delay" }, metadata: { type: "regular", amount: 5, unit: "minutes" } },
        inApp("after the delay"),
      ]);
      const subscriberId = hexId();
      const tx = await trigger(api, { name, to: subscriberId, payload: { kind: "news" } });
      assert.deepEqual(
        (await feed(api, subscriberId)).map((m) => m.content),
        ["second"],
      );
      const jobs = await jobsOf(api, tx);
      assert.deepEqual(
        jobs.map((j) => [j.type, j.status]),
        [
          ["in_app", "skipped"],
          ["in_app", "completed"],
          ["delay", "queued"],
          ["in_app", "pending"],
        ],
      );
      assert.equal(jobs[0]?.executionDetails.at(-1)?.detail, "filtered");
    });

    test("the subscriber's preferences are asked: in-app turned off for the workflow is skipped, nothing written", async () => {
      const { api, name, workflowId } = await setup([inApp("muted")]);
      const subscriberId = hexId();
      assert.equal((await api.post("/v1/subscribers", { subscriberId })).statusCode, 201);
      const off = await api.patch(`/v1/subscribers/${subscriberId}/preferences/${workflowId}`, {
        channel: { type: "in_app", enabled: false },
      });
      assert.equal(off.statusCode, 200, off.body);
      const tx = await trigger(api, { name, to: subscriberId });
      assert.deepEqual(await feed(api, subscriberId), []);
      const [job] = await jobsOf(api, tx);
      assert.equal(job?.status, "skipped");
      assert.match(job?.executionDetails.at(-1)?.detail ?? "", /^Skipped: /);
    });

    test("a step the acknowledgement cannot run leaves the run to the queue: a delay first, or a template that loops", async () => {
      const looping = await setup([inApp("{{#each items}}{{this}} {{/each}}")]);
      const delayed = await setup([
        { template: { type: "delay" }, metadata: { type: "regular", amount: 1, unit: "minutes" } },
        inApp("later"),
      ]);
      for (const { api, name } of [looping, delayed]) {
        const subscriberId = hexId();
        const tx = await trigger(api, { name, to: subscriberId, payload: { items: ["a", "b"] } });
        assert.deepEqual(await feed(api, subscriberId), []);
        assert.equal((await jobsOf(api, tx))[0]?.status, "queued");
      }
    });

    test("a repeated transactionId delivers nothing again", async () => {
      const { api, name } = await setup([inApp("once")]);
      const subscriberId = hexId();
      const tx = await trigger(api, { name, to: subscriberId });
      await trigger(api, { name, to: subscriberId, transactionId: tx });
      assert.deepEqual(
        (await feed(api, subscriberId)).map((m) => m.transactionId),
        [tx],
      );
    });

    test("every inline recipient gets its message; a topic's members go through the fan-out", async () => {
      const { api, name } = await setup([inApp("to {{subscriber.subscriberId}}")]);
      const direct = [hexId(), hexId(), hexId()];
      await trigger(api, { name, to: direct });
      for (const subscriberId of direct)
        assert.deepEqual(
          (await feed(api, subscriberId)).map((m) => m.content),
          [`to ${subscriberId}`],
        );

      const member = hexId();
      assert.equal((await api.post("/v1/subscribers", { subscriberId: member })).statusCode, 201);
      const topicKey = `t-${hexId()}`;
      assert.equal((await api.post("/v1/topics", { key: topicKey, name: "T" })).statusCode, 201);
      const added = await api.post(`/v1/topics/${topicKey}/subscribers`, { subscribers: [member] });
      assert.equal(added.statusCode, 200, added.body);
      await trigger(api, { name, to: { type: "Topic", topicKey } });
      assert.deepEqual(await feed(api, member), [], "the fan-out job has not run");
    });

    test("triggers that arrive together (acknowledged together): each run once, its own messages and notes; a repeated transactionId answered with the first acknowledgement", async () => {
      const { api, name, workflowId } = await setup([
        inApp("{{greeting}} {{subscriber.firstName}} #{{n}}"),
        inApp("news #{{n}}", {
          filters: [
            {
              isNegated: false,
              type: "GROUP",
              value: "AND",
              children: [{ on: "payload", field: "kind", operator: "EQUAL", value: "news" }],
            },
          ],
        }),
        { template: { type: "email", subject: "s", content: "c" } },
      ]);
      // One subscriber who exists, with in-app turned off for the workflow; one named by several
      // triggers before it exists; the rest new, by id or with a first name.
      const muted = hexId();
      assert.equal((await api.post("/v1/subscribers", { subscriberId: muted })).statusCode, 201);
      const off = await api.patch(`/v1/subscribers/${muted}/preferences/${workflowId}`, {
        channel: { type: "in_app", enabled: false },
      });
      assert.equal(off.statusCode, 200, off.body);
      const shared = hexId();
      const repeated = hexId();
      const tasksBefore = await countTasks(ctx.store);
      const events = Array.from({ length: 36 }, (_, n) => {
        const fresh = hexId();
        const to =
          n % 6 === 0
            ? shared
            : n % 6 === 1
              ? { subscriberId: fresh, firstName: `F${n}` }
              : n % 6 === 2
                ? [fresh, muted]
                : fresh;
        return {
          n,
          fresh,
          to,
          kind: n % 2 === 0 ? "news" : "other",
          transactionId: n % 12 === 5 ? repeated : hexId(),
        };
      });
      const send = (wave: typeof events) =>
        Promise.all(
          wave.map(async (e) => {
            const res = await api.post("/v1/events/trigger", {
              name,
              to: e.to,
              payload: { n: e.n, kind: e.kind, greeting: "Hi" },
              transactionId: e.transactionId,
            });
            assert.equal(res.statusCode, 201, res.body);
            return res.json().data as { acknowledged: boolean; status: string; transactionId: string };
          }),
        );
      // Two waves: the triggers with a transactionId of their own, then the repeats with a few of those.
      const answers = [
        ...(await send(events.filter((e) => e.transactionId !== repeated))),
        ...(await send(events.filter((e) => e.transactionId === repeated))),
      ];
      events.sort((a, b) => Number(a.transactionId === repeated) - Number(b.transactionId === repeated));
      for (const [i, answer] of answers.entries())
        assert.deepEqual(answer, {
          acknowledged: true,
          status: "processed",
          transactionId: events[i]?.transactionId,
        });
      // The repeated transactionId ran once, for whichever of its triggers came first.
      const notificationsOf = async (transactionId: string) =>
        (await api.get(`/v1/notifications?transactionId=${transactionId}`)).json().data as {
          subscriber?: { subscriberId: string };
          payload: { n: number };
          jobs: JobView[];
        }[];
      const repeats = await notificationsOf(repeated);
      assert.equal(repeats.length, 1, JSON.stringify(repeats.map((r) => r.payload)));
      const ran = new Set(events.filter((e) => e.transactionId !== repeated).map((e) => e.n));
      ran.add((repeats[0] as { payload: { n: number } }).payload.n);

      let createdNotes = 0;
      const sharedFeed: string[] = [];
      for (const e of events) {
        if (!ran.has(e.n)) continue;
        const runs = await notificationsOf(e.transactionId);
        const recipients = Array.isArray(e.to) ? e.to : [e.to];
        assert.equal(runs.length, recipients.length, `trigger ${e.n}`);
        for (const run of runs) {
          const isMuted = run.subscriber?.subscriberId === muted;
          assert.deepEqual(
            run.jobs.map((j) => j.status),
            [
              isMuted ? "skipped" : "completed",
              isMuted || e.kind !== "news" ? "skipped" : "completed",
              "queued",
            ],
            `trigger ${e.n}, ${run.subscriber?.subscriberId}`,
          );
          createdNotes +=
            run.jobs[0]?.executionDetails.filter((d) => / did not exist /.test(d.detail)).length ?? 0;
        }
        if (e.to === shared) continue;
        const first = typeof e.to === "object" && !Array.isArray(e.to) ? `F${e.n}` : "";
        assert.deepEqual(
          (await feed(api, e.fresh)).map((m) => m.content).sort(),
          [...(e.kind === "news" ? [`news #${e.n}`] : []), `Hi ${first} #${e.n}`].sort(),
          `trigger ${e.n}`,
        );
      }
      for (const m of await feed(api, shared)) sharedFeed.push(m.content);
      const sharedRuns = events.filter((e) => e.to === shared && ran.has(e.n));
      assert.deepEqual(
        sharedFeed.sort(),
        sharedRuns.flatMap((e) => [`Hi  #${e.n}`, ...(e.kind === "news" ? [`news #${e.n}`] : [])]).sort(),
      );
      assert.deepEqual(await feed(api, muted), []);
      // A note for each subscriber a trigger created, once: the shared one by the first to name it.
      const freshSubscribers = events.filter((e) => ran.has(e.n) && e.to !== shared).length;
      assert.equal(createdNotes, freshSubscribers + 1);
      // One task for each run's email step, and none for the steps delivered here.
      const runsInAll = events
        .filter((e) => ran.has(e.n))
        .reduce((sum, e) => sum + (Array.isArray(e.to) ? e.to.length : 1), 0);
      assert.equal(await countTasks(ctx.store), tasksBefore + runsInAll);
    });

    test("a bulk call's events, acknowledged together where they may be: each its own outcome, in order; a subscriber named twice sees each event's fields in turn", async () => {
      const { api, name } = await setup([inApp("{{subscriber.firstName}} #{{n}}")]);
      const twice = hexId();
      const fresh = Array.from({ length: 40 }, () => hexId());
      const events: Record<string, unknown>[] = fresh.map((subscriberId, n) => ({
        name,
        to: subscriberId,
        payload: { n },
      }));
      // A subscriber named by two events, each with its own first name; an event refused in its place.
      events.splice(10, 0, { name, to: { subscriberId: twice, firstName: "Ada" }, payload: { n: 100 } });
      events.splice(20, 0, { name: `missing-${hexId()}`, to: hexId() });
      events.splice(30, 0, { name, to: { subscriberId: twice, firstName: "Grace" }, payload: { n: 101 } });
      const res = await api.post("/v1/events/trigger/bulk", { events });
      assert.equal(res.statusCode, 201, res.body);
      const results = res.json().data as { acknowledged: boolean; status: string }[];
      assert.equal(results.length, events.length);
      for (const [i, result] of results.entries())
        assert.deepEqual(
          [result.acknowledged, result.status],
          i === 20 ? [false, "error"] : [true, "processed"],
          `event ${i}`,
        );
      for (const [n, subscriberId] of fresh.entries())
        assert.deepEqual(
          (await feed(api, subscriberId)).map((m) => m.content),
          [` #${n}`],
        );
      assert.deepEqual((await feed(api, twice)).map((m) => m.content).sort(), ["Ada #100", "Grace #101"]);
      const stored = await api.get(`/v1/subscribers/${twice}`);
      assert.equal(stored.json().data.firstName, "Grace");
    });
  },
  // A render deadline no loaded machine reaches: a template that runs out of time is left to the
  // worker, which this app does not run, and these tests are about what the acknowledgement writes.
  { app: () => ({ runWorker: false, config: testConfig({ RENDER_TIMEOUT_MS: "10000" }) }) },
);

// The worker's side of the same idea (run-job.ts, in-app-at-once.ts): the in-app steps that follow a
// step run in the worker are written in the transaction that records that step's outcome, with no
// task of their own; the first other step gets its task, and runs on at once in the same task when
// it needs no claim. No worker runs here: the test runs the delay's job itself, once, and what
// follows it is there when that one run returns.
forEachBackend<ManualClock>(
  "a run goes on in the task of the step before",
  (ctx) => {
    const runJobIdOf = async (api: Client, transactionId: string) =>
      (
        (await api.get(`/v1/notifications?transactionId=${transactionId}`)).json().data[0] as {
          jobs: { _id: string }[];
        }
      ).jobs[0]?._id as string;

    test("after a due delay: in-app steps in the delay's own transaction, filtered or not, no task of theirs; the next other step queued and run on", async () => {
      const { api, name } = await workflowInNewTenant(ctx, "In-app after a delay", [
        { template: { type: "delay" }, metadata: { type: "regular", amount: 5, unit: "minutes" } },
        { template: { type: "in_app", content: "first for {{subscriber.firstName}}" } },
        {
          template: { type: "in_app", content: "filtered out" },
          filters: [
            {
              isNegated: false,
              type: "GROUP",
              value: "AND",
              children: [{ on: "payload", field: "kind", operator: "EQUAL", value: "never" }],
            },
          ],
        },
        { template: { type: "in_app", content: "third, {{kind}}" } },
        { template: { type: "sms", content: "no provider" } },
      ]);
      const subscriberId = hexId();
      const transactionId = hexId();
      const res = await api.post("/v1/events/trigger", {
        name,
        to: { subscriberId, firstName: "Ada" },
        payload: { kind: "news" },
        transactionId,
      });
      assert.equal(res.statusCode, 201, res.body);
      const delayJob = await runJobIdOf(api, transactionId);
      const deps = { db: ctx.store.db, clock: ctx.clock, queue: ctx.app.queue };
      await runJob(deps, delayJob, { attempt: 1 });
      ctx.clock.advance(5 * 60_000);
      // What the clock set off (PostgreSQL: the due task, added by the clock's timer) is in first.
      await ctx.clock.settled();
      const tasksBefore = await countTasks(ctx.store);
      await runJob(deps, delayJob, { attempt: 1 });
      const jobs = await jobsOf(api, transactionId);
      assert.deepEqual(
        jobs.map((j) => [j.type, j.status]),
        [
          ["delay", "completed"],
          ["in_app", "completed"],
          ["in_app", "skipped"],
          ["in_app", "completed"],
          ["sms", "skipped"],
        ],
      );
      assert.deepEqual(jobs[2]?.executionDetails.at(-1)?.detail, "filtered");
      assert.deepEqual(jobs[1]?.executionDetails.at(-1)?.detail, "In-app message created");
      assert.deepEqual(
        // Written in one moment: the feed's order between them is its tie-break's.
        (await feed(api, subscriberId)).map((m) => m.content).sort(),
        ["first for Ada", "third, news"],
      );
      // One task more: the sms step's (run on at once here, its task the durable fallback).
      assert.equal(await countTasks(ctx.store), tasksBefore + 1);
    });

    test("after a due delay: the subscriber's preferences are asked; in-app turned off is skipped, nothing written", async () => {
      const { api, name, workflowId } = await workflowInNewTenant(ctx, "Muted after a delay", [
        { template: { type: "delay" }, metadata: { type: "regular", amount: 5, unit: "minutes" } },
        { template: { type: "in_app", content: "muted" } },
      ]);
      const subscriberId = hexId();
      assert.equal((await api.post("/v1/subscribers", { subscriberId })).statusCode, 201);
      const transactionId = hexId();
      const res = await api.post("/v1/events/trigger", { name, to: subscriberId, transactionId });
      assert.equal(res.statusCode, 201, res.body);
      const delayJob = await runJobIdOf(api, transactionId);
      const deps = { db: ctx.store.db, clock: ctx.clock, queue: ctx.app.queue };
      await runJob(deps, delayJob, { attempt: 1 });
      // Turned off while the delay waits.
      const off = await api.patch(`/v1/subscribers/${subscriberId}/preferences/${workflowId}`, {
        channel: { type: "in_app", enabled: false },
      });
      assert.equal(off.statusCode, 200, off.body);
      ctx.clock.advance(5 * 60_000);
      await runJob(deps, delayJob, { attempt: 1 });
      const jobs = await jobsOf(api, transactionId);
      assert.deepEqual(
        jobs.map((j) => j.status),
        ["completed", "skipped"],
      );
      assert.match(jobs[1]?.executionDetails.at(-1)?.detail ?? "", /^Skipped: /);
      assert.deepEqual(await feed(api, subscriberId), []);
    });

    test("a topic's fan-out delivers each member's leading in-app steps in its batch: preferences asked, no task of theirs, the inbox told", async () => {
      const { api, name, workflowId } = await workflowInNewTenant(ctx, "Fan-out at once", [
        { template: { type: "in_app", content: "for {{subscriber.firstName}}" } },
        { template: { type: "sms", content: "no provider" } },
      ]);
      const [ada, muted] = [hexId(), hexId()];
      for (const [subscriberId, firstName] of [
        [ada, "Ada"],
        [muted, "Mo"],
      ])
        assert.equal((await api.post("/v1/subscribers", { subscriberId, firstName })).statusCode, 201);
      const off = await api.patch(`/v1/subscribers/${muted}/preferences/${workflowId}`, {
        channel: { type: "in_app", enabled: false },
      });
      assert.equal(off.statusCode, 200, off.body);
      const topicKey = `t-${hexId()}`;
      assert.equal((await api.post("/v1/topics", { key: topicKey, name: "T" })).statusCode, 201);
      const added = await api.post(`/v1/topics/${topicKey}/subscribers`, { subscribers: [ada, muted] });
      assert.equal(added.statusCode, 200, added.body);
      const transactionId = hexId();
      const res = await api.post("/v1/events/trigger", {
        name,
        to: { type: "Topic", topicKey },
        transactionId,
      });
      assert.equal(res.statusCode, 201, res.body);
      const trigger = await ctx.store.db
        .selectFrom("triggers")
        .select("id")
        .where("transaction_id", "=", transactionId)
        .executeTakeFirstOrThrow();
      const runJobTasks = () => countTasks(ctx.store, "engine.run-job");
      const before = await runJobTasks();
      const told: string[] = [];
      const deps = { db: ctx.store.db, clock: ctx.clock, queue: ctx.app.queue };
      await fanOut(deps, trigger.id, (event) => told.push(event.written?.subscriber.subscriberId ?? "?"));

      const res2 = await api.get(`/v1/notifications?transactionId=${transactionId}`);
      const runs = res2.json().data as { subscriber: { subscriberId: string }; jobs: JobView[] }[];
      const statuses = new Map(
        runs.map((run) => [run.subscriber.subscriberId, run.jobs.map((j) => j.status)]),
      );
      assert.deepEqual(statuses.get(ada), ["completed", "queued"]);
      assert.deepEqual(statuses.get(muted), ["skipped", "queued"]);
      assert.deepEqual(
        (await feed(api, ada)).map((m) => m.content),
        ["for Ada"],
      );
      assert.deepEqual(await feed(api, muted), []);
      // The sms steps' tasks, one a member; none for the in-app steps.
      assert.equal(await runJobTasks(), before + 2);
      assert.deepEqual(told, [ada], "the inbox is told of the one message, once committed");
    });

    test("a delay that falls due delivers the in-app step after it in its own task", async () => {
      const { api, name } = await workflowInNewTenant(ctx, "Run on", [
        { template: { type: "delay" }, metadata: { type: "regular", amount: 5, unit: "minutes" } },
        { template: { type: "in_app", content: "after the delay" } },
      ]);
      const subscriberId = hexId();
      const transactionId = hexId();
      const res = await api.post("/v1/events/trigger", {
        name,
        to: subscriberId,
        transactionId,
      });
      assert.equal(res.statusCode, 201, res.body);
      const notification = (await api.get(`/v1/notifications?transactionId=${transactionId}`)).json()
        .data[0] as { jobs: (JobView & { _id: string })[] };
      const delayJob = notification.jobs[0]?._id as string;
      const deps = { db: ctx.store.db, clock: ctx.clock, queue: ctx.app.queue };

      await runJob(deps, delayJob, { attempt: 1 });
      assert.deepEqual(
        (await jobsOf(api, transactionId)).map((j) => j.status),
        ["delayed", "pending"],
      );
      ctx.clock.advance(5 * 60_000);
      await runJob(deps, delayJob, { attempt: 1 });
      assert.deepEqual(
        (await jobsOf(api, transactionId)).map((j) => j.status),
        ["completed", "completed"],
      );
      assert.deepEqual(
        (await feed(api, subscriberId)).map((m) => m.content),
        ["after the delay"],
      );
    });
  },
  // The same render deadline as above: on a loaded machine a member's render past the default 50 ms
  // is left to a task of its own, and these tests are about what runs without one.
  {
    clock: () => new ManualClock(Date.UTC(2026, 5, 1, 12)),
    app: () => ({ runWorker: false, config: testConfig({ RENDER_TIMEOUT_MS: "10000" }) }),
  },
);
