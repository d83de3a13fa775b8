import type { Static } from "typebox";
import type { InboxGlobalPreference, InboxWorkflowPreference } from "../subscribers/service.ts";
import { presentInboxWorkflow } from "../topics/presenter.ts";
import type { InboxPreferenceResource, SubscriberPreferencesV2 } from "./preference-schemas.ts";

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
