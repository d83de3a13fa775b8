import { isoNow } from "../clock.ts";
import { type Deps, inTransaction } from "../deps.ts";
import { badRequest, conflict, type FieldError, invalidField, mention, notFound } from "../errors.ts";
import { newObjectId } from "../ids.ts";
import { displayName } from "../names.ts";
import type { Subscriber } from "../subscribers/domain.ts";
import {
  findSubscriberRefs,
  getSubscribersByRefs,
  type InboxWorkflowPreference,
  subscriberLabel,
  subscriberNotFound,
  writeInboxWorkflowPreferences,
} from "../subscribers/service.ts";
import type { Tenant } from "../tenancy/tenant.ts";
import type { Channel } from "../workflows/domain.ts";
import {
  findWorkflowSummaries,
  getWorkflowSummary,
  listActiveWorkflows,
  type WorkflowSummary,
} from "../workflows/service.ts";
import { conditionHolds, conditionProblem } from "./condition.ts";
import {
  defaultSubscriptionIdentifier,
  type SubscriptionPreference,
  type Topic,
  type TopicMember,
  type TopicSubscription,
} from "./domain.ts";
import * as topics from "./repository.ts";
import type { CreateTopicInput } from "./schemas.ts";

export const topicName = displayName;

export function topicNotFound(key: string) {
  return notFound(`Topic ${mention(key, "with this key")} was not found`);
}

async function requireTopic(deps: Deps, tenant: Tenant, key: string, lock?: "share" | "update") {
  const topic = await topics.findTopic(deps.db, tenant.environmentId, key, lock);
  if (!topic) throw topicNotFound(key);
  return topic;
}

export async function createTopic(deps: Deps, tenant: Tenant, input: CreateTopicInput): Promise<Topic> {
  const name = topicName(input.name);
  const created = await topics.insertTopic(
    deps.db,
    {
      id: newObjectId(deps.clock.now()),
      organizationId: tenant.organizationId,
      environmentId: tenant.environmentId,
      key: input.key,
      name,
      data: {},
    },
    isoNow(deps.clock),
  );
  if (!created) throw conflict(`A topic with the key ${input.key} already exists`);
  return created;
}

export interface TopicWithSubscribers {
  topic: Topic;
  subscribers: string[];
}

export async function listTopics(
  deps: Deps,
  tenant: Tenant,
  input: { page?: number | undefined; pageSize?: number | undefined; key?: string | undefined },
) {
  const page = input.page ?? 0;
  const pageSize = input.pageSize ?? 10;
  const { totalCount, topics: found } = await topics.listTopics(deps.db, tenant.environmentId, {
    offset: page * pageSize,
    limit: pageSize,
    key: input.key,
  });
  const members = await topics.memberIdsOf(
    deps.db,
    found.map((t) => t.id),
  );
  const data: TopicWithSubscribers[] = found.map((topic) => ({
    topic,
    subscribers: members.get(topic.id) ?? [],
  }));
  return { page, pageSize, totalCount, hasMore: (page + 1) * pageSize < totalCount, data };
}

export async function getTopic(deps: Deps, tenant: Tenant, key: string): Promise<TopicWithSubscribers> {
  const topic = await requireTopic(deps, tenant, key);
  const members = await topics.memberIdsOf(deps.db, [topic.id]);
  return { topic, subscribers: members.get(topic.id) ?? [] };
}

/** The topic, or undefined: for the engine, which resolves a trigger's `{type: "Topic", topicKey}`. */
/** How many subscribers the topic has, counting no further than `limit` (what a trigger's quota needs). */
export function countTopicSubscribers(deps: Deps, topic: Topic, limit: number): Promise<number> {
  return topics.countMembersUpTo(deps.db, topic.id, limit);
}

export async function findTopic(deps: Deps, tenant: Tenant, key: string): Promise<Topic | undefined> {
  return topics.findTopic(deps.db, tenant.environmentId, key);
}

export async function renameTopic(
  deps: Deps,
  tenant: Tenant,
  key: string,
  rawName: string,
): Promise<TopicWithSubscribers> {
  const name = topicName(rawName);
  const renamed = await topics.renameTopic(deps.db, tenant.environmentId, key, name, isoNow(deps.clock));
  if (!renamed) throw topicNotFound(key);
  const members = await topics.memberIdsOf(deps.db, [renamed.id]);
  return { topic: renamed, subscribers: members.get(renamed.id) ?? [] };
}

/** Deletes a topic that has no subscribers; 409 saying how many it has otherwise (as Novu). */
export async function deleteTopic(deps: Deps, tenant: Tenant, key: string): Promise<void> {
  await inTransaction(deps, async (d) => {
    const topic = await requireTopic(d, tenant, key, "update");
    const members = await topics.countMembers(d.db, topic.id);
    if (members > 0) {
      const who = members === 1 ? "1 subscriber" : `${members} subscribers`;
      throw conflict(
        `Topic ${key} cannot be deleted while it has ${who}; remove them first (POST /v1/topics/${key}/subscribers/removal)`,
      );
    }
    await topics.deleteTopic(d.db, topic.id);
  });
}

const distinct = (values: readonly string[]) => [...new Set(values)];

/**
 * Inside the caller's transaction: the topic with this key, its row shared (PostgreSQL) until the
 * transaction ends, created with `name` when the environment has none yet.
 */
async function findOrCreateTopic(deps: Deps, tenant: Tenant, key: string, name: string): Promise<Topic> {
  const found = await topics.findTopic(deps.db, tenant.environmentId, key, "share");
  if (found) return found;
  await topics.insertTopic(
    deps.db,
    {
      id: newObjectId(deps.clock.now()),
      organizationId: tenant.organizationId,
      environmentId: tenant.environmentId,
      key,
      name,
      data: {},
    },
    isoNow(deps.clock),
  );
  return requireTopic(deps, tenant, key, "share");
}

