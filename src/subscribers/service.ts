import { isoNow } from "../clock.ts";
import { type Deps, inTransaction, secretsOf } from "../deps.ts";
import { badRequest, type FieldError, invalidField, notFound } from "../errors.ts";
import { newObjectId } from "../ids.ts";
import type { OutboundPolicy } from "../outbound.ts";
import type { Tenant } from "../tenancy/tenant.ts";
import { CHANNELS, type Channel, type PreferenceSettings } from "../workflows/domain.ts";
import { getWorkflowSummary, listActiveWorkflows, type WorkflowSummary } from "../workflows/service.ts";
import { openChannel, sealChannel } from "./channel-secrets.ts";
import type {
  ChannelCredentials,
  ChannelPreferences,
  Preference,
  Subscriber,
  SubscriberChannel,
  SubscriberPreferences,
} from "./domain.ts";
import {
  type Entry,
  fieldsOf,
  nextCredentials,
  readCredentials,
  readEntry,
  readProfile,
  throwIfAny,
} from "./input.ts";
import { allChannels, presentGlobalPreference } from "./presenter.ts";
import type { SubscriberFilters, SubscriberOrder } from "./repository.ts";
import * as subscribers from "./repository.ts";
import { isWithinSchedule, readSchedule, type Schedule } from "./schedule.ts";
import type {
  ChannelInputValue,
  CreateSubscriberInput,
  GlobalPreferenceResource,
  UpdateGlobalPreferenceInput,
  UpdatePreferenceInput,
  UpdateSubscriberInput,
  WorkflowPreferenceResource,
} from "./schemas.ts";

async function writeChannelInputs(
  deps: Deps,
  subscriber: Subscriber,
  inputs: readonly ChannelInputValue[],
  mode: "replace" | "merge",
): Promise<Subscriber> {
  if (inputs.length === 0) return subscriber;
  const box = secretsOf(deps);
  let channels = subscriber.channels;
  for (const input of inputs) {
    const current = channels.find((c) => c.providerId === input.providerId);
    const next = nextCredentials(
      current && {
        integrationIdentifier: current.integrationIdentifier,
        // Credentials that no longer open (another key) are as good as none: the new ones replace them.
        credentials: openChannel(box, subscriber.id, current) ?? { webhookUrl: "", deviceTokens: [] },
      },
      input,
      mode,
    );
    const sealed = sealChannel(
      box,
      subscriber.id,
      input.providerId,
      next.integrationIdentifier,
      next.credentials,
    );
    channels = current
      ? channels.map((c) => (c.providerId === input.providerId ? sealed : c))
      : [...channels, sealed];
  }
  return subscribers.writeChannels(deps.db, subscriber.id, channels, isoNow(deps.clock));
}

/**
 * A channel's credentials in the clear, for the step that delivers through them; undefined when
 * they cannot be opened (no key, or another one than sealed them).
 */
export function openChannelCredentials(
  deps: Deps,
  subscriber: Subscriber,
  channel: SubscriberChannel,
): ChannelCredentials | undefined {
  return openChannel(deps.secrets, subscriber.id, channel);
}

// ---------------------------------------------------------------- subscribers

// A subscriberId is any text. Messages repeat it only when it is made of word characters and a
// few marks: free text (spaces, quotes, SQL or markup someone sent as an id) never reaches an error
// message, where a client or a log would show it as ours.
const PLAIN_ID = /^[\w.:@+-]{1,128}$/;

/** "Subscriber <id>", or "The subscriber with this subscriberId" when the id is not plain. */
export function subscriberLabel(subscriberId: string): string {
  return PLAIN_ID.test(subscriberId) ? `Subscriber ${subscriberId}` : "The subscriber with this subscriberId";
}

export function subscriberNotFound(subscriberId: string) {
  return notFound(`${subscriberLabel(subscriberId)} was not found`);
}

async function requireSubscriber(deps: Deps, tenant: Tenant, subscriberId: string, forUpdate = false) {
  const subscriber = await subscribers.findSubscriber(deps.db, tenant.environmentId, subscriberId, forUpdate);
  if (!subscriber) throw subscriberNotFound(subscriberId);
  return subscriber;
}

/**
 * Creates the subscriber, or updates the one with this subscriberId (Novu's `identify`): the fields
 * sent change, the others stay, and the subscriber keeps its _id. Sent channels set those
 * providers' credentials.
 */
export async function upsertSubscriber(
  deps: Deps,
  tenant: Tenant,
  input: CreateSubscriberInput,
  outbound?: OutboundPolicy,
): Promise<Subscriber> {
  return (await upsertRecipient(deps, tenant, input, outbound)).subscriber;
}

/**
 * upsertSubscriber, also saying whether the subscriber was created: a trigger to a subscriberId
 * nobody made creates it (as Novu does), and its activity says so.
 */
export async function upsertRecipient(
  deps: Deps,
  tenant: Tenant,
  input: CreateSubscriberInput,
  outbound?: OutboundPolicy,
): Promise<{ subscriber: Subscriber; created: boolean }> {
  const errors: FieldError[] = [];
  const entry = readEntry(input, "", errors, outbound);
  throwIfAny(errors);
  const write = async (d: Deps) => {
    const now = isoNow(d.clock);
    const [upserted] = await subscribers.upsertSubscribers(
      d.db,
      tenant,
      [{ id: newObjectId(d.clock.now()), subscriberId: entry.subscriberId, profile: entry.profile }],
      fieldsOf(entry.profile),
      now,
    );
    if (!upserted) throw new Error("the upsert returned no row");
    const subscriber = await writeChannelInputs(d, upserted.subscriber, entry.channels, "replace");
    return { subscriber, created: upserted.created };
  };
  return entry.channels.length > 0 ? inTransaction(deps, write) : write(deps);
}

