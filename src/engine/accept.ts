import type { Kysely } from "kysely";
import type { KeyClaim } from "../auth/key-claim.ts";
import { isoNow } from "../clock.ts";
import type { Deps } from "../deps.ts";
import { ApiError, mention, unprocessable } from "../errors.ts";
import { newObjectId, newTransactionId } from "../ids.ts";
import { requirePayloadSchema } from "../json-schema.ts";
import { pipelined } from "../store/pipeline.ts";
import type { Database } from "../store/schema.ts";
import { type Subscriber, subscriberForTemplates } from "../subscribers/domain.ts";
import { type CreateSubscriberInput, countSubscribers, upsertRecipient } from "../subscribers/service.ts";
import type { Tenant } from "../tenancy/tenant.ts";
import { type TenantInput, tenantForTemplates, tenantOfTrigger } from "../tenants/service.ts";
import type { Topic } from "../topics/domain.ts";
import { countTopicSubscribers, findTopic } from "../topics/service.ts";
import { workflowForTenant } from "../workflow-overrides/service.ts";
import type { RunnableWorkflow } from "../workflows/domain.ts";
import { getRunnableWorkflow } from "../workflows/service.ts";
import { type DeliveredAtOnce, newRunsDelivered } from "./at-acknowledgement.ts";
import type { Message, Notification, TriggerStatus, WorkflowSnapshot } from "./domain.ts";
import { type EngineDeps, engineOnConnection, runJobTask, TASKS } from "./engine-deps.ts";
import { fanOutStart } from "./fan-out-cursor.ts";
import { insertNewMessages } from "./message-repository.ts";
import {
  createdSubscriberNote,
  jobsOf,
  notificationsOf,
  type RecipientNote,
  type RecipientNotes,
  type RunPlan,
} from "./new-runs.ts";
import { declaredVariables, requireVariables, withDefaults } from "./payload-variables.ts";
import {
  checkTriggerJobs,
  checkTriggerSize,
  fitsOneTrigger,
  QuotaExceeded,
  recipientsWorthCounting,
  reserveFanOutJobs,
  spendBulk,
  spendRecipients,
  type TriggerLoad,
} from "./quotas.ts";
import { sealRecipients, withMaskedChannels } from "./recipient-secrets.ts";
import * as engine from "./repository.ts";
import { acknowledgeTogether, BATCH_MAX, RECIPIENTS_MAX } from "./trigger-batch.ts";

export type { RecipientNote, RecipientNotes, RunPlan };
export { type EngineDeps, engineOnConnection, runJobTask, TASKS };

/** Thrown to roll back the work of a trigger whose transactionId the environment has seen. */
class RepeatedTrigger extends Error {}

/** A topic as a recipient. */
export interface TopicRecipient {
  type: "Topic";
  topicKey: string;
}
export type Recipient = string | CreateSubscriberInput | TopicRecipient;

export interface TriggerRequest {
  name: string;
  to?: Recipient | Recipient[];
  payload?: Record<string, unknown>;
  overrides?: Record<string, unknown>;
  transactionId?: string;
  actor?: string | CreateSubscriberInput;
  /** A tenant identifier (it must exist), or a tenant to create or update. */
  tenant?: string | TenantInput;
}

export interface TriggerAck {
  acknowledged: true;
  status: TriggerStatus;
  transactionId: string;
}

export interface AcceptOptions {
  /** Every subscriber of the environment, not `to`. */
  broadcast?: boolean;
  /**
   * The hash of the request that carried an Idempotency-Key (contract part 8), kept with the
   * trigger: a repeat of its transactionId by another request is a 422, not its acknowledgement.
   */
  idempotencyHash?: string | undefined;
}

/** The acknowledgement, and whether it is the first one again (the transactionId was seen). */
export interface Accepted {
  ack: TriggerAck;
  repeat: boolean;
}

/** The 422 of a key used again with another request (as src/idempotency answers it). */
const keyReused = () =>
  unprocessable(
    "This Idempotency-Key was already used for a different request; send a new key with a new request",
    "idempotency-key",
  );

/** At most this many direct recipients are resolved in the request; more go to a fan-out job. */
export const INLINE_RECIPIENTS = 20;

const isTopic = (recipient: Recipient): recipient is TopicRecipient =>
  typeof recipient === "object" && recipient !== null && (recipient as TopicRecipient).type === "Topic";