/**
 * Adds the subscribers that exist to the topic (one already in it stays once) and names those that
 * do not. A topic that does not exist yet is created, named `Autogenerated-<key>`, as Novu does.
 */
export async function addSubscribers(
  deps: Deps,
  tenant: Tenant,
  key: string,
  subscriberIds: readonly string[],
): Promise<{ succeeded: string[]; failed: { notFound: string[] } }> {
  const ids = distinct(subscriberIds);
  return inTransaction(deps, async (d) => {
    const now = isoNow(d.clock);
    const topic = await findOrCreateTopic(d, tenant, key, `Autogenerated-${key}`);
    const refs = await findSubscriberRefs(d, tenant, ids, { forShare: true });
    const members: (TopicMember & { id: string })[] = [];
    const missing: string[] = [];
    for (const id of ids) {
      const ref = refs.get(id);
      if (ref) members.push({ subscriberRef: ref, subscriberId: id, id: newObjectId(d.clock.now()) });
      else missing.push(id);
    }
    // In key order, so concurrent additions to one topic take their row locks in one order.
    members.sort((a, b) =>
      a.subscriberRef < b.subscriberRef ? -1 : a.subscriberRef > b.subscriberRef ? 1 : 0,
    );
    await topics.addMembers(d.db, topic, members, now);
    return {
      succeeded: ids.filter((id) => refs.has(id)),
      failed: { notFound: missing },
    };
  });
}

/** Removes the subscribers from the topic; ones that are not in it (or do not exist) are ignored. */
export async function removeSubscribers(
  deps: Deps,
  tenant: Tenant,
  key: string,
  subscriberIds: readonly string[],
): Promise<void> {
  await inTransaction(deps, async (d) => {
    const topic = await requireTopic(d, tenant, key, "share");
    const refs = await findSubscriberRefs(d, tenant, distinct(subscriberIds));
    await topics.removeMembers(d.db, topic.id, [...refs.values()]);
  });
}

/** The membership of one subscriber in the topic; 404 when the topic, the subscriber or the membership is missing. */
export async function getTopicSubscriber(deps: Deps, tenant: Tenant, key: string, subscriberId: string) {
  const topic = await requireTopic(deps, tenant, key);
  const ref = (await findSubscriberRefs(deps, tenant, [subscriberId])).get(subscriberId);
  if (!ref) throw subscriberNotFound(subscriberId);
  if (!(await topics.isMember(deps.db, topic.id, ref))) {
    throw notFound(`${subscriberLabel(subscriberId)} is not a subscriber of topic ${key}`);
  }
  return {
    _organizationId: topic.organizationId,
    _environmentId: topic.environmentId,
    _subscriberId: ref,
    _topicId: topic.id,
    topicKey: topic.key,
    externalSubscriberId: subscriberId,
  };
}

export const FAN_OUT_PAGE_SIZE = 500;

/**
 * One page of a topic's subscribers for a fan-out: up to `limit` members after the cursor `after`
 * ("" for the first page), and the cursor of the next page ("" when this was the last). Keyset
 * pagination on the membership's primary key: every page costs the same, and memory stays flat,
 * however many subscribers the topic has.
 */
export async function pageTopicSubscribers(
  deps: Deps,
  tenant: Tenant,
  topicId: string,
  page: { after?: string; limit?: number } = {},
): Promise<{ members: TopicMember[]; next: string }> {
  const limit = page.limit ?? FAN_OUT_PAGE_SIZE;
  // Another environment's topic has no members, as far as this tenant can tell.
  if (!(await topics.topicExists(deps.db, tenant.environmentId, topicId))) return { members: [], next: "" };
  const members = await topics.pageMembers(deps.db, topicId, page.after ?? "", limit);
  const last = members.at(-1);
  return { members, next: members.length === limit && last ? last.subscriberRef : "" };
}

// ---------------------------------------------------------------- subscriptions from the inbox

/** The subscriber a session speaks for: only its own subscriptions are seen or changed. */
export interface SubscriberSelf {
  /** Our id for the subscriber (its `_id`). */
  subscriberRef: string;
  subscriberId: string;
}

/** A subscription with the preferences shown beside it, each with its workflow. */
export interface SubscriptionView {
  subscription: TopicSubscription;
  preferences: { workflow: WorkflowSummary; preference: SubscriptionPreference }[];
}

/**
 * Which workflows a subscription's preferences name (Novu's inbox sends them so): a workflow's _id
 * or trigger identifier, the same with `enabled` and/or a `condition`, or a group of workflows by
 * ids and tags with the `enabled`/`condition` they all get.
 */
export type PreferenceFilterInput =
  | string
  | { workflowId: string; enabled?: boolean | undefined; condition?: unknown }
  | {
      filter: { workflowIds?: string[] | undefined; tags?: string[] | undefined };
      enabled?: boolean | undefined;
      condition?: unknown;
    };

/** Whether a trigger of the workflow to the topic reaches the subscriber, by its subscription's preference. */
export function subscriptionLetsThrough(
  preference: SubscriptionPreference | undefined,
  payload: Record<string, unknown>,
): boolean {
  if (!preference) return true;
  // As Novu: a condition, when there is one, decides alone.
  if (preference.condition !== undefined) return conditionHolds(preference.condition, payload);
  return preference.enabled;
}

function throwIfAny(errors: readonly FieldError[]): void {
  const first = errors[0];
  if (!first) return;
  const more = errors.length > 1 ? ` (and ${errors.length - 1} more: see errors)` : "";
  throw badRequest(`${first.field} ${first.message}${more}`, [...errors]);
}

const IDENTIFIER_PROBLEM = /[\p{Cc}/]/u;

