import type { Kysely } from "kysely";
import { isoNow } from "../clock.ts";
import { pipelined } from "../store/pipeline.ts";
import type { Database } from "../store/schema.ts";
import type { Subscriber } from "../subscribers/domain.ts";
import { type CreateSubscriberInput, upsertRecipients } from "../subscribers/service.ts";
import type { Tenant } from "../tenancy/tenant.ts";
import { type DeliveredAtOnce, newRunsDelivered } from "./at-acknowledgement.ts";
import type { ExecutionDetail, Job, Notification } from "./domain.ts";
import { type EngineDeps, engineOnConnection } from "./engine-deps.ts";
import { Gatherer } from "./gather.ts";
import { groupBy } from "./group-by.ts";
import { insertNewMessages } from "./message-repository.ts";
import {
  createdSubscriberNote,
  jobsOf,
  notificationsOf,
  type RecipientNote,
  type RunPlan,
} from "./new-runs.ts";
import type { NewTask } from "./queue/port.ts";
import { checkTriggerJobs, spendRecipients, type TriggerLoad } from "./quotas.ts";
import * as engine from "./repository.ts";

/**
 * Triggers acknowledged together (docs/engine.md, "Triggers together"). A trigger to a few
 * subscribers is acknowledged by its own transaction: the trigger, its subscribers upserted, its
 * runs and the in-app messages of their leading steps, a dozen statements and a commit. When many
 * arrive at once in one process, the ones that join within a turn of the event loop are written by
 * one transaction instead, with one statement for each kind of row: the triggers, the subscribers
 * of an environment, the notifications, jobs, tasks, details and messages, and each environment's
 * quotas checked and counted once for all its triggers. Each is answered once that transaction has
 * committed, as its own would have been. Anything the batch cannot take as its own transaction
 * would (a transactionId seen before, a quota passed, a recipient it does not upsert, any error)
 * rolls the batch back, and each trigger then runs its own transaction: what that answers is the
 * trigger's answer, as if there had been no batch.
 */

/** A trigger ready for its transaction: everything read and checked that comes before it. */
export interface BatchedTrigger {
  tenant: Tenant;
  trigger: Omit<engine.TriggerRecord, "fanoutCursor" | "fanoutDone" | "createdAt">;
  plan: RunPlan;
  recipients: readonly CreateSubscriberInput[];
  /** What the quotas count of it (undefined: no quota applies). */
  load: TriggerLoad | undefined;
}

/** What the batch did with a trigger: written, with the messages to tell; or left to its own transaction. */
export type BatchOutcome = { written: true; delivered: DeliveredAtOnce["delivered"] } | { written: false };

/** The most triggers a batch takes (each to at most RECIPIENTS_MAX subscribers). */
export const BATCH_MAX = 64;
/** The most recipients of a trigger that joins a batch: a batch writes at most 512 runs. */
export const RECIPIENTS_MAX = 8;
/**
 * Batches of one process in flight at once: one, and the next gathers while it commits. Measured on
 * the trigger bench side by side, one in flight against two: larger batches, more triggers a second
 * for less CPU each, on both backends.
 */
const IN_FLIGHT_MAX = 1;

const batchers = new WeakMap<object, Gatherer<BatchedTrigger, BatchOutcome>>();

/**
 * Hands a trigger to this process's batch. `written: false` (it came alone, or the batch could not
 * take it): the caller runs the trigger's own transaction.
 */
export function acknowledgeTogether(deps: EngineDeps, trigger: BatchedTrigger): Promise<BatchOutcome> {
  // One batch per store: every request of a process shares it.
  let batcher = batchers.get(deps.db);
  if (!batcher) {
    batcher = new Gatherer<BatchedTrigger, BatchOutcome>({
      max: BATCH_MAX,
      inFlight: IN_FLIGHT_MAX,
      run: async (batch) => (await runBatch(deps, batch)).map((delivered) => ({ written: true, delivered })),
      onItsOwn: { written: false },
    });
    batchers.set(deps.db, batcher);
  }
  return batcher.add(trigger);
}