/** What a run keeps of its workflow: a later edit or delete does not change a notification under way. */
export function snapshotOf(workflow: RunnableWorkflow): WorkflowSnapshot {
  return {
    id: workflow.id,
    name: workflow.name,
    identifier: workflow.identifier,
    critical: workflow.critical,
    severity: workflow.severity,
    tags: workflow.tags,
    preferenceSettings: workflow.preferenceSettings,
    triggers: workflow.triggers,
  };
}

/** Why a workflow runs nothing, or "processed" when it runs. */
export function statusOf(workflow: Pick<RunnableWorkflow, "active" | "steps">): TriggerStatus {
  if (!workflow.active) return "trigger_not_active";
  if (workflow.steps.length === 0) return "no_workflow_steps_defined";
  if (!workflow.steps.some((step) => step.active)) return "no_workflow_active_steps_defined";
  return "processed";
}

/**
 * The trigger's direct recipients as subscriber _ids, in order: each is upserted (Novu's rule: a
 * subscriberId nobody made is created), and one that did not exist gets a note saying so.
 */
export async function resolveRecipients(
  deps: Deps,
  tenant: Tenant,
  recipients: readonly (string | CreateSubscriberInput)[],
): Promise<{ refs: string[]; notes: Map<string, RecipientNote>; subscribers: Map<string, Subscriber> }> {
  const refs: string[] = [];
  const notes = new Map<string, RecipientNote>();
  const subscribers = new Map<string, Subscriber>();
  for (const recipient of recipients) {
    const input = typeof recipient === "string" ? { subscriberId: recipient } : recipient;
    const { subscriber, created } = await upsertRecipient(deps, tenant, input);
    refs.push(subscriber.id);
    subscribers.set(subscriber.id, subscriber);
    if (created) notes.set(subscriber.id, createdSubscriberNote(subscriber));
  }
  return { refs, notes, subscribers };
}

function objectOr(value: unknown, identifierKey: string): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  if (typeof value === "string") return { [identifierKey]: value };
  return value as Record<string, unknown>;
}

/**
 * How many subscribers a trigger reaches, counted no further than `limit`: its direct recipients
 * (each subscriberId once), its topics' members (a subscriber in two topics counts twice), or for a
 * broadcast the environment's subscribers. Each count reads an index up to the limit, no further.
 */
async function countRecipients(
  deps: Deps,
  tenant: Tenant,
  recipients: readonly Recipient[],
  topics: readonly Topic[],
  broadcast: boolean,
  limit: number,
): Promise<number> {
  if (broadcast) return countSubscribers(deps, tenant, limit);
  const direct = new Set<string>();
  for (const recipient of recipients) {
    if (isTopic(recipient)) continue;
    direct.add(typeof recipient === "string" ? recipient : recipient.subscriberId);
  }
  let total = direct.size;
  for (const topic of topics) {
    if (total >= limit) break;
    total += await countTopicSubscribers(deps, topic, limit - total);
  }
  return total;
}

async function workflowOf(deps: Deps, who: Tenant | KeyClaim, name: string) {
  try {
    return await getRunnableWorkflow(deps, who, name);
  } catch (error) {
    if ((error as { statusCode?: number }).statusCode !== 404) throw error;
    throw unprocessable(
      `workflow_not_found: no workflow of this environment has the trigger identifier ${mention(name, "given in name")}`,
      "name",
    );
  }
}

/**
 * Accepts a trigger (docs/engine.md, "Triggering and the acknowledgement"). The acknowledgement is the commit: the trigger record, the
 * notifications and their first jobs (or, for topics, a broadcast and long recipient lists, one
 * fan-out job) are written in one transaction, and only then is the answer sent. A transactionId
 * the environment has seen before returns the first acknowledgement and runs nothing again.
 *
 * `who` is a key's claim on the key-guarded trigger route: the workflow's lookup is then the
 * statement that proves the key live, and the tenant it confirms is the one everything after uses.
 */
export async function acceptTrigger(
  deps: EngineDeps,
  who: Tenant | KeyClaim,
  request: TriggerRequest,
  options: AcceptOptions = {},
): Promise<Accepted> {
  return accept(deps, who, request, options);
}

