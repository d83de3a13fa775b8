import type { Kysely } from "kysely";
import { pipelined } from "../store/pipeline.ts";
import type { Database } from "../store/schema.ts";
import type { Subscriber, SubscriberPreferences } from "../subscribers/domain.ts";
import { loadPreferencesOfMany } from "../subscribers/service.ts";
import { subscriptionPreferencesForSteps } from "../topics/service.ts";
import type { ExecutionDetail, Job, Message, Notification } from "./domain.ts";
import { type EngineDeps, engineOnConnection, runJobTask } from "./engine-deps.ts";
import { groupBy } from "./group-by.ts";
import { runsAtOnce } from "./in-app-at-once.ts";
import { runsByNotification } from "./new-runs.ts";
import type { NewTask } from "./queue/port.ts";
import { newDetail } from "./records.ts";
import { tenantOf } from "./steps/handler.ts";
import { inAppAtOnce } from "./steps/in-app.ts";
import { gate } from "./steps/index.ts";

/**
 * In-app delivery in the acknowledgement (docs/engine.md, "Triggering and the acknowledgement"). A
 * run whose first steps are in-app steps, with nothing before them that waits (a delay, a digest, a
 * throttle, a step defined in code), has them decided and written in the trigger's own transaction:
 * the filters and the subscriber's preferences are asked, the templates rendered, and the message
 * and its execution detail written with the trigger, so that the acknowledgement is the delivery.
 * The first step that is anything else (or whose templates need more than the event loop gives one
 * render: a render thread, a limit) is queued as it would have been, and runs in the worker.
 */

export interface DeliveredAtOnce {
  /** The messages to write, with the trigger. */
  messages: Message[];
  /** The execution details of the steps that ran. */
  details: ExecutionDetail[];
  /** Each message with its subscriber, to tell the inbox once the transaction has committed. */
  delivered: { message: Message; subscriber: Subscriber }[];
}

/**
 * New runs' records (new-runs.ts) with their leading in-app steps run here (deliverLeadingInApp):
 * the messages and their details added, and the tasks then those of the first job of each run not
 * run here (`queued`).
 */
export async function newRunsDelivered(
  deps: EngineDeps,
  notifications: readonly Notification[],
  built: { jobs: Job[]; tasks: NewTask[]; details: ExecutionDetail[] },
  subscribers: ReadonlyMap<string, Subscriber>,
  now: string,
): Promise<
  { tasks: NewTask[]; details: ExecutionDetail[]; messages: Message[] } & Pick<DeliveredAtOnce, "delivered">
> {
  const { jobs, tasks, details } = built;
  const done = await deliverLeadingInApp(deps, runsByNotification(notifications, jobs), subscribers, now);
  // Every step run here has its detail (a message, or why there is none).
  if (done.details.length === 0) return { tasks, details, messages: [], delivered: [] };
  return {
    tasks: jobs.filter((job) => job.status === "queued").map((job) => runJobTask(job.id)),
    details: [...details, ...done.details],
    messages: done.messages,
    delivered: done.delivered,
  };
}

/**
 * Runs the leading in-app steps of new runs, inside the trigger's transaction (`deps.db`): each run
 * whose first job can be run here has its leading in-app jobs set `completed` (a message) or
 * `skipped` (filtered, or the preferences said no), and the first job after them, if any, `queued`;
 * the caller queues the tasks of the `queued` jobs. `subscribers` are the rows this transaction
 * created or read when it resolved the recipients: on PostgreSQL each is held from that read to the
 * commit (FOR KEY SHARE, or FOR UPDATE by an upsert), so the subscriber is there for its message
 * without holding its row a second time, as a job run in the worker must.
 */
export async function deliverLeadingInApp(
  deps: EngineDeps,
  runs: readonly { notification: Notification; jobs: Job[] }[],
  subscribers: ReadonlyMap<string, Subscriber>,
  now: string,
): Promise<DeliveredAtOnce> {
  const out: DeliveredAtOnce = { messages: [], details: [], delivered: [] };
  const eligible = runs.flatMap(({ notification, jobs }) => {
    const first = jobs[0];
    const subscriber = subscribers.get(notification.subscriberRef);
    return first && subscriber && runsAtOnce(first) ? [{ notification, jobs, subscriber }] : [];
  });
  if (eligible.length === 0) return out;
  // The runs' preferences (and, through a topic, their subscriptions'): one read of each for the
  // runs of one environment and workflow (through a topic, of one trigger and topic: a
  // subscription's condition reads the trigger's payload), side by side (one round trip on
  // PostgreSQL).
  const groups = groupBy(eligible, ({ notification: { environmentId, triggerId, workflowId, topicId } }) =>
    topicId === ""
      ? `${environmentId}\u0000${workflowId}`
      : `${environmentId}\u0000${workflowId}\u0000${triggerId}\u0000${topicId}`,
  );
  const reads = await pipelined(
    deps.db,
    [...groups.values()].flatMap((group) => {
      const { notification } = group[0] as (typeof eligible)[number];
      const refs = group.map((run) => run.notification.subscriberRef);
      return [
        (db: Kysely<Database>) =>
          loadPreferencesOfMany(
            engineOnConnection(deps, db),
            tenantOf(notification),
            refs,
            notification.workflowId,
          ),
        async (db: Kysely<Database>) =>
          notification.topicId === ""
            ? undefined
            : subscriptionPreferencesForSteps(
                engineOnConnection(deps, db),
                notification.topicId,
                refs,
                notification.workflowId,
                notification.payload,
              ),
      ];
    }),
  );
  const decided = [...groups.values()].flatMap((group, g) =>
    group.map((run) => ({
      ...run,
      preferences: (reads[2 * g] as Map<string, SubscriberPreferences>).get(run.notification.subscriberRef),
      subscription: (
        reads[2 * g + 1] as Awaited<ReturnType<typeof subscriptionPreferencesForSteps>> | undefined
      )?.get(run.notification.subscriberRef),
    })),
  );
  for (const { notification, jobs, subscriber, preferences, subscription } of decided) {
    let next = 0;
    for (const job of jobs) {
      if (!runsAtOnce(job)) break;
      const refused = gate(deps, job, notification, subscriber, preferences, subscription);
      if (refused) {
        job.status = "skipped";
        out.details.push(newDetail(job, refused.executionStatus, refused.detail, now));
      } else {
        const made = inAppAtOnce({ deps, job, notification, subscriber });
        if (!made) break;
        job.status = "completed";
        out.messages.push(made.message);
        out.delivered.push({ message: made.message, subscriber });
        out.details.push(newDetail(job, made.status, made.detail, now, { raw: made.raw }));
      }
      job.attempts = 1;
      job.updatedAt = now;
      next++;
    }
    const following = jobs[next];
    if (next > 0 && following) following.status = "queued";
  }
  return out;
}