function identifierProblem(topicKey: string, self: SubscriberSelf, identifier: string): string | undefined {
  if (identifier.length === 0 || identifier.length > 255) return "must be 1–255 characters";
  if (IDENTIFIER_PROBLEM.test(identifier)) return "must not contain control characters or /";
  // Another subscriber's default identifier would keep that subscriber out of the topic.
  const prefix = defaultSubscriptionIdentifier(topicKey, "");
  if (
    identifier.startsWith(prefix) &&
    identifier !== defaultSubscriptionIdentifier(topicKey, self.subscriberId)
  )
    return `must not take the form ${prefix}<subscriberId> of another subscriber's subscription`;
  return undefined;
}

function subscriptionNotFound(identifier: string) {
  return notFound(`Subscription ${mention(identifier, "with this identifier")} was not found`);
}

async function preferencesOf(
  deps: Deps,
  tenant: Tenant,
  subscription: TopicSubscription,
  only?: { workflowIds?: readonly string[] | undefined; tags?: readonly string[] | undefined },
): Promise<SubscriptionView> {
  const stored = await topics.findSubscriptionPreferences(
    deps.db,
    subscription.topic.id,
    subscription.subscriberRef,
  );
  const wanted = (only?.workflowIds?.length ?? 0) > 0 || (only?.tags?.length ?? 0) > 0;
  let workflows: WorkflowSummary[];
  if (wanted) {
    // The workflows asked for, each with its preference here or the default (on).
    const named = await findWorkflowSummaries(deps, tenant, only?.workflowIds ?? []);
    const tagged = (only?.tags?.length ?? 0) > 0 ? await listActiveWorkflows(deps, tenant) : [];
    const byId = new Map(named.found.map((w) => [w.id, w]));
    for (const workflow of tagged)
      if (workflow.tags.some((tag) => only?.tags?.includes(tag))) byId.set(workflow.id, workflow);
    workflows = [...byId.values()];
  } else {
    workflows = (await findWorkflowSummaries(deps, tenant, [...stored.keys()])).found;
  }
  return {
    subscription,
    preferences: workflows.map((workflow) => ({
      workflow,
      preference: stored.get(workflow.id) ?? { workflowId: workflow.id, enabled: true, channels: {} },
    })),
  };
}

/** The subscriber's subscriptions to the topic (none or one); none when there is no such topic. */
export async function listOwnSubscriptions(
  deps: Deps,
  tenant: Tenant,
  self: SubscriberSelf,
  topicKey: string,
): Promise<SubscriptionView[]> {
  const topic = await topics.findTopic(deps.db, tenant.environmentId, topicKey);
  if (!topic) return [];
  const subscription = await topics.findSubscription(deps.db, topic, self.subscriberRef);
  return subscription ? [await preferencesOf(deps, tenant, subscription)] : [];
}

/**
 * The subscriber's subscription to the topic with this identifier (or id), with the preferences
 * stored for it, or for the workflows and tags asked for; undefined when it has none such (another
 * subscriber's is none of its business).
 */
export async function getOwnSubscription(
  deps: Deps,
  tenant: Tenant,
  self: SubscriberSelf,
  topicKey: string,
  identifier: string,
  only: { workflowIds?: readonly string[] | undefined; tags?: readonly string[] | undefined } = {},
): Promise<SubscriptionView | undefined> {
  const subscription = await ownSubscription(deps, tenant, self, topicKey, identifier);
  return subscription ? preferencesOf(deps, tenant, subscription, only) : undefined;
}

async function ownSubscription(
  deps: Deps,
  tenant: Tenant,
  self: SubscriberSelf,
  topicKey: string,
  identifier: string,
): Promise<TopicSubscription | undefined> {
  const topic = await topics.findTopic(deps.db, tenant.environmentId, topicKey);
  if (!topic) return undefined;
  const found = await topics.findSubscriptionByName(deps.db, topic, identifier);
  return found?.subscriberRef === self.subscriberRef ? found : undefined;
}

/**
 * The preferences a list of filters gives, one per workflow it names (the first filter naming a
 * workflow decides for it). Unknown workflows are a 404; a bad condition, or turning a critical
 * workflow off, a 400.
 */
async function resolvePreferenceFilters(
  deps: Deps,
  tenant: Tenant,
  filters: readonly PreferenceFilterInput[],
  field: string,
): Promise<{ workflow: WorkflowSummary; preference: SubscriptionPreference }[]> {
  const errors: FieldError[] = [];
  const refsOf = (filter: PreferenceFilterInput) =>
    typeof filter === "string"
      ? [filter]
      : "workflowId" in filter
        ? [filter.workflowId]
        : (filter.filter.workflowIds ?? []);
  const tagsOf = (filter: PreferenceFilterInput) =>
    typeof filter === "string" || "workflowId" in filter ? [] : (filter.filter.tags ?? []);
  filters.forEach((filter, i) => {
    if (typeof filter === "string" || filter.condition === undefined) return;
    const problem = conditionProblem(filter.condition);
    if (problem) errors.push({ field: `${field}[${i}].condition`, message: problem });
  });
  throwIfAny(errors);
  const named = await findWorkflowSummaries(deps, tenant, filters.flatMap(refsOf));
  if (named.missing.length > 0) throw workflowsNotFound(named.missing);
  const anyTags = filters.some((filter) => tagsOf(filter).length > 0);
  const active = anyTags ? await listActiveWorkflows(deps, tenant) : [];
  const out = new Map<string, { workflow: WorkflowSummary; preference: SubscriptionPreference }>();
  filters.forEach((filter) => {
    const chosen = [
      ...refsOf(filter).map((ref) => named.byRef.get(ref) as WorkflowSummary),
      ...active.filter((workflow) => tagsOf(filter).some((tag) => workflow.tags.includes(tag))),
    ];
    for (const workflow of chosen) {
      if (out.has(workflow.id)) continue;
      const given: { enabled?: boolean | undefined; condition?: unknown } =
        typeof filter === "string" ? {} : filter;
      const preference: SubscriptionPreference = {
        workflowId: workflow.id,
        enabled: given.enabled ?? true,
        channels: {},
      };
      if (given.condition !== undefined && given.condition !== null) preference.condition = given.condition;
      out.set(workflow.id, { workflow, preference });
    }
  });
  const critical = [...out.values()].find(
    ({ workflow, preference }) => workflow.critical && !preference.enabled,
  );
  if (critical) throw criticalRefusal(critical.workflow);
  return [...out.values()];
}

