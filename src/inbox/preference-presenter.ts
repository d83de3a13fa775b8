import type { Static } from "typebox";
import type { InboxGlobalPreference, InboxWorkflowPreference } from "../subscribers/service.ts";
import type { SubscriptionPreference, TopicSubscription } from "../topics/domain.ts";
import type { SubscriptionView } from "../topics/service.ts";
import { CHANNELS, type Channel } from "../workflows/domain.ts";
import type { WorkflowSummary } from "../workflows/service.ts";
import type {
  InboxPreferenceResource,
  InboxWorkflow,
  SubscriberPreferencesV2,
  SubscriptionPreferenceSchema,
  SubscriptionSchema,
} from "./preference-schemas.ts";

export function presentInboxWorkflow(workflow: WorkflowSummary): Static<typeof InboxWorkflow> {
  return {
    id: workflow.id,
    identifier: workflow.identifier,
    name: workflow.name,
    critical: workflow.critical,
    tags: workflow.tags,
    severity: workflow.severity,
  };
}

export function presentGlobal(preference: InboxGlobalPreference): InboxPreferenceResource {
  const out: InboxPreferenceResource = {
    level: "global",
    enabled: preference.enabled,
    channels: preference.channels,
  };
  if (preference.schedule) out.schedule = preference.schedule;
  return out;
}

export function presentWorkflowPreference(preference: InboxWorkflowPreference): InboxPreferenceResource {
  return {
    level: "template",
    enabled: preference.enabled,
    channels: preference.channels,
    workflow: presentInboxWorkflow(preference.workflow),
  };
}

export function presentSubscriptionPreference(
  subscription: TopicSubscription,
  workflow: WorkflowSummary,
  preference: SubscriptionPreference,
): Static<typeof SubscriptionPreferenceSchema> {
  const channels = {} as Record<Channel, boolean>;
  for (const channel of CHANNELS) channels[channel] = preference.channels[channel] ?? true;
  const out: Static<typeof SubscriptionPreferenceSchema> = {
    // The identifier, not the id: the client files a preference under its subscription's identifier,
    // and names the subscription by it when it changes the preference.
    subscriptionId: subscription.identifier,
    workflow: presentInboxWorkflow(workflow),
    enabled: preference.enabled,
    channels,
  };
  if (preference.condition !== undefined) out.condition = preference.condition;
  return out;
}

export function presentSubscription(view: SubscriptionView): Static<typeof SubscriptionSchema> {
  const { subscription } = view;
  return {
    id: subscription.id,
    identifier: subscription.identifier,
    ...(subscription.name !== "" ? { name: subscription.name } : {}),
    preferences: view.preferences.map(({ workflow, preference }) =>
      presentSubscriptionPreference(subscription, workflow, preference),
    ),
  };
}

/** A subscriber's preferences as Novu's /v2 answers them (@novu/api's `subscribers.preferences`). */
export function presentSubscriberPreferences(found: {
  global: InboxGlobalPreference;
  workflows: InboxWorkflowPreference[];
}): Static<typeof SubscriberPreferencesV2> {
  const global: Static<typeof SubscriberPreferencesV2>["global"] = {
    enabled: found.global.enabled,
    channels: found.global.channels,
  };
  if (found.global.schedule) global.schedule = found.global.schedule;
  return {
    global,
    workflows: found.workflows.map((preference) => ({
      enabled: preference.enabled,
      channels: preference.channels,
      overrides: preference.overrides,
      workflow: {
        slug: `${preference.workflow.identifier}_wf_${preference.workflow.id}`,
        identifier: preference.workflow.identifier,
        name: preference.workflow.name,
      },
    })),
  };
}