/** Entries as rows to upsert, each with the id it gets if it is created. */
const proposedRows = (deps: Deps, entries: readonly Entry[]) =>
  entries.map((entry) => ({
    id: newObjectId(deps.clock.now()),
    subscriberId: entry.subscriberId,
    profile: entry.profile,
  }));

/**
 * upsertRecipient for the recipients of many triggers of one environment at once, in the caller's
 * transaction (engine/trigger-batch.ts): one statement for each set of fields the recipients set,
 * their rows in subscriberId order (two such batches lock shared rows in the same order). The
 * outcome of each input, in order; a subscriberId named twice is upserted once, and only its first
 * naming can say it was created. Refused (an error; the triggers then run one by one): a recipient
 * with channel credentials (written one by one), or a subscriberId named twice where a naming sets
 * a field (the later trigger's fields would reach the earlier's run).
 */
export async function upsertRecipients(
  deps: Deps,
  tenant: Tenant,
  inputs: readonly CreateSubscriberInput[],
): Promise<{ subscriber: Subscriber; created: boolean }[]> {
  const entries = inputs.map((input) => {
    const errors: FieldError[] = [];
    const entry = readEntry(input, "", errors);
    throwIfAny(errors);
    if (entry.channels.length > 0) throw new Error("a recipient with channel credentials is upserted alone");
    return entry;
  });
  const bySubscriberId = new Map<string, Entry>();
  for (const entry of entries) {
    const seen = bySubscriberId.get(entry.subscriberId);
    if (!seen) bySubscriberId.set(entry.subscriberId, entry);
    else if (fieldsOf(seen.profile).length > 0 || fieldsOf(entry.profile).length > 0)
      throw new Error("a recipient named twice with fields is upserted one trigger at a time");
  }
  const byFields = new Map<string, Entry[]>();
  for (const entry of [...bySubscriberId.values()].sort((a, b) =>
    a.subscriberId < b.subscriberId ? -1 : a.subscriberId > b.subscriberId ? 1 : 0,
  )) {
    const key = fieldsOf(entry.profile).join(",");
    const group = byFields.get(key);
    if (group) group.push(entry);
    else byFields.set(key, [entry]);
  }
  const now = isoNow(deps.clock);
  const upserted = new Map<string, { subscriber: Subscriber; created: boolean }>();
  for (const group of byFields.values()) {
    const rows = await subscribers.upsertSubscribers(
      deps.db,
      tenant,
      proposedRows(deps, group),
      fieldsOf((group[0] as Entry).profile),
      now,
    );
    for (const row of rows) upserted.set(row.subscriber.subscriberId, row);
  }
  const told = new Set<string>();
  return entries.map((entry) => {
    const row = upserted.get(entry.subscriberId);
    if (!row) throw new Error("the upsert returned no row");
    const first = !told.has(entry.subscriberId);
    told.add(entry.subscriberId);
    return { subscriber: row.subscriber, created: row.created && first };
  });
}

export interface BulkOutcome {
  created: { subscriberId: string }[];
  updated: { subscriberId: string }[];
  failed: { subscriberId: string; message: string }[];
}

/**
 * Upserts up to 500 subscribers, each as `upsertSubscriber` would, in one transaction. An entry that
 * breaks a rule (an empty subscriberId, an email that is not one...) is reported in `failed` and
 * the others are written; one named twice is upserted once with its fields merged in order (the
 * later entry wins), the repeat reported as updated.
 */
export async function bulkUpsertSubscribers(
  deps: Deps,
  tenant: Tenant,
  inputs: readonly CreateSubscriberInput[],
  outbound?: OutboundPolicy,
): Promise<BulkOutcome> {
  const outcome: BulkOutcome = { created: [], updated: [], failed: [] };
  const order: ({ subscriberId: string } | undefined)[] = [];
  const merged = new Map<string, Entry>();
  for (const input of inputs) {
    const errors: FieldError[] = [];
    const entry = readEntry(input, "", errors, outbound);
    const first = errors[0];
    if (first) {
      outcome.failed.push({ subscriberId: input.subscriberId, message: `${first.field} ${first.message}` });
      order.push(undefined);
      continue;
    }
    const seen = merged.get(entry.subscriberId);
    if (seen) {
      seen.profile = { ...seen.profile, ...entry.profile };
      seen.channels = [...seen.channels, ...entry.channels];
    } else {
      merged.set(entry.subscriberId, { ...entry, channels: [...entry.channels] });
    }
    order.push({ subscriberId: entry.subscriberId });
  }
  if (merged.size === 0) return outcome;

  const created = await inTransaction(deps, async (d) => {
    const now = isoNow(d.clock);
    // Rows are locked in subscriberId order, so two bulk calls that share subscribers cannot
    // deadlock on PostgreSQL; consecutive entries that set the same fields share a statement.
    const entries = [...merged.values()].sort((a, b) =>
      a.subscriberId < b.subscriberId ? -1 : a.subscriberId > b.subscriberId ? 1 : 0,
    );
    const createdIds = new Set<string>();
    const CHUNK = 500;
    let run: Entry[] = [];
    const flush = async () => {
      const fields = fieldsOf(run[0]?.profile ?? {});
      for (let i = 0; i < run.length; i += CHUNK) {
        const chunk = run.slice(i, i + CHUNK);
        const results = await subscribers.upsertSubscribers(
          d.db,
          tenant,
          proposedRows(d, chunk),
          fields,
          now,
        );
        for (const result of results) {
          if (result.created) createdIds.add(result.subscriber.subscriberId);
          const entry = merged.get(result.subscriber.subscriberId);
          if (entry && entry.channels.length > 0)
            await writeChannelInputs(d, result.subscriber, entry.channels, "replace");
        }
      }
      run = [];
    };
    for (const entry of entries) {
      const previous = run[0];
      if (previous && fieldsOf(previous.profile).join() !== fieldsOf(entry.profile).join()) await flush();
      run.push(entry);
    }
    await flush();
    return createdIds;
  });

  const reported = new Set<string>();
  for (const item of order) {
    if (!item) continue;
    const first = !reported.has(item.subscriberId);
    reported.add(item.subscriberId);
    (first && created.has(item.subscriberId) ? outcome.created : outcome.updated).push(item);
  }
  return outcome;
}

