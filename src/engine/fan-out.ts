import type { CreateSubscriberInput } from "../subscribers/service.ts";
import { getSubscribersByRefs, pageSubscriberRefs } from "../subscribers/service.ts";
import type { Tenant } from "../tenancy/tenant.ts";
import { findTopic, membersHeldBack, pageTopicSubscribers } from "../topics/service.ts";
import {
  createRuns,
  type EngineDeps,
  engineOnConnection,
  type Recipient,
  type RecipientNotes,
  type RunPlan,
  resolveRecipients,
  type TopicRecipient,
} from "./accept.ts";
import type { DeliveredAtOnce } from "./at-acknowledgement.ts";
import type { MessageListener } from "./engine-deps.ts";
import { type FanOutCursor as Cursor, readFanOutCursor as readCursor } from "./fan-out-cursor.ts";
import { releaseFanOutJobs } from "./quotas.ts";
import { openRecipients } from "./recipient-secrets.ts";
import * as engine from "./repository.ts";

/** Subscribers per batch: each batch is one transaction, so memory stays flat however large the topic. */
export const FAN_OUT_BATCH = 500;

interface StoredRequest {
  plan: RunPlan;
  recipients: Recipient[];
  broadcast: boolean;
}

/**
 * The fan-out job of a trigger to topics, to a broadcast or to a long list of recipients: creates
 * the runs a batch at a time, each batch in one transaction with the cursor, so a crash resumes
 * after the last batch written and nobody is notified twice (one notification per trigger and
 * subscriber, by a unique index).
 */
export async function fanOut(
  deps: EngineDeps,
  triggerId: string,
  onMessage?: MessageListener,
): Promise<void> {
  const trigger = await engine.findTrigger(deps.db, triggerId);
  if (!trigger || trigger.fanoutDone) return;
  const request = trigger.request as unknown as StoredRequest;
  const tenant: Tenant = {
    organizationId: trigger.organizationId,
    environmentId: trigger.environmentId,
    actorId: "",
  };
  const direct = openRecipients(
    deps,
    trigger.id,
    request.recipients.filter((r): r is string | CreateSubscriberInput => !isTopic(r)),
  );
  const topics = request.recipients.filter(isTopic);
  let cursor = readCursor(trigger.fanoutCursor);

  // A run whose first step is an in-app one may have it delivered in its batch's transaction, as the
  // acknowledgement does for a trigger to a few (at-acknowledgement.ts): no task a subscriber.
  const first = request.plan.steps[0];
  const mayRunAtOnce = !request.plan.inactive && first?.template.type === "in_app";
  for (;;) {
    let delivered: DeliveredAtOnce["delivered"] = [];
    const done = await deps.db.transaction().execute(async (trx) => {
      delivered = [];
      const trxDeps = engineOnConnection(deps, trx);
      const batch = await nextBatch(trxDeps, tenant, request, direct, topics, cursor);
      // Read and held (PostgreSQL: FOR KEY SHARE) until the commit: a delete of one waits for its
      // message, and one deleted already gets none here (its job's task skips it).
      const subscribers =
        mayRunAtOnce && batch.refs.length > 0
          ? await getSubscribersByRefs(trxDeps, tenant, batch.refs, { hold: true })
          : undefined;
      await createRuns(trxDeps, trigger, request.plan, batch.refs, {
        ...(batch.notes ? { notes: batch.notes } : {}),
        ...(batch.topicId !== undefined ? { topicId: batch.topicId } : {}),
        ...(subscribers ? { atOnce: { subscribers, delivered } } : {}),
      });
      // The jobs just written are counted by the triggers on `jobs`: as many leave the reservation,
      // and the last batch releases what is left of it.
      const reserved = cursor.reserved ?? 0;
      const perRecipient = request.plan.inactive ? 0 : request.plan.steps.length;
      const release = batch.finished ? reserved : Math.min(reserved, batch.refs.length * perRecipient);
      await releaseFanOutJobs(trxDeps, trigger.environmentId, release);
      const next: Cursor = reserved > 0 ? { ...batch.next, reserved: reserved - release } : batch.next;
      await engine.advanceFanout(trx, trigger.id, JSON.stringify(next), batch.finished);
      cursor = next;
      return batch.finished;
    });
    deps.queue.wake();
    for (const { message, subscriber } of delivered)
      onMessage?.({
        environmentId: message.environmentId,
        subscriberRef: message.subscriberRef,
        messageId: message.id,
        written: { message, subscriber },
      });
    if (done) return;
  }
}

/**
 * A fan-out given up after its last attempt writes no more jobs: what is left of its reservation
 * leaves the environment's open jobs, so that the quota does not stay taken by jobs that never come.
 */
export async function fanOutGivenUp(deps: EngineDeps, triggerId: string): Promise<void> {
  await deps.db.transaction().execute(async (trx) => {
    const trigger = await engine.findTrigger(trx, triggerId);
    if (!trigger || trigger.fanoutDone) return;
    const cursor = readCursor(trigger.fanoutCursor);
    if (!cursor.reserved) return;
    await releaseFanOutJobs(engineOnConnection(deps, trx), trigger.environmentId, cursor.reserved);
    await engine.advanceFanout(trx, trigger.id, JSON.stringify({ ...cursor, reserved: 0 }), false);
  });
}

const isTopic = (recipient: Recipient): recipient is TopicRecipient =>
  typeof recipient === "object" && recipient !== null && (recipient as TopicRecipient).type === "Topic";

async function nextBatch(
  deps: EngineDeps,
  tenant: Tenant,
  request: StoredRequest,
  direct: (string | CreateSubscriberInput)[],
  topics: TopicRecipient[],
  cursor: Cursor,
): Promise<{ refs: string[]; notes?: RecipientNotes; next: Cursor; finished: boolean; topicId?: string }> {
  if (request.broadcast) {
    const page = await pageSubscriberRefs(deps, tenant, { after: cursor.after, limit: FAN_OUT_BATCH });
    return { refs: page.refs, next: { source: 0, after: page.next }, finished: page.next === "" };
  }
  // Source 0: the direct recipients, upserted (at most 100, so one batch); those created are noted.
  if (cursor.source === 0) {
    const { refs, notes } = await resolveRecipients(deps, tenant, direct);
    return { refs, notes, next: { source: 1, after: "" }, finished: topics.length === 0 };
  }
  const topic = topics[cursor.source - 1];
  if (!topic) return { refs: [], next: cursor, finished: true };
  const found = await findTopic(deps, tenant, topic.topicKey);
  // A topic deleted since the trigger was accepted has nobody left to notify.
  const page = found
    ? await pageTopicSubscribers(deps, tenant, found.id, { after: cursor.after, limit: FAN_OUT_BATCH })
    : { members: [], next: "" };
  const members = page.members.map((member) => member.subscriberRef);
  // A member whose subscription turned this workflow off (or whose condition the payload does not
  // meet) is not notified at all by this trigger.
  const held = found
    ? await membersHeldBack(deps, found.id, request.plan.workflow, members, request.plan.payload)
    : new Set<string>();
  // The actor is not told of its own act through a topic (named directly, it is: source 0).
  const actor = request.plan.actorRef;
  const refs = members.filter((ref) => !held.has(ref) && ref !== actor);
  const topicId = found?.id ?? "";
  if (page.next !== "")
    return { refs, next: { source: cursor.source, after: page.next }, finished: false, topicId };
  const last = cursor.source >= topics.length;
  return { refs, next: { source: cursor.source + 1, after: "" }, finished: last, topicId };
}