/**
 * Whether a trigger may be acknowledged together with others (trigger-batch.ts): one to a few
 * subscribers, none with channel credentials, with no actor or tenant to upsert; an event of a bulk
 * call (`reserved`: its quotas were spent for the call) when it is no larger than one trigger may be.
 */
function joinsTogether(
  request: TriggerRequest,
  options: AcceptOptions & { reserved?: TriggerLoad; quotas: EngineDeps["quotas"] },
  recipients: readonly Recipient[],
): boolean {
  return (
    (options.reserved === undefined || fitsOneTrigger(options.quotas, options.reserved)) &&
    options.broadcast !== true &&
    request.actor === undefined &&
    typeof request.tenant !== "object" &&
    recipients.length <= RECIPIENTS_MAX &&
    recipients.every(
      (r) =>
        typeof r === "string" ||
        (!isTopic(r) && ((r as { channels?: unknown[] }).channels ?? []).length === 0),
    )
  );
}

/**
 * acceptTrigger. `reserved`: the trigger is one event of a bulk call whose quotas were spent for
 * all its events at once (acceptBulk): this is its load as counted then, held to the one trigger's
 * quota alone.
 */
async function accept(
  deps: EngineDeps,
  who: Tenant | KeyClaim,
  request: TriggerRequest,
  options: AcceptOptions & { reserved?: TriggerLoad } = {},
): Promise<Accepted> {
  const named = await workflowOf(deps, who, request.name);
  const { tenant } = named;
  // Workflow overrides: for a trigger that names a tenant, the workflow as overridden for it.
  const workflow = await workflowForTenant(
    deps,
    tenant,
    named.workflow,
    typeof request.tenant === "string" ? request.tenant : request.tenant?.identifier,
  );
  const transactionId = request.transactionId ?? newTransactionId(deps.clock.now());
  // A tenant named by its identifier must exist: else nothing runs, as in Novu (an object is
  // created or updated in the transaction below).
  let tenantRecord: Record<string, unknown> = {};
  if (typeof request.tenant === "string") {
    const found = await tenantOfTrigger(deps, tenant, request.tenant);
    if (!found)
      return { ack: { acknowledged: true, status: "no_tenant_found", transactionId }, repeat: false };
    tenantRecord = tenantForTemplates(found);
  }
  const status = statusOf(workflow);
  // A workflow without (active) steps has nothing to show; an inactive one is recorded, unrun, so
  // that the activity shows the trigger and why nothing was sent.
  if (status !== "processed" && status !== "trigger_not_active")
    return { ack: { acknowledged: true, status, transactionId }, repeat: false };
  const retryCheck =
    options.idempotencyHash === undefined ? {} : { idempotencyHash: options.idempotencyHash };

  // The variables the steps declare: a required one the payload lacks refuses the trigger, and
  // defaults fill what it leaves out (an inactive workflow runs nothing and is not held to them).
  let payload = request.payload ?? {};
  if (status === "processed") {
    requirePayloadSchema(workflow.payloadSchema, payload);
    const variables = declaredVariables(workflow.steps);
    requireVariables(variables, payload);
    payload = withDefaults(variables, payload);
  }

  // At least one: the trigger's schema says so (src/events/schemas.ts).
  const recipients = options.broadcast ? [] : [request.to ?? []].flat();
  // The notifications keep `to` as sent, each channel's credentials masked; the actor is resolved
  // to its subscriber in the transaction.
  const plan: RunPlan = {
    workflow: snapshotOf(workflow),
    steps: workflow.steps,
    payload,
    overrides: request.overrides ?? {},
    actor: withMaskedChannels(objectOr(request.actor, "subscriberId")),
    tenant: tenantRecord,
    to: options.broadcast ? { broadcast: true } : withMaskedChannels(request.to ?? []),
    ...(status === "trigger_not_active" ? { inactive: true } : {}),
  };
  const fanOut =
    options.broadcast || recipients.length > INLINE_RECIPIENTS || recipients.some((r) => isTopic(r));
  const triggerId = newObjectId();
  /** The trigger's record, but for what its request keeps. */
  const record = {
    id: triggerId,
    organizationId: tenant.organizationId,
    environmentId: tenant.environmentId,
    transactionId,
    workflowId: workflow.id,
    status,
  };
  // The in-app messages the transaction delivers (at-acknowledgement.ts), told once it has committed.
  const delivered: DeliveredAtOnce["delivered"] = [];

  /** Tells the inbox of the messages written (and the worker of new tasks, `wake`). */
  const tell = (told: DeliveredAtOnce["delivered"], wake: boolean) => {
    if (wake) deps.queue.wake();
    for (const { message, subscriber } of told)
      deps.onMessage?.({
        environmentId: message.environmentId,
        subscriberRef: message.subscriberRef,
        messageId: message.id,
        written: { message, subscriber },
      });
  };
  // A trigger to a few subscribers may be written with others that arrive at the same time
  // (trigger-batch.ts); if the batch does not take it, its own transaction below runs.
  const together =
    !fanOut &&
    status === "processed" &&
    joinsTogether(request, { ...options, quotas: deps.quotas }, recipients);
  if (together) {
    const direct = (recipients as (string | CreateSubscriberInput)[]).map((r) =>
      typeof r === "string" ? { subscriberId: r } : r,
    );
    // An event of a bulk call was counted with the call (acceptBulk): nothing to count here.
    const worth = options.reserved ? undefined : recipientsWorthCounting(deps.quotas, plan.steps.length);
    // As countRecipients counts direct recipients: each subscriberId once.
    const count = new Set(direct.map((r) => r.subscriberId)).size;
    const load = worth === undefined ? undefined : { recipients: count, jobs: count * plan.steps.length };
    if (!load || fitsOneTrigger(deps.quotas, load)) {
      const outcome = await acknowledgeTogether(deps, {
        tenant,
        trigger: { ...record, request: retryCheck },
        plan,
        recipients: direct,
        load,
      });
      if (outcome.written) {
        // The batch woke the worker if it queued tasks.
        tell(outcome.delivered, false);
        return { ack: { acknowledged: true, status, transactionId }, repeat: false };
      }
    }
  }

  const ack = await deps.db
    .transaction()
    .execute(async (trx) => {
      const trxDeps = engineOnConnection(deps, trx);
      delivered.length = 0;
      // A topic that does not exist is the caller's mistake, told now rather than lost in a job.
      const topics: Topic[] = [];
      for (const recipient of recipients) {
        if (!isTopic(recipient)) continue;
        const topic = await findTopic(trxDeps, tenant, recipient.topicKey);
        if (!topic)
          throw unprocessable(
            `Topic ${mention(recipient.topicKey, "with this key")} does not exist in this environment`,
            "to",
          );
        topics.push(topic);
      }
      // The quotas, before anything is written (the minute's count comes last, below).
      const jobsPerRecipient = plan.inactive ? 0 : plan.steps.length;
      const worth = recipientsWorthCounting(deps.quotas, jobsPerRecipient);
      let load: TriggerLoad | undefined;
      if (options.reserved) checkTriggerSize(deps.quotas, options.reserved);
      else if (worth !== undefined) {
        const count = await countRecipients(
          trxDeps,
          tenant,
          recipients,
          topics,
          options.broadcast === true,
          worth,
        );
        load = { recipients: count, jobs: count * jobsPerRecipient };
        checkTriggerSize(deps.quotas, load);
      }
      if (typeof request.tenant === "object") {
        const upserted = await tenantOfTrigger(trxDeps, tenant, request.tenant);
        if (upserted) plan.tenant = tenantForTemplates(upserted);
      }
      // The actor is a subscriber, created or updated as sent (Novu's rule), whom templates read.
      if (request.actor !== undefined) {
        const input = typeof request.actor === "string" ? { subscriberId: request.actor } : request.actor;
        const { subscriber } = await upsertRecipient(trxDeps, tenant, input);
        plan.actor = subscriberForTemplates(subscriber);
        plan.actorRef = subscriber.id;
      }
      // The minute's count of recipients goes out with the runs' writes, last (quotas.ts).
      const counted = options.reserved ? undefined : load;
      const spend = counted
        ? (db: Kysely<Database>) =>
            spendRecipients(engineOnConnection(deps, db), tenant, deps.quotas, counted.recipients)
        : undefined;
      // The trigger, its subscribers and the environment's open jobs at once (one round trip on
      // PostgreSQL): a trigger the environment has seen, or one past the jobs' quota, rolls all of
      // it back below, so a repeat or a refusal writes nothing.
      const [trigger, resolved] = await pipelined(trx, [
        (db) =>
          engine.insertTrigger(db, {
            ...record,
            // What a fan-out job reads to create the runs later; a trigger whose runs are created
            // here has them (its notifications hold the plan) and keeps nothing twice.
            request: fanOut
              ? {
                  plan,
                  recipients: sealRecipients(deps, triggerId, recipients),
                  broadcast: options.broadcast === true,
                  ...retryCheck,
                }
              : retryCheck,
            createdAt: isoNow(deps.clock),
          }),
        async (db) =>
          fanOut
            ? undefined
            : resolveRecipients(
                engineOnConnection(deps, db),
                tenant,
                recipients as (string | CreateSubscriberInput)[],
              ),
        async (db) => {
          if (load) await checkTriggerJobs(engineOnConnection(deps, db), tenant, deps.quotas, load);
        },
      ]);
      if (!trigger) throw new RepeatedTrigger();
      if (!resolved) {
        // The jobs the fan-out will write count as open from now (quotas.ts, reserveFanOutJobs).
        const reserve = (options.reserved ?? load)?.jobs ?? 0;
        if (reserve > 0) {
          await reserveFanOutJobs(trxDeps, tenant.environmentId, reserve);
          await engine.advanceFanout(trx, trigger.id, fanOutStart(reserve), false);
        }
        await deps.queue.add(trx, [
          { task: TASKS.fanOut, payload: { triggerId: trigger.id }, key: `fan-out:${trigger.id}` },
        ]);
        await spend?.(trx);
      } else {
        await createRuns(trxDeps, trigger, plan, resolved.refs, {
          newTrigger: true,
          notes: resolved.notes,
          atOnce: { subscribers: resolved.subscribers, delivered },
          ...(spend ? { alongside: spend } : {}),
        });
      }
      return { acknowledged: true as const, status, transactionId, repeat: false };
    })
    .catch(async (error: unknown) => {
      // A retry of an accepted trigger gets its first acknowledgement, whatever the quotas say now.
      if (error instanceof QuotaExceeded && request.transactionId !== undefined) {
        const first = await engine.findTriggerByTransaction(deps.db, tenant.environmentId, transactionId);
        if (first) return repeatOf(first);
      }
      if (!(error instanceof RepeatedTrigger)) throw error;
      // Rolled back; the first acknowledgement is committed (the insert found it).
      const first = await engine.findTriggerByTransaction(deps.db, tenant.environmentId, transactionId);
      return first ? repeatOf(first) : { acknowledged: true as const, status, transactionId, repeat: true };
    });
  if (!ack.repeat) tell(delivered, true);
  return {
    ack: { acknowledged: true, status: ack.status, transactionId: ack.transactionId },
    repeat: ack.repeat,
  };

  /** The first acknowledgement of this transactionId; a 422 when an Idempotency-Key's request differs. */
  function repeatOf(first: engine.TriggerRecord) {
    const stored = first.request.idempotencyHash;
    if (
      options.idempotencyHash !== undefined &&
      typeof stored === "string" &&
      stored !== options.idempotencyHash
    )
      throw keyReused();
    return { acknowledged: true as const, status: first.status, transactionId, repeat: true };
  }
}

