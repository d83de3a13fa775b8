import { isoNow } from "../clock.ts";
import { type Deps, inTransaction, secretsOf } from "../deps.ts";
import { badRequest, type FieldError, invalidField, notFound } from "../errors.ts";
import { newObjectId } from "../ids.ts";
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
import * as subscribers from "./repository.ts";
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
): Promise<Subscriber> {
  return (await upsertRecipient(deps, tenant, input)).subscriber;
}

/**
 * upsertSubscriber, also saying whether the subscriber was created: a trigger to a subscriberId
 * nobody made creates it (as Novu does), and its activity says so.
 */
export async function upsertRecipient(
  deps: Deps,
  tenant: Tenant,
  input: CreateSubscriberInput,
): Promise<{ subscriber: Subscriber; created: boolean }> {
  const errors: FieldError[] = [];
  const entry = readEntry(input, "", errors);
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
): Promise<BulkOutcome> {
  const outcome: BulkOutcome = { created: [], updated: [], failed: [] };
  const order: ({ subscriberId: string } | undefined)[] = [];
  const merged = new Map<string, Entry>();
  for (const input of inputs) {
    const errors: FieldError[] = [];
    const entry = readEntry(input, "", errors);
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
          chunk.map((e) => ({
            id: newObjectId(d.clock.now()),
            subscriberId: e.subscriberId,
            profile: e.profile,
          })),
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

/** A partial update: the fields sent change, the others keep their values. */
export async function updateSubscriber(
  deps: Deps,
  tenant: Tenant,
  subscriberId: string,
  input: UpdateSubscriberInput,
): Promise<Subscriber> {
  const errors: FieldError[] = [];
  const profile = readProfile(input, "", errors);
  const channels = input.channels ?? [];
  channels.forEach((channel, i) => {
    readCredentials(channel.credentials, `channels[${i}].credentials.`, errors);
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
): Promise<Subscriber> {
  const errors: FieldError[] = [];
  readCredentials(input.credentials, "credentials.", errors);
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

// ---------------------------------------------------------------- preferences: the decision

const CHANNEL_SET: ReadonlySet<string> = new Set(CHANNELS);

export function isChannelStep(stepType: string): stepType is Channel {
  return CHANNEL_SET.has(stepType);
}

/** What the decision needs: the workflow's rules and what the subscriber set. */
export interface PreferenceContext extends SubscriberPreferences {
  critical: boolean;
  preferenceSettings: PreferenceSettings;
}

export interface StepDecision {
  run: boolean;
  /** Why, in words for an execution detail. */
  reason: string;
}

/**
 * Whether a step may run for a subscriber (docs/engine.md, "Subscribers, topics and preferences"), in this
 * order: a step that is not a channel (delay, digest...) runs; a critical workflow sends; the subscriber's
 * global preference turning everything or this channel off skips; the subscriber's preference for the
 * workflow (off altogether, or its value for the channel) decides; else the workflow's preferenceSettings.
 */
export function decideStep(stepType: string, context: PreferenceContext): StepDecision {
  if (!isChannelStep(stepType))
    return { run: true, reason: `${stepType} steps do not depend on preferences` };
  const channel = stepType;
  if (context.critical) return { run: true, reason: "the workflow is critical" };
  if (context.global?.enabled === false)
    return { run: false, reason: "the subscriber turned all notifications off" };
  if (context.global?.channels[channel] === false)
    return { run: false, reason: `the subscriber turned the ${channel} channel off` };
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
  return { global: found.get(""), workflow: found.get(workflowId) };
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
    preference: effectiveWorkflowPreference({
      critical: workflow.critical,
      preferenceSettings: workflow.preferenceSettings,
      workflow: preference,
    }),
  };
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
    return { enabled: input.enabled ?? current?.enabled ?? true, channels };
  });
  return presentGlobalPreference(saved);
}

// ---------------------------------------------------------------- for the engine

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