/** How many subscribers the environment has, counting no further than `limit` (what a broadcast's quota needs). */
export function countSubscribers(deps: Deps, tenant: Tenant, limit: number): Promise<number> {
  return subscribers.countSubscribersUpTo(deps.db, tenant.environmentId, limit);
}

export async function getSubscriber(deps: Deps, tenant: Tenant, subscriberId: string): Promise<Subscriber> {
  return requireSubscriber(deps, tenant, subscriberId);
}

/** Whether an online subscriber of the key's environment has a subscriberId containing `fragment` (any case). */
export function hasOnlineSubscriberContaining(
  deps: Deps,
  tenant: Tenant,
  fragment: string,
): Promise<boolean> {
  return subscribers.hasOnlineSubscriberContaining(deps.db, tenant.environmentId, fragment);
}

export async function subscriberExists(deps: Deps, tenant: Tenant, subscriberId: string): Promise<boolean> {
  return (await subscribers.findSubscriber(deps.db, tenant.environmentId, subscriberId)) !== undefined;
}

export const DEFAULT_PAGE_SIZE = 10;

export async function listSubscribers(
  deps: Deps,
  tenant: Tenant,
  input: { page?: number | undefined; limit?: number | undefined; search?: string | undefined },
) {
  const page = input.page ?? 0;
  const limit = input.limit ?? DEFAULT_PAGE_SIZE;
  const { totalCount, subscribers: data } = await subscribers.listSubscribers(
    deps.db,
    tenant.environmentId,
    page * limit,
    limit,
    input.search?.trim(),
  );
  return { page, pageSize: limit, totalCount, hasMore: (page + 1) * limit < totalCount, data };
}

/**
 * Novu's /v2 create: the subscriber made, or (as the upsert) the one with this subscriberId
 * updated with the fields sent; with `failIfExists`, an existing one is left as it is and
 * answered with `created: false` (the caller's 409). Two concurrent creates make one subscriber.
 */
export async function createSubscriber(
  deps: Deps,
  tenant: Tenant,
  input: CreateSubscriberInput,
  options: { failIfExists?: boolean | undefined },
  outbound?: OutboundPolicy,
): Promise<{ subscriber: Subscriber; created: boolean }> {
  if (!options.failIfExists) return upsertRecipient(deps, tenant, input, outbound);
  const errors: FieldError[] = [];
  const entry = readEntry(input, "", errors, outbound);
  throwIfAny(errors);
  return inTransaction(deps, async (d) => {
    const inserted = await subscribers.insertSubscriber(
      d.db,
      tenant,
      { id: newObjectId(d.clock.now()), subscriberId: entry.subscriberId, profile: entry.profile },
      isoNow(d.clock),
    );
    if (!inserted)
      return { subscriber: await requireSubscriber(d, tenant, entry.subscriberId), created: false };
    return { subscriber: await writeChannelInputs(d, inserted, entry.channels, "replace"), created: true };
  });
}

export interface SubscriberSearch extends SubscriberFilters {
  after?: string | undefined;
  before?: string | undefined;
  limit?: number | undefined;
  orderBy?: SubscriberOrder | undefined;
  orderDirection?: "ASC" | "DESC" | undefined;
  includeCursor?: boolean | undefined;
}

/**
 * Novu's /v2 search: the environment's subscribers the filters keep (each narrows: email, phone
 * and name contain the text, in any case; subscriberId is exact), a page of `limit` (10) at a time,
 * newest first by default, after or before a subscriber named by its `_id`.
 */
export async function searchSubscribers(deps: Deps, tenant: Tenant, input: SubscriberSearch) {
  if (input.after !== undefined && input.before !== undefined)
    throw invalidField("before", "must not be sent with after: a page goes one way from one subscriber");
  for (const field of ["after", "before"] as const) {
    const id = input[field];
    if (id !== undefined && !(await subscribers.subscriberIdExists(deps.db, tenant.environmentId, id)))
      throw invalidField(field, "names no subscriber of this environment (a subscriber's _id)");
  }
  return subscribers.searchSubscribers(
    deps.db,
    tenant.environmentId,
    { email: input.email, phone: input.phone, subscriberId: input.subscriberId, name: input.name },
    input.orderBy ?? "_id",
    {
      after: input.after,
      before: input.before,
      limit: input.limit ?? DEFAULT_PAGE_SIZE,
      direction: input.orderDirection === "ASC" ? "asc" : "desc",
      includeCursor: input.includeCursor,
    },
  );
}