function workflowsNotFound(refs: readonly string[]) {
  const named = refs.map((ref) => mention(ref, "(an id that is not plain text)")).join(", ");
  return notFound(
    refs.length === 1 ? `Workflow ${named} was not found` : `Workflows ${named} were not found`,
  );
}

function criticalRefusal(workflow: WorkflowSummary) {
  return badRequest(
    `Workflow "${workflow.name}" is critical: its notifications are always delivered and cannot be turned off`,
  );
}

export interface SubscribeInput {
  identifier?: string | undefined;
  name?: string | undefined;
  /** The name a topic created by this subscription gets (an existing topic keeps its own). */
  topicName?: string | undefined;
  preferences?: readonly PreferenceFilterInput[] | undefined;
}

/**
 * Subscribes the session's subscriber to the topic (created when the environment has none with
 * this key), under the identifier given or Novu's default, with the preferences given. Subscribing
 * again under the same identifier answers the subscription as it is; under another one is a 409, as
 * is an identifier another subscriber holds in the topic.
 */
export async function subscribe(
  deps: Deps,
  tenant: Tenant,
  self: SubscriberSelf,
  topicKey: string,
  input: SubscribeInput,
): Promise<{ view: SubscriptionView; created: boolean }> {
  const identifier = input.identifier || defaultSubscriptionIdentifier(topicKey, self.subscriberId);
  const problem = identifierProblem(topicKey, self, identifier);
  if (problem) throw invalidField("identifier", problem);
  const newTopicName =
    input.topicName === undefined ? `Autogenerated-${topicKey}` : topicName(input.topicName);
  const name = input.name === undefined ? "" : displayName(input.name);
  const resolved = input.preferences
    ? await resolvePreferenceFilters(deps, tenant, input.preferences, "preferences")
    : [];
  const outcome = await inTransaction(deps, async (d) => {
    const topic = await findOrCreateTopic(d, tenant, topicKey, newTopicName);
    const existing = await topics.findSubscription(d.db, topic, self.subscriberRef);
    if (existing) {
      if (existing.identifier !== identifier)
        throw conflict(
          `The subscriber is subscribed to topic ${topicKey} already, as ${mention(existing.identifier, "another identifier")}`,
        );
      return { subscription: existing, created: false };
    }
    // Held while the subscription refers to it: a concurrent delete of the subscriber waits.
    if (
      !(await findSubscriberRefs(d, tenant, [self.subscriberId], { forShare: true })).has(self.subscriberId)
    )
      throw subscriberNotFound(self.subscriberId);
    const now = isoNow(d.clock);
    const inserted = await topics.insertSubscription(
      d.db,
      topic,
      { id: newObjectId(d.clock.now()), identifier, name, ...self },
      now,
    );
    if (!inserted) throw conflict(`Topic ${topicKey} has a subscription with this identifier already`);
    for (const { preference } of resolved)
      await topics.saveSubscriptionPreference(d.db, inserted, preference, now);
    return { subscription: inserted, created: true };
  });
  return { view: await preferencesOf(deps, tenant, outcome.subscription), created: outcome.created };
}

/** Renames the subscriber's own subscription and/or replaces its preferences; 404 when it has none such. */
export async function updateOwnSubscription(
  deps: Deps,
  tenant: Tenant,
  self: SubscriberSelf,
  topicKey: string,
  identifier: string,
  input: { name?: string | undefined; preferences?: readonly PreferenceFilterInput[] | undefined },
): Promise<SubscriptionView> {
  const name = input.name === undefined ? undefined : displayName(input.name);
  const resolved = input.preferences
    ? await resolvePreferenceFilters(deps, tenant, input.preferences, "preferences")
    : undefined;
  const subscription = await inTransaction(deps, async (d) => {
    const found = await ownSubscription(d, tenant, self, topicKey, identifier);
    if (!found) throw subscriptionNotFound(identifier);
    const now = isoNow(d.clock);
    if (name !== undefined)
      await topics.renameSubscription(d.db, found.topic.id, found.subscriberRef, name, now);
    if (resolved) {
      await topics.clearSubscriptionPreferences(d.db, found);
      for (const { preference } of resolved)
        await topics.saveSubscriptionPreference(d.db, found, preference, now);
      await topics.touchSubscription(d.db, found, now);
    }
    if (name === undefined && !resolved) return found;
    return { ...found, ...(name === undefined ? {} : { name }), updatedAt: now };
  });
  return preferencesOf(deps, tenant, subscription);
}

/** Ends the subscriber's own subscription, with its preferences; 404 when it has none such. */
export async function unsubscribe(
  deps: Deps,
  tenant: Tenant,
  self: SubscriberSelf,
  topicKey: string,
  identifier: string,
): Promise<void> {
  await inTransaction(deps, async (d) => {
    const found = await ownSubscription(d, tenant, self, topicKey, identifier);
    if (!found) throw subscriptionNotFound(identifier);
    await topics.removeMembers(d.db, found.topic.id, [found.subscriberRef]);
  });
}

/** A change of one workflow's preference on a subscription. */
export interface SubscriptionPreferenceChange {
  enabled?: boolean | undefined;
  /** A JSON Logic rule; null removes the one set. */
  condition?: unknown;
  channels?: Partial<Record<Channel, boolean>> | undefined;
}

async function subscriptionNamed(deps: Deps, tenant: Tenant, self: SubscriberSelf, identifier: string) {
  const found = await topics.findSubscriberSubscriptions(
    deps.db,
    tenant.environmentId,
    self.subscriberRef,
    identifier,
  );
  if (found.length === 0) throw subscriptionNotFound(identifier);
  if (found.length > 1)
    throw conflict(
      `The identifier ${mention(identifier, "given")} names subscriptions in several topics; use the subscription's id`,
    );
  return found[0] as TopicSubscription;
}

