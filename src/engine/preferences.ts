import type { Channel, PreferenceSettings, StepType } from "../workflows/domain.ts";

/** A subscriber's preference: the global one or the one for a workflow. */
export interface SubscriberPreference {
  enabled: boolean;
  channels: Partial<Record<Channel, boolean>>;
}

export interface ChannelPreferenceInput {
  workflow: { critical: boolean; preferenceSettings: PreferenceSettings };
  globalPreference?: SubscriberPreference | undefined;
  workflowPreference?: SubscriberPreference | undefined;
  channel: Channel;
}

export interface ChannelDecision {
  allowed: boolean;
  /** Why, in words for the step's execution detail. */
  reason: string;
}

const CHANNEL_OF_STEP: Partial<Record<StepType, Channel>> = {
  in_app: "in_app",
  email: "email",
  sms: "sms",
  chat: "chat",
  push: "push",
};

/**
 * The channel a step delivers on, or undefined for the steps that deliver nothing themselves
 * (delay, digest, trigger, custom): those always run, whatever the subscriber prefers.
 */
export function isChannelStep(type: StepType): Channel | undefined {
  return CHANNEL_OF_STEP[type];
}

/**
 * Whether a channel step may deliver to this subscriber (ENGINE.md part 2), first rule that decides
 * wins: a critical workflow always sends (a password reset must not be lost to a preference); the
 * global preference can only take away (all off, or this channel off), never force a channel on
 * that the workflow level turns off; then the subscriber's own choice for this workflow; then the
 * workflow's default.
 */
export function channelAllowed(input: ChannelPreferenceInput): ChannelDecision {
  const { workflow, globalPreference, workflowPreference, channel } = input;
  if (workflow.critical) return { allowed: true, reason: "critical workflow: preferences do not apply" };
  if (globalPreference?.enabled === false) {
    return { allowed: false, reason: "the subscriber turned off all notifications" };
  }
  if (globalPreference?.channels[channel] === false) {
    return { allowed: false, reason: `the subscriber turned off ${channel} for all workflows` };
  }
  if (workflowPreference?.enabled === false) {
    return { allowed: false, reason: "the subscriber turned off this workflow" };
  }
  const own = workflowPreference?.channels[channel];
  if (typeof own === "boolean") {
    return {
      allowed: own,
      reason: `the subscriber turned ${own ? "on" : "off"} ${channel} for this workflow`,
    };
  }
  const byDefault = workflow.preferenceSettings[channel];
  return {
    allowed: byDefault,
    reason: `the workflow's default for ${channel} is ${byDefault ? "on" : "off"}`,
  };
}