/** A partial update: the fields sent change, the others keep their values. */
export async function updateSubscriber(
  deps: Deps,
  tenant: Tenant,
  subscriberId: string,
  input: UpdateSubscriberInput,
  outbound?: OutboundPolicy,
): Promise<Subscriber> {
  const errors: FieldError[] = [];
  const profile = readProfile(input, "", errors);
  const channels = input.channels ?? [];
  channels.forEach((channel, i) => {
    readCredentials(channel.credentials, `channels[${i}].credentials.`, errors, outbound);
  });
  throwIfAny(errors);
  if (Object.keys(profile).length === 0 && channels.length === 0) {
    return requireSubscriber(deps, tenant, subscriberId);
  }
  return inTransaction(deps, async (d) => {
    const now = isoNow(d.clock);
    const updated =
      Object.keys(profile).length > 0
        ? await subscribers.updateProfile(d.db, tenant.environmentId, subscriberId, profile, now)
        : await subscribers.findSubscriber(d.db, tenant.environmentId, subscriberId, true);
    if (!updated) throw subscriberNotFound(subscriberId);
    return writeChannelInputs(d, updated, channels, "replace");
  });
}

/**
 * Deletes the subscriber and everything that is only about it: its preferences and its topic
 * memberships now. The engine extends this, in the same transaction, with the subscriber's messages
 * and the cancellation of its pending jobs (docs/engine.md, "Subscribers, topics and preferences").
 */
/**
 * What the features above this one (the engine) keep for a subscriber, which this feature cannot
 * import: the composition root (app.ts) hands it in, so deleting a subscriber takes it along.
 */
export interface SubscriberErasure {
  /**
   * Runs inside the delete's transaction, the subscriber's row locked: what has not run yet for
   * the subscriber is canceled and what was delivered to it is removed.
   */
  forget(deps: Deps, tenant: Tenant, subscriberRef: string): Promise<void>;
}

/**
 * Deletes the subscriber with its preferences, and (through `erasure`) its pending work and its
 * messages, in one transaction: a failure leaves the subscriber and all of it in place.
 */
export async function deleteSubscriber(
  deps: Deps,
  tenant: Tenant,
  subscriberId: string,
  erasure: SubscriberErasure,
): Promise<void> {
  await inTransaction(deps, async (d) => {
    // Locked first (PostgreSQL): a worker writing a message holds the row too (holdSubscriber), so
    // it either commits before this reads the messages, or finds the subscriber gone.
    const subscriber = await requireSubscriber(d, tenant, subscriberId, true);
    await erasure.forget(d, tenant, subscriber.id);
    await subscribers.deleteSubscriberRows(d.db, subscriber.id);
  });
}

/**
 * Inside the caller's transaction: whether the subscriber with our id `subscriberRef` still exists,
 * and (PostgreSQL) a hold on its row until the transaction ends, so that a delete waits for what
 * the caller writes for it and then removes that too. SQLite runs one write transaction at a time.
 */
export async function holdSubscriber(deps: Deps, tenant: Tenant, subscriberRef: string): Promise<boolean> {
  return subscribers.holdSubscriberRow(deps.db, tenant.environmentId, subscriberRef);
}

/** Sets one provider's credentials: `replace` (PUT) or `merge` (PATCH); see applyCredentials. */
export async function setCredentials(
  deps: Deps,
  tenant: Tenant,
  subscriberId: string,
  input: ChannelInputValue,
  mode: "replace" | "merge",
  outbound?: OutboundPolicy,
): Promise<Subscriber> {
  const errors: FieldError[] = [];
  readCredentials(input.credentials, "credentials.", errors, outbound);
  throwIfAny(errors);
  return inTransaction(deps, async (d) => {
    const subscriber = await requireSubscriber(d, tenant, subscriberId, true);
    return writeChannelInputs(d, subscriber, [input], mode);
  });
}

/** Removes one provider's credentials; a provider the subscriber has none for is already removed. */
export async function deleteCredentials(
  deps: Deps,
  tenant: Tenant,
  subscriberId: string,
  providerId: string,
): Promise<void> {
  await inTransaction(deps, async (d) => {
    const subscriber = await requireSubscriber(d, tenant, subscriberId, true);
    const channels = subscriber.channels.filter((c) => c.providerId !== providerId);
    if (channels.length !== subscriber.channels.length)
      await subscribers.writeChannels(d.db, subscriber.id, channels, isoNow(d.clock));
  });
}

/** Sets `isOnline` and stamps `lastOnlineAt` (the last moment the subscriber was known online or left). */
export async function setOnlineStatus(
  deps: Deps,
  tenant: Tenant,
  subscriberId: string,
  input: { isOnline?: boolean | undefined; online?: boolean | undefined },
): Promise<Subscriber> {
  const isOnline = input.isOnline ?? input.online;
  if (isOnline === undefined) throw invalidField("isOnline", "is required");
  if (input.isOnline !== undefined && input.online !== undefined && input.isOnline !== input.online)
    throw invalidField("online", "must agree with isOnline when both are sent");
  const now = isoNow(deps.clock);
  const updated = await subscribers.setOnline(deps.db, tenant.environmentId, subscriberId, isOnline, now);
  if (!updated) throw subscriberNotFound(subscriberId);
  return updated;
}

/**
 * Our ids of the environment's subscribers among `subscriberIds`, by subscriberId; absent ones are
 * not in the map. For features above this one (topics) that store references to subscribers: with
 * `forShare`, inside the caller's transaction, a concurrent delete of one of them waits until the
 * caller has written its reference (PostgreSQL; SQLite's writer is alone anyway).
 */
export async function findSubscriberRefs(
  deps: Deps,
  tenant: Tenant,
  subscriberIds: readonly string[],
  options: { forShare?: boolean } = {},
): Promise<Map<string, string>> {
  return subscribers.findSubscriberRefs(deps.db, tenant.environmentId, subscriberIds, options.forShare);
}