/**
 * Changes the preferences of the subscriber's own subscriptions (named by identifier or id, in any
 * topic) for some workflows, all or none: `enabled` replaces a condition set before (Novu's inbox
 * sends one or the other), a condition is checked before it is stored, channels merge.
 */
export async function changeSubscriptionPreferences(
  deps: Deps,
  tenant: Tenant,
  self: SubscriberSelf,
  changes: readonly { identifier: string; workflow: WorkflowSummary; change: SubscriptionPreferenceChange }[],
  field = "",
): Promise<
  { subscription: TopicSubscription; workflow: WorkflowSummary; preference: SubscriptionPreference }[]
> {
  const errors: FieldError[] = [];
  changes.forEach(({ change }, i) => {
    if (change.condition === undefined || change.condition === null) return;
    const problem = conditionProblem(change.condition);
    if (problem)
      errors.push({ field: `${field}${changes.length > 1 ? `[${i}].` : ""}condition`, message: problem });
  });
  throwIfAny(errors);
  const critical = changes.find(
    ({ workflow, change }) =>
      workflow.critical &&
      (change.enabled === false || Object.values(change.channels ?? {}).some((value) => value === false)),
  );
  if (critical) throw criticalRefusal(critical.workflow);
  return inTransaction(deps, async (d) => {
    const now = isoNow(d.clock);
    const out: {
      subscription: TopicSubscription;
      workflow: WorkflowSummary;
      preference: SubscriptionPreference;
    }[] = [];
    for (const { identifier, workflow, change } of changes) {
      const subscription = await subscriptionNamed(d, tenant, self, identifier);
      const current = (
        await topics.findSubscriptionPreferences(d.db, subscription.topic.id, subscription.subscriberRef, [
          workflow.id,
        ])
      ).get(workflow.id);
      const next: SubscriptionPreference = {
        workflowId: workflow.id,
        enabled: change.enabled ?? current?.enabled ?? true,
        channels: { ...(current?.channels ?? {}) },
      };
      for (const [channel, value] of Object.entries(change.channels ?? {}))
        if (value !== undefined) next.channels[channel as Channel] = value;
      const condition =
        change.condition !== undefined
          ? change.condition
          : change.enabled !== undefined
            ? null
            : current?.condition;
      if (condition !== undefined && condition !== null) next.condition = condition;
      await topics.saveSubscriptionPreference(d.db, subscription, next, now);
      await topics.touchSubscription(d.db, subscription, now);
      out.push({ subscription: { ...subscription, updatedAt: now }, workflow, preference: next });
    }
    return out;
  });
}

/** changeSubscriptionPreferences for one workflow, by its _id or trigger identifier. */
export async function changeSubscriptionPreference(
  deps: Deps,
  tenant: Tenant,
  self: SubscriberSelf,
  identifier: string,
  workflowRef: string,
  change: SubscriptionPreferenceChange,
) {
  const workflow = await getWorkflowSummary(deps, tenant, workflowRef);
  const [changed] = await changeSubscriptionPreferences(deps, tenant, self, [
    { identifier, workflow, change },
  ]);
  if (!changed) throw new Error("a preference change returned nothing");
  return changed;
}

/** One item of the inbox's bulk preference change: the subscriber's own, or one of its subscriptions'. */
export interface BulkPreferenceItem {
  workflowId: string;
  subscriptionIdentifier?: string | undefined;
  enabled?: boolean | undefined;
  condition?: unknown;
  channels: Partial<Record<Channel, boolean>>;
}

export type BulkPreferenceResult =
  | { kind: "workflow"; preference: InboxWorkflowPreference }
  | {
      kind: "subscription";
      subscription: TopicSubscription;
      workflow: WorkflowSummary;
      preference: SubscriptionPreference;
    };

export const MAX_BULK_PREFERENCES = 100;

/**
 * The inbox's bulk change (`PATCH /v1/inbox/preferences/bulk`): the subscriber's workflow
 * preferences and its subscriptions' (an item with a `subscriptionIdentifier`), one transaction for
 * all. Every workflow must exist (404 naming those that do not); a critical one cannot be turned
 * off (400); a workflow named twice for the same target takes the last item.
 */
export async function bulkUpdateInboxPreferences(
  deps: Deps,
  tenant: Tenant,
  self: SubscriberSelf,
  items: readonly BulkPreferenceItem[],
): Promise<BulkPreferenceResult[]> {
  if (items.length === 0) throw invalidField("preferences", "must name at least one workflow");
  if (items.length > MAX_BULK_PREFERENCES)
    throw invalidField("preferences", `must name at most ${MAX_BULK_PREFERENCES} workflows`);
  const { byRef, missing } = await findWorkflowSummaries(
    deps,
    tenant,
    items.map((item) => item.workflowId),
  );
  if (missing.length > 0) throw workflowsNotFound(missing);
  // The last item for a target wins, in the place of the first.
  const targets = new Map<string, { item: BulkPreferenceItem; workflow: WorkflowSummary }>();
  for (const item of items) {
    const workflow = byRef.get(item.workflowId) as WorkflowSummary;
    const key = `${item.subscriptionIdentifier ?? ""}\u0000${workflow.id}`;
    targets.set(key, { item, workflow });
  }
  const chosen = [...targets.values()];
  return inTransaction(deps, async (d) => {
    const own = await writeInboxWorkflowPreferences(
      d,
      tenant,
      self.subscriberId,
      chosen
        .filter(({ item }) => item.subscriptionIdentifier === undefined)
        .map(({ item, workflow }) => ({
          workflow,
          change: {
            channels: item.channels,
            ...(item.enabled !== undefined ? { enabled: item.enabled } : {}),
          },
        })),
    );
    const subscribed = await changeSubscriptionPreferences(
      d,
      tenant,
      self,
      chosen
        .filter(({ item }) => item.subscriptionIdentifier !== undefined)
        .map(({ item, workflow }) => ({
          identifier: item.subscriptionIdentifier as string,
          workflow,
          change: { enabled: item.enabled, condition: item.condition, channels: item.channels },
        })),
      "preferences",
    );
    const ownQueue = [...own];
    const subscribedQueue = [...subscribed];
    return chosen.map(
      ({ item }): BulkPreferenceResult =>
        item.subscriptionIdentifier === undefined
          ? { kind: "workflow", preference: ownQueue.shift() as InboxWorkflowPreference }
          : { kind: "subscription", ...(subscribedQueue.shift() as (typeof subscribed)[number]) },
    );
  });
}

