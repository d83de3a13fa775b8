import { newObjectId } from "../ids.ts";
import type { Subscriber } from "../subscribers/domain.ts";
import { subscriberLabel } from "../subscribers/service.ts";
import type { Step } from "../workflows/domain.ts";
import type { ExecutionDetail, ExecutionStatus, Job, Notification, WorkflowSnapshot } from "./domain.ts";
import { runJobTask } from "./engine-deps.ts";
import type { NewTask } from "./queue/port.ts";
import { newDetail } from "./records.ts";
import type { TriggerRecord } from "./repository.ts";

/**
 * The records of new runs, built before they are written: a trigger's notifications (one per
 * subscriber), each with one job per step, and the tasks of their first jobs. Shared by a trigger's
 * own acknowledgement and fan-out (accept.ts) and the acknowledgements run together
 * (trigger-batch.ts).
 */

/** What every notification of one trigger shares, stored with the trigger for its fan-out. */
export interface RunPlan {
  workflow: WorkflowSnapshot;
  steps: Step[];
  payload: Record<string, unknown>;
  overrides: Record<string, unknown>;
  /** The trigger's actor as templates see it (`{{actor.firstName}}`): its subscriber, upserted. */
  actor: Record<string, unknown>;
  /** The actor's subscriber _id: a topic's member who is the actor is not notified of its own act. */
  actorRef?: string;
  tenant: Record<string, unknown>;
  to: unknown;
  /**
   * The workflow was inactive when triggered: its notifications are recorded, for the activity,
   * with every job skipped and saying why, and nothing is queued. Absent from plans stored before.
   */
  inactive?: boolean;
}

/** What the activity tells of a recipient before its run: an execution detail on its first job. */
export interface RecipientNote {
  status: ExecutionStatus;
  detail: string;
}
/** Notes by subscriber _id. */
export type RecipientNotes = ReadonlyMap<string, RecipientNote>;

/** The note on a subscriber a trigger created: it did not exist, and whether it can be reached. */
export function createdSubscriberNote(subscriber: Subscriber): RecipientNote {
  const contact = [
    ...(subscriber.email !== "" ? ["an email address"] : []),
    ...(subscriber.phone !== "" ? ["a phone number"] : []),
    ...(subscriber.channels.length > 0 ? ["chat or push credentials"] : []),
  ];
  const who = subscriberLabel(subscriber.subscriberId);
  if (contact.length === 0)
    return { status: "Warning", detail: `${who} did not exist and was created without contact details` };
  return {
    status: "Success",
    detail: `${who} did not exist and was created from the trigger, with ${contact.join(" and ")}`,
  };
}

const INACTIVE_DETAIL = "Not run: the workflow is inactive";

/** The trigger's notifications for these subscribers (by _id, each once). */
export function notificationsOf(
  trigger: Pick<TriggerRecord, "id" | "organizationId" | "environmentId" | "transactionId" | "workflowId">,
  plan: RunPlan,
  subscriberRefs: readonly string[],
  now: string,
  topicId: string,
): Notification[] {
  const channels = plan.steps.map((step) => step.template.type);
  return [...new Set(subscriberRefs)].map(
    (subscriberRef): Notification => ({
      id: newObjectId(),
      organizationId: trigger.organizationId,
      environmentId: trigger.environmentId,
      triggerId: trigger.id,
      transactionId: trigger.transactionId,
      workflowId: trigger.workflowId,
      workflow: plan.workflow,
      subscriberRef,
      payload: plan.payload,
      overrides: plan.overrides,
      actor: plan.actor,
      tenant: plan.tenant,
      to: plan.to,
      channels,
      topicId,
      createdAt: now,
      updatedAt: now,
    }),
  );
}

/**
 * The notifications' jobs, one per step (the first `queued`, the rest `pending`; all `skipped` for
 * an inactive workflow), the first jobs' tasks, and the details of the subscribers' notes.
 */
export function jobsOf(
  notifications: readonly Notification[],
  plan: RunPlan,
  notes: RecipientNotes | undefined,
  now: string,
): { jobs: Job[]; tasks: NewTask[]; details: ExecutionDetail[] } {
  const jobs: Job[] = [];
  const tasks: NewTask[] = [];
  const details: ExecutionDetail[] = [];
  // Details sort by time, then id, and ids (made by the system clock, as every detail's) by their
  // second, then at random: a note on the subscriber takes its id from a second before, so that it
  // comes first among the details of its moment (the inactive workflow's, or, on a quick worker or
  // under a test's clock, those of the first run).
  const detail = (job: Job, note: RecipientNote, first = false): ExecutionDetail =>
    newDetail(job, note.status, note.detail, now, first ? { id: newObjectId(Date.now() - 1000) } : {});
  for (const notification of notifications) {
    const note = notes?.get(notification.subscriberRef);
    plan.steps.forEach((step, stepIndex) => {
      const job: Job = {
        id: newObjectId(),
        organizationId: notification.organizationId,
        environmentId: notification.environmentId,
        notificationId: notification.id,
        transactionId: notification.transactionId,
        workflowId: notification.workflowId,
        subscriberRef: notification.subscriberRef,
        stepIndex,
        step,
        type: step.template.type,
        status: plan.inactive ? "skipped" : stepIndex === 0 ? "queued" : "pending",
        runAt: null,
        attempts: 0,
        digest: {},
        createdAt: now,
        updatedAt: now,
      };
      jobs.push(job);
      if (note && stepIndex === 0) details.push(detail(job, note, true));
      if (plan.inactive) details.push(detail(job, { status: "Warning", detail: INACTIVE_DETAIL }));
      else if (stepIndex === 0) tasks.push(runJobTask(job.id));
    });
  }
  return { jobs, tasks, details };
}

/** Each notification with its jobs, in the notifications' order. */
export function runsByNotification(notifications: readonly Notification[], jobs: readonly Job[]) {
  const byRun = new Map(notifications.map((n) => [n.id, { notification: n, jobs: [] as Job[] }]));
  for (const job of jobs) byRun.get(job.notificationId)?.jobs.push(job);
  return [...byRun.values()];
}