/** The _ids of the subscribers with one of these e-mail addresses (exactly; an empty one matches none). */
export async function findSubscriberRefsByEmail(
  deps: Deps,
  tenant: Tenant,
  emails: readonly string[],
): Promise<string[]> {
  return subscribers.findSubscriberRefsByEmail(deps.db, tenant.environmentId, emails);
}

/** The _ids of the subscribers whose e-mail contains `text` (any case) or whose subscriberId is `text`. */
export async function findSubscriberRefsBySearch(
  deps: Deps,
  tenant: Tenant,
  text: string,
): Promise<string[]> {
  return subscribers.findSubscriberRefsBySearch(deps.db, tenant.environmentId, text);
}

// ---------------------------------------------------------------- preferences: the decision

const CHANNEL_SET: ReadonlySet<string> = new Set(CHANNELS);

export function isChannelStep(stepType: string): stepType is Channel {
  return CHANNEL_SET.has(stepType);
}

/** What the decision needs: the workflow's rules and what the subscriber set. */
export interface PreferenceContext extends SubscriberPreferences {
  critical: boolean;
  preferenceSettings: PreferenceSettings;
  /**
   * The moment the step runs (epoch ms, the engine's clock) and the subscriber's timezone: the
   * global preference's schedule is read then. Without a moment (a listing) no schedule applies.
   */
  now?: number | undefined;
  timezone?: string | undefined;
  /**
   * The preference for this workflow of the topic subscription the notification came through, when
   * it came through one: it can only turn steps off.
   */
  subscription?: Preference | undefined;
}

export interface StepDecision {
  run: boolean;
  /** Why, in words for an execution detail. */
  reason: string;
}

/**
 * Whether a step may run for a subscriber (docs/engine.md, "Subscribers, topics and preferences"), in this
 * order: a step that is not a channel (delay, digest...) runs; a critical workflow sends; a step of any
 * channel but in-app outside the subscriber's schedule skips; the subscriber's global preference turning
 * everything or this channel off skips; the topic subscription's preference turning the workflow or this
 * channel off skips; the subscriber's preference for the workflow (off altogether, or its value for the
 * channel) decides; else the workflow's preferenceSettings.
 */
export function decideStep(stepType: string, context: PreferenceContext): StepDecision {
  if (!isChannelStep(stepType))
    return { run: true, reason: `${stepType} steps do not depend on preferences` };
  const channel = stepType;
  if (context.critical) return { run: true, reason: "the workflow is critical" };
  if (
    channel !== "in_app" &&
    context.now !== undefined &&
    !isWithinSchedule(context.global?.schedule, context.now, context.timezone ?? "")
  )
    return { run: false, reason: "the step falls outside the subscriber's schedule" };
  if (context.global?.enabled === false)
    return { run: false, reason: "the subscriber turned all notifications off" };
  if (context.global?.channels[channel] === false)
    return { run: false, reason: `the subscriber turned the ${channel} channel off` };
  if (context.subscription?.enabled === false)
    return { run: false, reason: "the subscriber's topic subscription turned this workflow off" };
  if (context.subscription?.channels[channel] === false)
    return {
      run: false,
      reason: `the subscriber's topic subscription turned the ${channel} channel off for this workflow`,
    };
  if (context.workflow?.enabled === false)
    return { run: false, reason: "the subscriber turned this workflow off" };
  const own = context.workflow?.channels[channel];
  if (own !== undefined)
    return {
      run: own,
      reason: `the subscriber turned ${channel} ${own ? "on" : "off"} for this workflow`,
    };
  const byDefault = context.preferenceSettings[channel];
  return {
    run: byDefault,
    reason: `the workflow's preference settings have ${channel} ${byDefault ? "on" : "off"}`,
  };
}

/**
 * What the subscriber sees for one workflow (the preference listing): critical workflows on with
 * every channel; otherwise the subscriber's workflow preference over the workflow's settings.
 * The global preference is shown on its own, as Novu does.
 */
export function effectiveWorkflowPreference(context: Omit<PreferenceContext, "global">): Preference & {
  channels: Record<Channel, boolean>;
} {
  if (context.critical) return { enabled: true, channels: allChannels({}) };
  return {
    enabled: context.workflow?.enabled ?? true,
    channels: allChannels(context.workflow?.channels ?? {}, (c) => context.preferenceSettings[c]),
  };
}

/**
 * The subscriber's preferences that bear on one workflow (its global one and the workflow's), for
 * `decideStep`. `subscriberRef` is our id for the subscriber (its `_id`), `workflowId` the
 * workflow's `_id`.
 */
export async function loadSubscriberPreferences(
  deps: Deps,
  tenant: Tenant,
  subscriberRef: string,
  workflowId: string,
): Promise<SubscriberPreferences> {
  const found = await subscribers.findPreferences(deps.db, tenant.environmentId, subscriberRef, [
    "",
    workflowId,
  ]);
  return bearingOn(found, workflowId);
}

/** Of a subscriber's preferences by workflow ("" the global one), those that bear on `workflowId`. */
const bearingOn = (
  found: ReadonlyMap<string, Preference> | undefined,
  workflowId: string,
): SubscriberPreferences => ({ global: found?.get(""), workflow: found?.get(workflowId) });

/** loadSubscriberPreferences for many subscribers and one workflow, in one read: by subscriber. */
export async function loadPreferencesOfMany(
  deps: Deps,
  tenant: Tenant,
  subscriberRefs: readonly string[],
  workflowId: string,
): Promise<Map<string, SubscriberPreferences>> {
  const found = await subscribers.findPreferencesOfMany(deps.db, tenant.environmentId, subscriberRefs, [
    "",
    workflowId,
  ]);
  return new Map(subscriberRefs.map((ref) => [ref, bearingOn(found.get(ref), workflowId)]));
}