/**
 * For a fan-out page of a topic: the members a trigger of the workflow does not reach, by their
 * subscription's preference (off, or a condition the payload does not meet). A critical workflow
 * reaches every member.
 */
export async function membersHeldBack(
  deps: Deps,
  topicId: string,
  workflow: { id: string; critical: boolean },
  subscriberRefs: readonly string[],
  payload: Record<string, unknown>,
): Promise<Set<string>> {
  const held = new Set<string>();
  if (workflow.critical || subscriberRefs.length === 0) return held;
  const preferences = await topics.findMembersPreferences(deps.db, topicId, workflow.id, subscriberRefs);
  for (const [ref, preference] of preferences)
    if (!subscriptionLetsThrough(preference, payload)) held.add(ref);
  return held;
}

/**
 * For a step of a notification that came through a topic: the subscription's preference for the
 * workflow as the step decision takes it (whether the workflow is let through, and the channels set),
 * or undefined when the subscriber has no subscription (it left) or no preference for the workflow.
 */
export async function subscriptionPreferenceForStep(
  deps: Deps,
  topicId: string,
  subscriberRef: string,
  workflowId: string,
  payload: Record<string, unknown>,
): Promise<{ enabled: boolean; channels: Partial<Record<Channel, boolean>> } | undefined> {
  const found = (await topics.findSubscriptionPreferences(deps.db, topicId, subscriberRef, [workflowId])).get(
    workflowId,
  );
  return found && forStep(found, payload);
}

/** A subscription's preference as a step decision takes it: let through or not, and its channels. */
const forStep = (preference: SubscriptionPreference, payload: Record<string, unknown>) => ({
  enabled: subscriptionLetsThrough(preference, payload),
  channels: preference.channels,
});

/** subscriptionPreferenceForStep for many members of one topic at once (a fan-out page), by member. */
export async function subscriptionPreferencesForSteps(
  deps: Deps,
  topicId: string,
  subscriberRefs: readonly string[],
  workflowId: string,
  payload: Record<string, unknown>,
): Promise<Map<string, { enabled: boolean; channels: Partial<Record<Channel, boolean>> }>> {
  const found = await topics.findMembersPreferences(deps.db, topicId, workflowId, subscriberRefs);
  return new Map([...found].map(([ref, preference]) => [ref, forStep(preference, payload)]));
}

// ---------------------------------------------------------------- Novu's /v2 (@novu/api 3, with the API key)

export interface TopicUpsert {
  key: string;
  name?: string | undefined;
  data?: Record<string, unknown> | null | undefined;
}

/**
 * Novu's /v2 create: the topic made (named as sent, or with no name), or, for a key the
 * environment has, that topic with the name and data sent; with `failIfExists` an existing one is
 * left as it is and answered with `created: false` (the caller's 409).
 */
export async function upsertTopic(
  deps: Deps,
  tenant: Tenant,
  input: TopicUpsert,
  options: { failIfExists?: boolean | undefined } = {},
): Promise<{ topic: Topic; created: boolean }> {
  const name = input.name === undefined ? undefined : topicName(input.name);
  const data = input.data === undefined ? undefined : (input.data ?? {});
  return inTransaction(deps, async (d) => {
    const now = isoNow(d.clock);
    const inserted = await topics.insertTopic(
      d.db,
      {
        id: newObjectId(d.clock.now()),
        organizationId: tenant.organizationId,
        environmentId: tenant.environmentId,
        key: input.key,
        name: name ?? "",
        data: data ?? {},
      },
      now,
    );
    if (inserted) return { topic: inserted, created: true };
    const existing = await requireTopic(d, tenant, input.key, "update");
    if (options.failIfExists || (name === undefined && data === undefined))
      return { topic: existing, created: false };
    const updated = await topics.updateTopic(d.db, tenant.environmentId, input.key, { name, data }, now);
    return { topic: updated ?? existing, created: false };
  });
}

/** The topic, by key; 404 when the environment has none. */
export function getTopicByKey(deps: Deps, tenant: Tenant, key: string): Promise<Topic> {
  return requireTopic(deps, tenant, key);
}

/** Novu's /v2 update: the name and/or data sent. */
export async function updateTopic(
  deps: Deps,
  tenant: Tenant,
  key: string,
  input: { name?: string | undefined; data?: Record<string, unknown> | null | undefined },
): Promise<Topic> {
  const name = input.name === undefined ? undefined : topicName(input.name);
  const data = input.data === undefined ? undefined : (input.data ?? {});
  if (name === undefined && data === undefined) return requireTopic(deps, tenant, key);
  const updated = await topics.updateTopic(
    deps.db,
    tenant.environmentId,
    key,
    { name, data },
    isoNow(deps.clock),
  );
  if (!updated) throw topicNotFound(key);
  return updated;
}

/** Novu's /v2 delete: the topic goes with its subscriptions and their preferences (/v1 refuses while it has any). */
export async function deleteTopicWithSubscriptions(deps: Deps, tenant: Tenant, key: string): Promise<void> {
  await inTransaction(deps, async (d) => {
    const topic = await requireTopic(d, tenant, key, "update");
    await topics.deleteTopic(d.db, topic.id);
  });
}