/**
 * The notifications of one trigger for these subscribers, each with one job per step, and a task
 * for each first job: in the caller's transaction. Subscribers the trigger already notified are
 * left alone (a fan-out batch run twice notifies nobody twice). A trigger created in this
 * transaction (`newTrigger`) has notified nobody yet: its notifications, jobs and tasks are then
 * written at once (one round trip on PostgreSQL), not each after the previous one's answer; for an
 * earlier trigger (a fan-out batch) the notifications go first, and what belongs to those created
 * goes out together after them. With `atOnce`, the runs' leading in-app steps are delivered here
 * (at-acknowledgement.ts) and only the first other step of each run gets a task.
 */
export async function createRuns(
  deps: EngineDeps,
  trigger: Pick<
    engine.TriggerRecord,
    "id" | "organizationId" | "environmentId" | "transactionId" | "workflowId"
  >,
  plan: RunPlan,
  subscriberRefs: readonly string[],
  options: {
    newTrigger?: boolean;
    notes?: RecipientNotes;
    topicId?: string;
    /**
     * The runs' leading in-app steps are delivered in this transaction (at-acknowledgement.ts), for
     * these subscribers (by _id, held by this transaction); what was delivered goes to `delivered`.
     */
    atOnce?: { subscribers: ReadonlyMap<string, Subscriber>; delivered: DeliveredAtOnce["delivered"] };
    /** With a new trigger: more work of the transaction, sent with the runs' writes, after them. */
    alongside?: (db: Kysely<Database>) => Promise<unknown>;
  } = {},
): Promise<number> {
  const now = isoNow(deps.clock);
  const notifications = notificationsOf(trigger, plan, subscriberRefs, now, options.topicId ?? "");
  const runsOf = (created: readonly Notification[]) => jobsOf(created, plan, options.notes, now);
  /**
   * What the runs write besides their notifications: with `atOnce`, their leading in-app steps
   * delivered (at-acknowledgement.ts), and then each run's first job not run here is the one its
   * task runs.
   */
  const writesOf = async (created: readonly Notification[]) => {
    const runs = runsOf(created);
    if (!options.atOnce || plan.inactive) return { ...runs, messages: [] as Message[] };
    const done = await newRunsDelivered(deps, created, runs, options.atOnce.subscribers, now);
    options.atOnce.delivered.push(...done.delivered);
    return { ...done, jobs: runs.jobs };
  };
  if (options.newTrigger) {
    const { jobs, tasks, details, messages } = await writesOf(notifications);
    const [created] = await pipelined(deps.db, [
      (db) => engine.insertNotifications(db, notifications),
      (db) => engine.insertJobs(db, jobs),
      (db) => deps.queue.add(db, tasks),
      (db) => engine.insertDetails(db, details),
      (db) => insertNewMessages(db, messages),
      async (db) => options.alongside?.(db),
    ]);
    // Nothing can have been there before a trigger of this transaction; were it otherwise, its
    // jobs would belong to no notification: roll it all back rather than commit that.
    if (created.length !== notifications.length)
      throw new Error(
        `a new trigger found ${notifications.length - created.length} of its notifications written`,
      );
    return created.length;
  }
  const created = await engine.insertNotifications(deps.db, notifications);
  const { jobs, tasks, details, messages } = await writesOf(created);
  // Side by side (one round trip on PostgreSQL); the jobs before what refers to them.
  await pipelined(deps.db, [
    (db) => engine.insertJobs(db, jobs),
    (db) => deps.queue.add(db, tasks),
    (db) => engine.insertDetails(db, details),
    (db) => insertNewMessages(db, messages),
  ]);
  return created.length;
}