// ---------------------------------------------------------------- preferences: reads and writes

function presentWorkflowPreference(
  workflow: WorkflowSummary,
  preference: Preference | undefined,
): WorkflowPreferenceResource {
  return {
    template: {
      _id: workflow.id,
      name: workflow.name,
      critical: workflow.critical,
      triggers: workflow.triggers,
      tags: workflow.tags,
    },
    preference: workflowPreferenceView(workflow, preference),
  };
}

/**
 * The effective preference for a workflow as Novu lists it: the channels its active steps use, and
 * where each value comes from (the subscriber's own choice, or the workflow's settings).
 */
function workflowPreferenceView(workflow: WorkflowSummary, preference: Preference | undefined) {
  const effective = effectiveWorkflowPreference({
    critical: workflow.critical,
    preferenceSettings: workflow.preferenceSettings,
    workflow: preference,
  });
  const channels: Partial<Record<Channel, boolean>> = {};
  for (const channel of CHANNELS)
    if (workflow.channels.includes(channel)) channels[channel] = effective.channels[channel];
  const overrides = CHANNELS.filter((channel) => workflow.channels.includes(channel)).map((channel) => ({
    channel,
    source:
      !workflow.critical && preference?.channels[channel] !== undefined
        ? ("subscriber" as const)
        : ("template" as const),
  }));
  return { enabled: effective.enabled, channels, overrides };
}

/** One row per active workflow: the subscriber's effective preference for it. */
export async function listWorkflowPreferences(
  deps: Deps,
  tenant: Tenant,
  subscriberId: string,
): Promise<WorkflowPreferenceResource[]> {
  const subscriber = await requireSubscriber(deps, tenant, subscriberId);
  const [workflows, preferences] = await Promise.all([
    listActiveWorkflows(deps, tenant),
    subscribers.findPreferences(deps.db, tenant.environmentId, subscriber.id),
  ]);
  return workflows.map((workflow) => presentWorkflowPreference(workflow, preferences.get(workflow.id)));
}

export async function getGlobalPreference(
  deps: Deps,
  tenant: Tenant,
  subscriberId: string,
): Promise<GlobalPreferenceResource> {
  const subscriber = await requireSubscriber(deps, tenant, subscriberId);
  const found = await subscribers.findPreferences(deps.db, tenant.environmentId, subscriber.id, [""]);
  return presentGlobalPreference(found.get(""));
}

/** `global`: the global preference (as a one-element list, as Novu answers); `template`: the listing. */
export async function getPreferencesByLevel(
  deps: Deps,
  tenant: Tenant,
  subscriberId: string,
  level: "global" | "template",
): Promise<(GlobalPreferenceResource | WorkflowPreferenceResource)[]> {
  if (level === "global") return [await getGlobalPreference(deps, tenant, subscriberId)];
  return listWorkflowPreferences(deps, tenant, subscriberId);
}

function criticalRefusal(workflow: WorkflowSummary) {
  return badRequest(
    `Workflow "${workflow.name}" is critical: its notifications are always delivered and cannot be turned off`,
  );
}

/** Reads, changes and writes one stored preference with the subscriber's row locked (see findSubscriber). */
async function changePreference(
  deps: Deps,
  tenant: Tenant,
  subscriberId: string,
  workflowId: string,
  change: (current: Preference | undefined) => Preference,
): Promise<Preference> {
  return inTransaction(deps, async (d) => {
    const subscriber = await requireSubscriber(d, tenant, subscriberId, true);
    const found = await subscribers.findPreferences(d.db, tenant.environmentId, subscriber.id, [workflowId]);
    const next = change(found.get(workflowId));
    await subscribers.savePreference(d.db, {
      id: newObjectId(d.clock.now()),
      organizationId: tenant.organizationId,
      environmentId: tenant.environmentId,
      subscriberRef: subscriber.id,
      workflowId,
      preference: next,
      now: isoNow(d.clock),
    });
    return next;
  });
}

/**
 * The subscriber's preference for one workflow: `enabled` (the whole workflow) and/or one channel.
 * A critical workflow cannot be turned off (400).
 */
export async function updateWorkflowPreference(
  deps: Deps,
  tenant: Tenant,
  subscriberId: string,
  workflowId: string,
  input: UpdatePreferenceInput,
): Promise<WorkflowPreferenceResource> {
  if (input.enabled === undefined && input.channel === undefined) {
    throw badRequest("Send enabled, channel or both: there is nothing to change");
  }
  await requireSubscriber(deps, tenant, subscriberId);
  const workflow = await getWorkflowSummary(deps, tenant, workflowId);
  if (workflow.critical && (input.enabled === false || input.channel?.enabled === false)) {
    throw criticalRefusal(workflow);
  }
  const saved = await changePreference(deps, tenant, subscriberId, workflow.id, (current) => {
    const channels: ChannelPreferences = { ...(current?.channels ?? {}) };
    if (input.channel) channels[input.channel.type] = input.channel.enabled;
    return { enabled: input.enabled ?? current?.enabled ?? true, channels };
  });
  return presentWorkflowPreference(workflow, saved);
}