export interface CursorInput {
  after?: string | undefined;
  before?: string | undefined;
  limit?: number | undefined;
  orderDirection?: "ASC" | "DESC" | undefined;
  includeCursor?: boolean | undefined;
}

const cursorOf = (input: CursorInput) => ({
  after: input.after,
  before: input.before,
  limit: input.limit ?? 10,
  direction: input.orderDirection === "ASC" ? ("asc" as const) : ("desc" as const),
  includeCursor: input.includeCursor,
});

/** A page's cursor must name a row of the environment: a 400 naming the field otherwise. */
async function checkCursor(
  input: CursorInput,
  exists: (id: string) => Promise<boolean>,
  what: string,
): Promise<void> {
  if (input.after !== undefined && input.before !== undefined)
    throw invalidField("before", "must not be sent with after: a page goes one way from one item");
  for (const field of ["after", "before"] as const) {
    const id = input[field];
    if (id !== undefined && !(await exists(id)))
      throw invalidField(field, `names no ${what} of this environment (its _id)`);
  }
}

/** Novu's /v2 list: the environment's topics, a page at a time by cursor; `key` exact, `name` contained. */
export async function pageTopics(
  deps: Deps,
  tenant: Tenant,
  input: CursorInput & {
    orderBy?: topics.TopicOrder | undefined;
    key?: string | undefined;
    name?: string | undefined;
  },
) {
  await checkCursor(input, (id) => topics.topicIdExists(deps.db, tenant.environmentId, id), "topic");
  return topics.pageTopics(
    deps.db,
    tenant.environmentId,
    { key: input.key, name: input.name },
    input.orderBy ?? "_id",
    cursorOf(input),
  );
}

/** A subscription as /v2 shows it: with its preferences and its subscriber. */
export interface SubscriptionWithSubscriber extends SubscriptionView {
  subscriber: Subscriber | undefined;
}

async function withSubscribers(
  deps: Deps,
  tenant: Tenant,
  subscriptions: readonly TopicSubscription[],
): Promise<SubscriptionWithSubscriber[]> {
  const profiles = await getSubscribersByRefs(
    deps,
    tenant,
    subscriptions.map((s) => s.subscriberRef),
  );
  const out: SubscriptionWithSubscriber[] = [];
  for (const subscription of subscriptions)
    out.push({
      ...(await preferencesOf(deps, tenant, subscription)),
      subscriber: profiles.get(subscription.subscriberRef),
    });
  return out;
}

/**
 * Novu's /v2 lists of subscriptions, a page at a time by cursor (newest first by default): a
 * topic's (404 without the topic), narrowed to one subscriber, or a subscriber's (404 without the
 * subscriber), narrowed to one topic. A filter that names nothing finds nothing.
 */
export async function pageSubscriptions(
  deps: Deps,
  tenant: Tenant,
  input: CursorInput & { topicKey?: string | undefined; subscriberId?: string | undefined },
  scope: "topic" | "subscriber",
) {
  await checkCursor(
    input,
    (id) => topics.subscriptionIdExists(deps.db, tenant.environmentId, id),
    "subscription",
  );
  const topic =
    input.topicKey === undefined
      ? undefined
      : await topics.findTopic(deps.db, tenant.environmentId, input.topicKey);
  if (scope === "topic" && !topic) throw topicNotFound(input.topicKey ?? "");
  const ref =
    input.subscriberId === undefined
      ? undefined
      : (await findSubscriberRefs(deps, tenant, [input.subscriberId])).get(input.subscriberId);
  if (scope === "subscriber" && !ref) throw subscriberNotFound(input.subscriberId ?? "");
  const empty = { rows: [], next: null, previous: null, totalCount: 0, totalCountCapped: false };
  if ((input.topicKey !== undefined && !topic) || (input.subscriberId !== undefined && !ref)) return empty;
  const page = await topics.pageSubscriptions(
    deps.db,
    tenant.environmentId,
    { topicId: topic?.id, subscriberRef: ref },
    cursorOf(input),
  );
  return { ...page, rows: await withSubscribers(deps, tenant, page.rows) };
}

/** One subscription to make: the subscriber, and optionally its identifier and name. */
export interface SubscriptionItem {
  subscriberId: string;
  identifier?: string | undefined;
  name?: string | undefined;
}

/** Why an item of a /v2 subscription call was refused. */
export interface ItemFailure {
  subscriberId: string;
  code: string;
  message: string;
}

const failureCode = (error: unknown) => {
  const status = (error as { statusCode?: number }).statusCode;
  return status === 404 ? "NOT_FOUND" : status === 409 ? "CONFLICT" : "INVALID";
};

/**
 * Novu's /v2 subscribe (the topic made, named `topicName` or `Autogenerated-<key>`, when the
 * environment has none): each item subscribes its subscriber as the inbox subscribes it, with the
 * preferences given, and stands alone; a subscriber the environment does not have, or a clash of
 * identifiers, is a failure of that item. When every item fails, the first failure is the 4xx.
 */