/** What became of one event of a bulk call: its acknowledgement, or why it was refused. */
export type BulkOutcome = { accepted: Accepted } | { refused: ApiError };

const NO_LOAD: TriggerLoad = { recipients: 0, jobs: 0 };

/**
 * What a trigger would add to its environment's quotas, counted as acceptTrigger counts it (outside
 * its transaction): nothing for a trigger that will be refused or run nothing (no such workflow, a
 * topic that does not exist, no active steps), for a repeat of an accepted transactionId or of one
 * earlier in the same call (`seen`), or when no quota applies. `workflows` caches the lookups of one call.
 */
async function loadOf(
  deps: EngineDeps,
  tenant: Tenant,
  request: TriggerRequest,
  call: { workflows: Map<string, Promise<RunnableWorkflow | undefined>>; seen: Set<string> },
): Promise<TriggerLoad> {
  let lookup = call.workflows.get(request.name);
  if (!lookup) {
    lookup = getRunnableWorkflow(deps, tenant, request.name).then(
      (found) => found.workflow,
      (error: unknown) => {
        if (error instanceof ApiError && error.statusCode < 500) return undefined;
        throw error;
      },
    );
    call.workflows.set(request.name, lookup);
  }
  const workflow = await lookup;
  if (!workflow) return NO_LOAD;
  const status = statusOf(workflow);
  if (status !== "processed" && status !== "trigger_not_active") return NO_LOAD;
  const jobsPerRecipient = status === "trigger_not_active" ? 0 : workflow.steps.length;
  const worth = recipientsWorthCounting(deps.quotas, jobsPerRecipient);
  if (worth === undefined) return NO_LOAD;
  const { transactionId } = request;
  if (transactionId !== undefined) {
    if (call.seen.has(transactionId)) return NO_LOAD;
    call.seen.add(transactionId);
    if (await engine.findTriggerByTransaction(deps.db, tenant.environmentId, transactionId)) return NO_LOAD;
  }
  const recipients = [request.to ?? []].flat();
  const topics: Topic[] = [];
  for (const recipient of recipients) {
    if (!isTopic(recipient)) continue;
    const topic = await findTopic(deps, tenant, recipient.topicKey);
    if (!topic) return NO_LOAD;
    topics.push(topic);
  }
  const count = await countRecipients(deps, tenant, recipients, topics, false, worth);
  return { recipients: count, jobs: count * jobsPerRecipient };
}