/** Writes the batch in one transaction; the messages delivered, by item. */
async function runBatch(
  deps: EngineDeps,
  items: readonly BatchedTrigger[],
): Promise<DeliveredAtOnce["delivered"][]> {
  const now = isoNow(deps.clock);
  // The environments, each with its triggers' items and the load they add together, in id order
  // (two batches count the same environments' rows in the same order).
  const envs = new Map<
    string,
    { tenant: Tenant; items: BatchedTrigger[]; load: TriggerLoad; counted: boolean }
  >();
  for (const item of items) {
    const id = item.tenant.environmentId;
    let env = envs.get(id);
    if (!env) {
      env = { tenant: item.tenant, items: [], load: { recipients: 0, jobs: 0 }, counted: false };
      envs.set(id, env);
    }
    env.items.push(item);
    if (item.load) {
      env.counted = true;
      env.load = {
        recipients: env.load.recipients + item.load.recipients,
        jobs: env.load.jobs + item.load.jobs,
      };
    }
  }
  const byEnv = [...envs.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, env]) => env);
  const notifications: Notification[] = [];
  let delivered: DeliveredAtOnce["delivered"] = [];
  let queued = false;

  await deps.db.transaction().execute(async (trx) => {
    // The triggers, their subscribers and the environments' open jobs at once (one round trip on
    // PostgreSQL).
    const [inserted, ...upserts] = await pipelined(trx, [
      (db: Kysely<Database>) =>
        engine.insertTriggers(
          db,
          items.map((item) => ({ ...item.trigger, createdAt: now })),
        ),
      ...byEnv.map(
        (env) => (db: Kysely<Database>) =>
          upsertRecipients(
            engineOnConnection(deps, db),
            env.tenant,
            env.items.flatMap((item) => item.recipients),
          ),
      ),
      ...byEnv.map((env) => async (db: Kysely<Database>) => {
        if (env.counted)
          await checkTriggerJobs(engineOnConnection(deps, db), env.tenant, deps.quotas, env.load);
        return [];
      }),
    ]);
    // A transactionId seen before: its trigger's own transaction answers with the first acknowledgement.
    if (inserted.size !== items.length) throw new Error("a trigger of the batch was seen before");

    notifications.length = 0;
    let jobs: Job[] = [];
    let tasks: NewTask[] = [];
    let details: ExecutionDetail[] = [];
    const subscribers = new Map<string, Subscriber>();
    byEnv.forEach((env, e) => {
      const outcomes = upserts[e] ?? [];
      let at = 0;
      for (const item of env.items) {
        const mine = outcomes.slice(at, at + item.recipients.length);
        at += item.recipients.length;
        const notes = new Map<string, RecipientNote>();
        for (const { subscriber, created } of mine) {
          subscribers.set(subscriber.id, subscriber);
          if (created) notes.set(subscriber.id, createdSubscriberNote(subscriber));
        }
        const runs = notificationsOf(
          item.trigger,
          item.plan,
          mine.map(({ subscriber }) => subscriber.id),
          now,
          "",
        );
        const built = jobsOf(runs, item.plan, notes, now);
        notifications.push(...runs);
        jobs = jobs.concat(built.jobs);
        tasks = tasks.concat(built.tasks);
        details = details.concat(built.details);
      }
    });
    // The runs' leading in-app steps, as each trigger's own transaction delivers them.
    const written = await newRunsDelivered(
      engineOnConnection(deps, trx),
      notifications,
      { jobs, tasks, details },
      subscribers,
      now,
    );
    const { messages } = written;
    ({ tasks, details, delivered } = written);
    queued = tasks.length > 0;
    const [created] = await pipelined(trx, [
      (db) => engine.insertNotifications(db, notifications),
      (db) => engine.insertJobs(db, jobs),
      (db) => deps.queue.add(db, tasks),
      (db) => engine.insertDetails(db, details),
      (db) => insertNewMessages(db, messages),
      // Each environment's recipients counted into its minute, last: its count row is held to the commit.
      async (db) => {
        for (const env of byEnv)
          if (env.counted)
            await spendRecipients(engineOnConnection(deps, db), env.tenant, deps.quotas, env.load.recipients);
      },
    ]);
    if (created.length !== notifications.length)
      throw new Error(
        `new triggers found ${notifications.length - created.length} of their notifications written`,
      );
  });
  // The worker looks for tasks only when there are some to find.
  if (queued) deps.queue.wake();
  // Each trigger's messages, by its notifications.
  const triggerOf = new Map(notifications.map((n) => [n.id, n.triggerId]));
  const byTrigger = groupBy(delivered, (told) => triggerOf.get(told.message.notificationId));
  return items.map((item) => byTrigger.get(item.trigger.id) ?? []);
}