export async function createSubscriptions(
  deps: Deps,
  tenant: Tenant,
  topicKey: string,
  input: {
    items: readonly SubscriptionItem[];
    field: string;
    topicName?: string | undefined;
    preferences?: readonly PreferenceFilterInput[] | undefined;
  },
): Promise<{ created: SubscriptionWithSubscriber[]; failed: ItemFailure[] }> {
  if (input.items.length === 0) throw invalidField(input.field, "must name at least one subscriber");
  if (input.items.length > 100) throw invalidField(input.field, "must name at most 100 subscribers");
  // Preferences that name an unknown workflow, or a bad condition, make the whole request wrong.
  if (input.preferences) await resolvePreferenceFilters(deps, tenant, input.preferences, "preferences");
  const refs = await findSubscriberRefs(
    deps,
    tenant,
    input.items.map((item) => item.subscriberId),
  );
  const made: TopicSubscription[] = [];
  const failed: (ItemFailure & { index: number; error: ApiErrorLike })[] = [];
  for (const [index, item] of input.items.entries()) {
    const subscriberRef = refs.get(item.subscriberId);
    if (!subscriberRef) {
      const error = subscriberNotFound(item.subscriberId);
      failed.push({
        index,
        error,
        subscriberId: item.subscriberId,
        code: "SUBSCRIBER_NOT_FOUND",
        message: error.message,
      });
      continue;
    }
    try {
      const { view } = await subscribe(
        deps,
        tenant,
        { subscriberRef, subscriberId: item.subscriberId },
        topicKey,
        {
          identifier: item.identifier,
          name: item.name,
          topicName: input.topicName,
          preferences: input.preferences,
        },
      );
      made.push(view.subscription);
    } catch (error) {
      const status = (error as { statusCode?: number }).statusCode;
      if (status === undefined || status >= 500) throw error;
      failed.push({
        index,
        error: error as ApiErrorLike,
        subscriberId: item.subscriberId,
        code: failureCode(error),
        message: (error as Error).message,
      });
    }
  }
  const first = failed[0];
  if (made.length === 0 && first) throw allFailed(first, input.field);
  return {
    created: await withSubscribers(deps, tenant, made),
    failed: failed.map(({ subscriberId, code, message }) => ({ subscriberId, code, message })),
  };
}

type ApiErrorLike = Error & { statusCode: number };

/** Every item refused: the first one's refusal, naming its item. */
function allFailed(first: { index: number; error: ApiErrorLike }, field: string) {
  const message = first.error.message;
  if (first.error.statusCode === 404) return notFound(message);
  if (first.error.statusCode === 409) return conflict(message);
  return badRequest(`${field}[${first.index}]: ${message}`, [{ field: `${field}[${first.index}]`, message }]);
}

/**
 * Novu's /v2 unsubscribe: each item names a subscription by identifier (or id), or a subscriber
 * (its one subscription to the topic), or both (which must agree); those found end, with their
 * preferences, and are answered as they were. An item that names none is a failure; when every
 * item fails, the first failure is the 404.
 */
export async function deleteSubscriptions(
  deps: Deps,
  tenant: Tenant,
  topicKey: string,
  input: {
    items: readonly { subscriberId?: string | undefined; identifier?: string | undefined }[];
    field: string;
  },
): Promise<{ deleted: SubscriptionWithSubscriber[]; failed: ItemFailure[] }> {
  if (input.items.length === 0) throw invalidField(input.field, "must name at least one subscription");
  if (input.items.length > 100) throw invalidField(input.field, "must name at most 100 subscriptions");
  const topic = await requireTopic(deps, tenant, topicKey);
  const refs = await findSubscriberRefs(
    deps,
    tenant,
    input.items.flatMap((item) => (item.subscriberId === undefined ? [] : [item.subscriberId])),
  );
  const found: TopicSubscription[] = [];
  const failed: ItemFailure[] = [];
  for (const item of input.items) {
    const ref = item.subscriberId === undefined ? undefined : refs.get(item.subscriberId);
    const subscription =
      item.identifier !== undefined
        ? await topics.findSubscriptionByName(deps.db, topic, item.identifier)
        : ref !== undefined
          ? await topics.findSubscription(deps.db, topic, ref)
          : undefined;
    if (!subscription || (item.subscriberId !== undefined && subscription.subscriberRef !== ref)) {
      const named = item.identifier ?? item.subscriberId ?? "";
      failed.push({
        subscriberId: item.subscriberId ?? "",
        code: "SUBSCRIPTION_NOT_FOUND",
        message: `Topic ${topicKey} has no subscription ${mention(named, "as named")}`,
      });
      continue;
    }
    if (!found.some((s) => s.id === subscription.id)) found.push(subscription);
  }
  const first = failed[0];
  if (found.length === 0 && first) throw notFound(first.message);
  const deleted = await withSubscribers(deps, tenant, found);
  await inTransaction(deps, async (d) => {
    await topics.removeMembers(
      d.db,
      topic.id,
      found.map((s) => s.subscriberRef),
    );
  });
  return { deleted, failed };
}

/** Whose is the topic's subscription with this identifier (or id): 404 when the topic has none such. */
async function ownerOf(
  deps: Deps,
  tenant: Tenant,
  topicKey: string,
  identifier: string,
): Promise<SubscriberSelf> {
  const topic = await requireTopic(deps, tenant, topicKey);
  const found = await topics.findSubscriptionByName(deps.db, topic, identifier);
  if (!found) throw subscriptionNotFound(identifier);
  return { subscriberRef: found.subscriberRef, subscriberId: found.subscriberId };
}

/** Novu's /v2 read of one subscription, by identifier (or id), with its preferences. */
export async function getSubscription(
  deps: Deps,
  tenant: Tenant,
  topicKey: string,
  identifier: string,
): Promise<SubscriptionView> {
  const self = await ownerOf(deps, tenant, topicKey, identifier);
  const view = await getOwnSubscription(deps, tenant, self, topicKey, identifier);
  if (!view) throw subscriptionNotFound(identifier);
  return view;
}

/** Novu's /v2 change of one subscription: its name, and/or its preferences replaced by those sent. */
export async function updateSubscription(
  deps: Deps,
  tenant: Tenant,
  topicKey: string,
  identifier: string,
  input: { name?: string | undefined; preferences?: readonly PreferenceFilterInput[] | undefined },
): Promise<SubscriptionWithSubscriber> {
  const self = await ownerOf(deps, tenant, topicKey, identifier);
  const view = await updateOwnSubscription(deps, tenant, self, topicKey, identifier, input);
  const [profile] = [...(await getSubscribersByRefs(deps, tenant, [self.subscriberRef])).values()];
  return { ...view, subscriber: profile };
}
