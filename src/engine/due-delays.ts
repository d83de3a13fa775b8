import type { Kysely } from "kysely";
import { isoNow } from "../clock.ts";
import { pipelined } from "../store/pipeline.ts";
import type { Database } from "../store/schema.ts";
import type { Subscriber } from "../subscribers/domain.ts";
import { getSubscribersByRefs } from "../subscribers/service.ts";
import { deliverLeadingInApp } from "./at-acknowledgement.ts";
import type { ExecutionDetail, Job, Message, Notification } from "./domain.ts";
import { type EngineDeps, engineOnConnection, type MessageListener, runJobTask } from "./engine-deps.ts";
import { Gatherer } from "./gather.ts";
import { groupBy } from "./group-by.ts";
import { insertNewMessages } from "./message-repository.ts";
import { newDetail } from "./records.ts";
import * as engine from "./repository.ts";
import { tenantOf } from "./steps/handler.ts";

/**
 * Due delays, many in one transaction (docs/engine.md, "Due delays together"). When a batch of
 * delays falls due at once, each job's task would settle its delay and deliver the in-app step after
 * it in a transaction of its own: a dozen statements a message. Here the tasks that run at the same
 * time in one process hand their jobs to one batch instead, which writes them together: the delays
 * settled in one statement, the next jobs queued in one, the subscribers held and their preferences
 * read once an environment, the messages and every detail in one insert each. Each job's claim is
 * still its own conditional update (the delay moves from `delayed`, the next job from `pending`), so
 * a job a cancel or another run took meanwhile is left out, and a message is still written in the
 * same commit as its job's outcome. What the batch cannot run (no subscriber, a render that needs a
 * thread, a failed transaction) goes on as before: its task, or the job's own run.
 */

/** What became of a due delay handed to a batch. */
export type DueDelayRun =
  /** The batch could not run it: the caller runs the job itself. */
  | { ran: false }
  /**
   * The batch settled it (or found it taken). `next`: the run's next job, queued with its task and
   * not run by the batch, for the caller to run on (with the subscriber the batch held).
   */
  | { ran: true; next?: { job: Job; subscriber: Subscriber | undefined } };

/** A due delay, as its task read it, with the in-app step after it. */
interface Item {
  job: Job;
  notification: Notification;
  onMessage: MessageListener | undefined;
}

/** The most jobs a batch takes; the tasks of one process rarely run more at once. */
const BATCH_MAX = 100;
/** Batches of one process in flight at once: while one commits, the next gathers. */
const IN_FLIGHT_MAX = 2;

/**
 * Whether the job is a due delay of a stored workflow whose next step is an in-app step that may run
 * in the same transaction (no digest before it: its templates would read the digested events).
 */
export function joinsDueDelays(deps: EngineDeps, job: Job, notification: Notification): boolean {
  return (
    job.type === "delay" &&
    job.status === "delayed" &&
    job.step.active &&
    job.step.code === undefined &&
    job.runAt !== null &&
    Date.parse(job.runAt) <= deps.clock.now() &&
    notification.channels[job.stepIndex + 1] === "in_app" &&
    !notification.channels.slice(0, job.stepIndex + 1).includes("digest")
  );
}

const batchers = new WeakMap<object, Gatherer<Item, DueDelayRun>>();

/**
 * Hands a due delay (joinsDueDelays) to this process's batch; true once a batch has run it or found
 * it taken, false when the caller must run the job itself.
 */
export function runDueDelay(
  deps: EngineDeps,
  job: Job,
  notification: Notification,
  onMessage: MessageListener | undefined,
): Promise<DueDelayRun> {
  // One batch per queue, that is per engine: every task of a worker shares its queue.
  let batcher = batchers.get(deps.queue);
  if (!batcher) {
    batcher = new Gatherer<Item, DueDelayRun>({
      max: BATCH_MAX,
      inFlight: IN_FLIGHT_MAX,
      run: async (batch) => {
        const next = await runBatch(deps, batch);
        return batch.map((item) => {
          const after = next.get(item.job.id);
          return after ? { ran: true, next: after } : { ran: true };
        });
      },
      onItsOwn: { ran: false },
    });
    batchers.set(deps.queue, batcher);
  }
  return batcher.add({ job, notification, onMessage });
}