/** The subscriber's global preference: `enabled` (everything) and/or channels. */
export async function updateGlobalPreference(
  deps: Deps,
  tenant: Tenant,
  subscriberId: string,
  input: UpdateGlobalPreferenceInput,
): Promise<GlobalPreferenceResource> {
  const saved = await changePreference(deps, tenant, subscriberId, "", (current) => {
    const channels: ChannelPreferences = { ...(current?.channels ?? {}) };
    for (const preference of input.preferences ?? []) channels[preference.type] = preference.enabled;
    return { ...current, enabled: input.enabled ?? current?.enabled ?? true, channels };
  });
  return presentGlobalPreference(saved);
}

// ---------------------------------------------------------------- preferences: the inbox

export type Criticality = "critical" | "nonCritical" | "all";

/** Which workflows the inbox's preference listing shows. */
export interface InboxPreferenceFilter {
  /** Workflows with any of these tags; all when absent or empty. */
  tags?: readonly string[] | undefined;
  /** Workflows of any of these severities; all when absent or empty. */
  severities?: readonly string[] | undefined;
  /** `nonCritical` (the default), `critical`, or `all`. */
  criticality?: Criticality | undefined;
}

/**
 * A preference as the inbox shows it: the channels are only those it can turn off (for a workflow,
 * the ones its active steps use; globally, the ones any active workflow uses), each with its value.
 */
export interface InboxGlobalPreference {
  enabled: boolean;
  channels: Partial<Record<Channel, boolean>>;
  schedule?: Schedule | undefined;
}

export interface InboxWorkflowPreference {
  workflow: WorkflowSummary;
  enabled: boolean;
  channels: Partial<Record<Channel, boolean>>;
  /** What decided each channel shown: the subscriber's own choice, or the workflow's settings. */
  overrides: { channel: Channel; source: "subscriber" | "template" }[];
}

function inboxGlobal(
  preference: Preference | undefined,
  channels: readonly Channel[],
): InboxGlobalPreference {
  const shown: Partial<Record<Channel, boolean>> = {};
  for (const channel of CHANNELS) {
    if (channels.includes(channel)) shown[channel] = preference?.channels[channel] ?? true;
  }
  const view: InboxGlobalPreference = { enabled: preference?.enabled ?? true, channels: shown };
  if (preference?.schedule) view.schedule = preference.schedule;
  return view;
}

function inboxWorkflow(
  workflow: WorkflowSummary,
  preference: Preference | undefined,
): InboxWorkflowPreference {
  const effective = effectiveWorkflowPreference({
    critical: workflow.critical,
    preferenceSettings: workflow.preferenceSettings,
    workflow: preference,
  });
  const channels: Partial<Record<Channel, boolean>> = {};
  for (const channel of workflow.channels) channels[channel] = effective.channels[channel];
  const overrides = workflow.channels.map((channel) => ({
    channel,
    source:
      !workflow.critical && preference?.channels[channel] !== undefined
        ? ("subscriber" as const)
        : ("template" as const),
  }));
  return { workflow, enabled: effective.enabled, channels, overrides };
}

const channelsUsed = (workflows: readonly WorkflowSummary[]) => [
  ...new Set(workflows.flatMap((workflow) => workflow.channels)),
];

function matches(workflow: WorkflowSummary, filter: InboxPreferenceFilter): boolean {
  const criticality = filter.criticality ?? "nonCritical";
  if (criticality === "critical" && !workflow.critical) return false;
  if (criticality === "nonCritical" && workflow.critical) return false;
  const severities = filter.severities ?? [];
  if (severities.length > 0 && !severities.includes(workflow.severity)) return false;
  const tags = filter.tags ?? [];
  return tags.length === 0 || tags.some((tag) => workflow.tags.includes(tag));
}

/**
 * The inbox's preference listing: the global preference (with the schedule), then one per active
 * workflow the filter keeps, oldest first.
 */
export async function listInboxPreferences(
  deps: Deps,
  tenant: Tenant,
  subscriberId: string,
  filter: InboxPreferenceFilter,
): Promise<{ global: InboxGlobalPreference; workflows: InboxWorkflowPreference[] }> {
  const subscriber = await requireSubscriber(deps, tenant, subscriberId);
  const [workflows, preferences] = await Promise.all([
    listActiveWorkflows(deps, tenant),
    subscribers.findPreferences(deps.db, tenant.environmentId, subscriber.id),
  ]);
  return {
    global: inboxGlobal(preferences.get(""), channelsUsed(workflows)),
    workflows: workflows
      .filter((workflow) => matches(workflow, filter))
      .map((workflow) => inboxWorkflow(workflow, preferences.get(workflow.id))),
  };
}

export async function getInboxGlobalPreference(
  deps: Deps,
  tenant: Tenant,
  subscriberId: string,
): Promise<InboxGlobalPreference> {
  const subscriber = await requireSubscriber(deps, tenant, subscriberId);
  const [workflows, found] = await Promise.all([
    listActiveWorkflows(deps, tenant),
    subscribers.findPreferences(deps.db, tenant.environmentId, subscriber.id, [""]),
  ]);
  return inboxGlobal(found.get(""), channelsUsed(workflows));
}

/** A change of the global preference from the inbox: channels, the schedule, or both. */
export interface InboxGlobalChange {
  channels?: ChannelPreferences | undefined;
  schedule?: Schedule | undefined;
}

/**
 * Sets the channels sent and, when sent, the schedule: `isEnabled` always, the weekly schedule when
 * given (one left out is kept, so turning a schedule off and on again finds its hours).
 */