/**
 * A bulk call's triggers (docs/engine.md, "Triggering and the acknowledgement"), each accepted or
 * refused on its own and whole, in order, but held to the quotas together: their recipients are
 * counted into the minute, and their jobs checked, for all of them at once before the first is
 * accepted, so that a call past a quota is refused whole (the QuotaExceeded is thrown: 429 with
 * Retry-After, or 422 when the call alone is more than the quota allows) and never half-accepted.
 * An event too large for one trigger is refused on its own (422), as are events refused for other
 * reasons.
 */
export async function acceptBulk(
  deps: EngineDeps,
  tenant: Tenant,
  requests: readonly TriggerRequest[],
  options: Pick<AcceptOptions, "idempotencyHash"> = {},
): Promise<BulkOutcome[]> {
  const { quotas } = deps;
  const call = {
    workflows: new Map<string, Promise<RunnableWorkflow | undefined>>(),
    seen: new Set<string>(),
  };
  const loads: TriggerLoad[] = [];
  for (const request of requests) loads.push(await loadOf(deps, tenant, request, call));
  // An event too large for one trigger is refused on its own below: it counts for nothing here.
  const total = loads
    .filter((load) => fitsOneTrigger(quotas, load))
    .reduce(
      (sum, load) => ({ recipients: sum.recipients + load.recipients, jobs: sum.jobs + load.jobs }),
      NO_LOAD,
    );
  await spendBulk(deps, tenant, quotas, total, requests.length);
  const outcomes: BulkOutcome[] = [];
  const outcomeOf = (error: unknown): BulkOutcome => {
    if (!(error instanceof ApiError) || error.statusCode >= 500) throw error;
    // The Idempotency-Key names another request: the request is refused whole, whatever it holds.
    if (error.errors?.some((e) => e.field === "idempotency-key")) throw error;
    return { refused: error };
  };
  // In order; a run of events that may be acknowledged together (trigger-batch.ts) is accepted
  // side by side, so that they join one batch, where each would otherwise take a transaction of
  // its own. What could make their order matter keeps them apart: a run never holds two events
  // naming the same subscriber or transactionId, and the events of a retried request (an
  // Idempotency-Key) go one by one, as does every event that cannot join.
  for (const run of runsTogether(requests, options.idempotencyHash !== undefined)) {
    const settled = await Promise.allSettled(
      run.map((i) =>
        accept(deps, tenant, requests[i] as TriggerRequest, { ...options, reserved: loads[i] ?? NO_LOAD }),
      ),
    );
    for (const result of settled)
      outcomes.push(result.status === "fulfilled" ? { accepted: result.value } : outcomeOf(result.reason));
  }
  return outcomes;
}

/**
 * The bulk call's events by index, in order, in runs: consecutive events that may join a batch go
 * in one run (at most a batch's BATCH_MAX) while none names a subscriber or a transactionId already named in
 * it; any other event is a run of its own. `oneByOne`: every event alone.
 */
export function runsTogether(requests: readonly TriggerRequest[], oneByOne: boolean): number[][] {
  const runs: number[][] = [];
  let run: number[] = [];
  let named = new Set<string>();
  const close = () => {
    if (run.length > 0) runs.push(run);
    run = [];
    named = new Set();
  };
  requests.forEach((request, i) => {
    const recipients = [request.to ?? []].flat();
    const names = [
      ...recipients.map((r) => `s:${typeof r === "string" ? r : isTopic(r) ? r.topicKey : r.subscriberId}`),
      ...(request.transactionId === undefined ? [] : [`t:${request.transactionId}`]),
    ];
    const joins = !oneByOne && joinsTogether(request, { quotas: undefined }, recipients);
    if (!joins || run.length >= BATCH_MAX || names.some((n) => named.has(n))) close();
    run.push(i);
    for (const n of names) named.add(n);
    if (!joins) close();
  });
  close();
  return runs;
}