/** Runs the batch in one transaction; each delay's next job left queued (for its task to run on). */
async function runBatch(
  deps: EngineDeps,
  items: readonly Item[],
): Promise<Map<string, { job: Job; subscriber: Subscriber | undefined }>> {
  const told: { notificationId: string; event: Parameters<MessageListener>[0] }[] = [];
  const runOn = new Map<string, { job: Job; subscriber: Subscriber | undefined }>();
  await deps.db.transaction().execute(async (trx) => {
    told.length = 0;
    runOn.clear();
    const trxDeps = engineOnConnection(deps, trx);
    const now = isoNow(deps.clock);
    // The claims: a delay another run or a cancel moved meanwhile is not this batch's.
    const moved = await engine.settleJobs(
      trx,
      items.map((item) => item.job.id),
      ["delayed"],
      "completed",
      now,
      { countAttempt: true },
    );
    const runs = items.filter((item) => moved.has(item.job.id));
    const details: ExecutionDetail[] = runs.map(({ job }) =>
      newDetail(job, "Success", "The delay is over", now),
    );
    // The runs' later jobs, read where there are more steps after the in-app one: consecutive in-app
    // steps run here together, as in the acknowledgement.
    const longer = runs.filter((run) => run.notification.channels.length > run.job.stepIndex + 2);
    const later = groupBy(
      await engine.jobsOfNotifications(
        trx,
        longer.map((run) => run.job.notificationId),
      ),
      (job) => job.notificationId,
      (job) => job,
    );
    // The next jobs, queued where they are pending (a canceled run has none): each one's claim.
    const next = new Map<string, Job>();
    for (const [stepIndex, notificationIds] of groupBy(
      runs,
      (run) => run.job.stepIndex + 1,
      (run) => run.job.notificationId,
    ))
      for (const job of await engine.queueJobsAt(trx, notificationIds, stepIndex, now))
        next.set(job.notificationId, job);
    // Their subscribers, held to the commit (PostgreSQL: FOR KEY SHARE): a delete of one waits for
    // its message, and one deleted already gets none here (its job's task skips it). Then the in-app
    // steps, an environment at a time (deliverLeadingInApp finds subscribers by their reference).
    const withNext = runs.filter((run) => next.has(run.job.notificationId));
    const messages: Message[] = [];
    const delivered: { message: Message; subscriber: Subscriber }[] = [];
    const chains = new Map<string, { run: Item; jobs: Job[]; subscriber: Subscriber | undefined }>();
    for (const envRuns of groupBy(
      withNext,
      (run) => run.job.environmentId,
      (run) => run,
    ).values()) {
      const tenant = tenantOf((envRuns[0] as Item).job);
      const refs = [...new Set(envRuns.map((run) => run.job.subscriberRef))];
      const subscribers = await getSubscribersByRefs(trxDeps, tenant, refs, { hold: true });
      const envChains = envRuns.map((run) => {
        const first = next.get(run.job.notificationId) as Job;
        // The pending steps right after it, one after the other (a gap or another status ends them).
        const rest: Job[] = [];
        for (const job of later.get(run.job.notificationId) ?? []) {
          if (job.stepIndex <= first.stepIndex) continue;
          if (job.stepIndex !== first.stepIndex + 1 + rest.length || job.status !== "pending") break;
          rest.push(job);
        }
        const chain = { run, jobs: [first, ...rest], subscriber: subscribers.get(run.job.subscriberRef) };
        chains.set(run.job.id, chain);
        return { notification: run.notification, jobs: chain.jobs };
      });
      const out = await deliverLeadingInApp(trxDeps, envChains, subscribers, now);
      messages.push(...out.messages);
      details.push(...out.details);
      delivered.push(...out.delivered);
    }
    // What the in-app steps did, settled: the first from `queued` (this transaction queued it and
    // holds it), the ones after it from `pending`. A job that moved meanwhile fails the batch, and
    // each delay then runs on its own.
    const settles: { ids: string[]; from: "queued" | "pending"; to: "completed" | "skipped" }[] = [];
    const toQueue: { notificationId: string; stepIndex: number }[] = [];
    for (const { run, jobs, subscriber } of chains.values()) {
      jobs.forEach((job, i) => {
        if (job.status !== "completed" && job.status !== "skipped") return;
        const from = i === 0 ? "queued" : "pending";
        const group = settles.find((g) => g.from === from && g.to === job.status);
        if (group) group.ids.push(job.id);
        else settles.push({ ids: [job.id], from, to: job.status });
      });
      const first = jobs[0] as Job;
      if (first.status === "queued") runOn.set(run.job.id, { job: first, subscriber });
      else {
        const following = jobs.find((job, i) => i > 0 && job.status === "queued");
        if (following)
          toQueue.push({ notificationId: following.notificationId, stepIndex: following.stepIndex });
        else if (jobs.length === 1 && first.stepIndex + 1 < run.notification.channels.length)
          toQueue.push({ notificationId: first.notificationId, stepIndex: first.stepIndex + 1 });
      }
    }
    // Side by side (one round trip on PostgreSQL): the settles, the job after each chain that ran
    // queued (and run on by the delay's task), the details and the messages.
    const queueings = [
      ...groupBy(
        toQueue,
        (q) => q.stepIndex,
        (q) => q.notificationId,
      ),
    ];
    const written = await pipelined(trx, [
      ...settles.map(({ ids, from, to }) => async (db: Kysely<Database>) => {
        const settled = await engine.settleJobs(db, ids, [from], to, now, { countAttempt: true });
        if (settled.size !== ids.length) throw new Error("a job of the batch moved while it ran");
        return [] as Job[];
      }),
      ...queueings.map(
        ([stepIndex, notificationIds]) =>
          (db: Kysely<Database>) =>
            engine.queueJobsAt(db, notificationIds, stepIndex, now),
      ),
      (db: Kysely<Database>) => engine.insertDetails(db, details),
      (db: Kysely<Database>) => insertNewMessages(db, messages),
    ]);
    const chainOf = new Map([...chains.values()].map((chain) => [chain.run.job.notificationId, chain]));
    for (const queued of written.slice(settles.length, settles.length + queueings.length))
      for (const job of queued as Job[]) {
        const chain = chainOf.get(job.notificationId);
        if (chain) runOn.set(chain.run.job.id, { job, subscriber: chain.subscriber });
      }
    await deps.queue.add(
      trx,
      [...runOn.values()].map(({ job }) => runJobTask(job.id)),
    );
    for (const { message, subscriber } of delivered)
      told.push({
        notificationId: message.notificationId,
        event: {
          environmentId: message.environmentId,
          subscriberRef: message.subscriberRef,
          messageId: message.id,
          written: { message, subscriber },
        },
      });
  });
  deps.queue.wake();
  // Each message to the listener of the task whose run it belongs to.
  const listenerOf = new Map(items.map((item) => [item.job.notificationId, item.onMessage]));
  for (const { event, notificationId } of told) listenerOf.get(notificationId)?.(event);
  return runOn;
}