export async function updateInboxGlobalPreference(
  deps: Deps,
  tenant: Tenant,
  subscriberId: string,
  change: InboxGlobalChange,
): Promise<InboxGlobalPreference> {
  const errors: FieldError[] = [];
  const schedule = change.schedule ? readSchedule(change.schedule, "schedule.", errors) : undefined;
  throwIfAny(errors);
  const saved = await changePreference(deps, tenant, subscriberId, "", (current) => {
    const next: Preference = {
      ...current,
      enabled: current?.enabled ?? true,
      channels: { ...(current?.channels ?? {}), ...definedChannels(change.channels) },
    };
    if (schedule) {
      const weeklySchedule = schedule.weeklySchedule ?? current?.schedule?.weeklySchedule;
      next.schedule = weeklySchedule
        ? { isEnabled: schedule.isEnabled, weeklySchedule }
        : { isEnabled: schedule.isEnabled };
    }
    return next;
  });
  return inboxGlobal(saved, channelsUsed(await listActiveWorkflows(deps, tenant)));
}

/**
 * Sets the schedule a subscriber starts with (an inbox session's `defaultSchedule`) unless it has
 * one already: the subscriber's own choice always wins over the page's default.
 */
export async function applyDefaultSchedule(
  deps: Deps,
  tenant: Tenant,
  subscriberId: string,
  schedule: Schedule,
): Promise<void> {
  const errors: FieldError[] = [];
  const read = readSchedule(schedule, "defaultSchedule.", errors);
  throwIfAny(errors);
  await changePreference(deps, tenant, subscriberId, "", (current) =>
    current?.schedule
      ? current
      : { ...current, enabled: current?.enabled ?? true, channels: current?.channels ?? {}, schedule: read },
  );
}

function definedChannels(channels: ChannelPreferences | undefined): ChannelPreferences {
  const out: ChannelPreferences = {};
  for (const channel of CHANNELS) {
    const value = channels?.[channel];
    if (value !== undefined) out[channel] = value;
  }
  return out;
}

/** A change of one workflow's preference from the inbox: channels, and the whole workflow on or off. */
export interface InboxWorkflowChange {
  channels?: ChannelPreferences | undefined;
  enabled?: boolean | undefined;
}

const turnsOff = (change: InboxWorkflowChange) =>
  change.enabled === false || CHANNELS.some((channel) => change.channels?.[channel] === false);

/**
 * The subscriber's preference for one workflow (by _id or trigger identifier), changed as sent. A
 * critical workflow cannot be turned off (400), as through the API key's route.
 */
export async function updateInboxWorkflowPreference(
  deps: Deps,
  tenant: Tenant,
  subscriberId: string,
  workflowRef: string,
  change: InboxWorkflowChange,
): Promise<InboxWorkflowPreference> {
  await requireSubscriber(deps, tenant, subscriberId);
  const workflow = await getWorkflowSummary(deps, tenant, workflowRef);
  const [updated] = await writeInboxWorkflowPreferences(deps, tenant, subscriberId, [{ workflow, change }]);
  return updated as InboxWorkflowPreference;
}

/**
 * Writes several workflows' preferences in the caller's transaction (or one of its own), after
 * refusing any that would turn a critical workflow off: all are written or none.
 */
export async function writeInboxWorkflowPreferences(
  deps: Deps,
  tenant: Tenant,
  subscriberId: string,
  items: readonly { workflow: WorkflowSummary; change: InboxWorkflowChange }[],
): Promise<InboxWorkflowPreference[]> {
  const critical = items.find((item) => item.workflow.critical && turnsOff(item.change));
  if (critical) throw criticalRefusal(critical.workflow);
  return inTransaction(deps, async (d) => {
    const out: InboxWorkflowPreference[] = [];
    for (const { workflow, change } of items) {
      const saved = await changePreference(d, tenant, subscriberId, workflow.id, (current) => ({
        enabled: change.enabled ?? current?.enabled ?? true,
        channels: { ...(current?.channels ?? {}), ...definedChannels(change.channels) },
      }));
      out.push(inboxWorkflow(workflow, saved));
    }
    return out;
  });
}

// ---------------------------------------------------------------- for the engine

// Whether a timezone is one this runtime knows: a client that sends the browser's own (Novu's inbox
// does) may send a name the runtime lacks, which such a client would rather see ignored than refused.
export { isTimezone } from "./schedule.ts";
export type { CreateSubscriberInput };

/** The subscriber with our id (its `_id`), or undefined when it was deleted since. */
export function getSubscriberByRef(
  deps: Deps,
  tenant: Tenant,
  subscriberRef: string,
): Promise<Subscriber | undefined> {
  return subscribers.findSubscriberById(deps.db, tenant.environmentId, subscriberRef);
}

/**
 * The subscribers with our ids `subscriberRefs` (those that still exist), by id: one read for a page
 * of them. With `hold`, a delete of one waits for the caller's transaction (PostgreSQL).
 */
export function getSubscribersByRefs(
  deps: Deps,
  tenant: Tenant,
  subscriberRefs: readonly string[],
  options: { hold?: boolean } = {},
): Promise<Map<string, Subscriber>> {
  return subscribers.findSubscribersByIds(deps.db, tenant.environmentId, subscriberRefs, options);
}

/**
 * One page of the environment's subscribers for a broadcast: up to `limit` of our ids after the
 * cursor `after` ("" for the first page), and the next cursor ("" after the last page). Keyset
 * pagination on the primary key, so memory stays flat however many subscribers there are.
 */
export async function pageSubscriberRefs(
  deps: Deps,
  tenant: Tenant,
  page: { after?: string; limit: number },
): Promise<{ refs: string[]; next: string }> {
  const refs = await subscribers.pageSubscriberIds(
    deps.db,
    tenant.environmentId,
    page.after ?? "",
    page.limit,
  );
  const last = refs.at(-1);
  return { refs, next: refs.length === page.limit && last ? last : "" };
}
