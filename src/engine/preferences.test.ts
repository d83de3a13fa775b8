import assert from "node:assert/strict";
import { test } from "node:test";
import { CHANNELS, type Channel, type PreferenceSettings, type StepType } from "../workflows/domain.ts";
import { STEP_TYPES } from "../workflows/enums.ts";
import { type ChannelPreferenceInput, channelAllowed, isChannelStep } from "./preferences.ts";

const allOn: PreferenceSettings = { email: true, sms: true, in_app: true, chat: true, push: true };
const emailOff: PreferenceSettings = { ...allOn, email: false };

test("isChannelStep: channel steps name their channel, the others none", () => {
  const expected: Record<StepType, Channel | undefined> = {
    in_app: "in_app",
    email: "email",
    sms: "sms",
    chat: "chat",
    push: "push",
    digest: undefined,
    delay: undefined,
    trigger: undefined,
    custom: undefined,
  };
  for (const type of STEP_TYPES) assert.equal(isChannelStep(type), expected[type], type);
});

test("channelAllowed: the resolution order, first rule that decides wins", () => {
  const cases: { label: string; input: ChannelPreferenceInput; allowed: boolean; reason: RegExp }[] = [
    {
      label: "nothing set: the workflow's default (on)",
      input: { workflow: { critical: false, preferenceSettings: allOn }, channel: "email" },
      allowed: true,
      reason: /workflow's default for email is on/,
    },
    {
      label: "nothing set: the workflow's default (off)",
      input: { workflow: { critical: false, preferenceSettings: emailOff }, channel: "email" },
      allowed: false,
      reason: /workflow's default for email is off/,
    },
    {
      label: "the workflow default of another channel does not leak",
      input: { workflow: { critical: false, preferenceSettings: emailOff }, channel: "sms" },
      allowed: true,
      reason: /default for sms is on/,
    },
    {
      label: "critical beats everything the subscriber turned off",
      input: {
        workflow: { critical: true, preferenceSettings: emailOff },
        globalPreference: { enabled: false, channels: { email: false } },
        workflowPreference: { enabled: false, channels: { email: false } },
        channel: "email",
      },
      allowed: true,
      reason: /critical/,
    },
    {
      label: "global off: skipped even when the workflow preference turns the channel on",
      input: {
        workflow: { critical: false, preferenceSettings: allOn },
        globalPreference: { enabled: false, channels: {} },
        workflowPreference: { enabled: true, channels: { email: true } },
        channel: "email",
      },
      allowed: false,
      reason: /turned off all notifications/,
    },
    {
      label: "global channel off: skipped even when the workflow preference turns it on",
      input: {
        workflow: { critical: false, preferenceSettings: allOn },
        globalPreference: { enabled: true, channels: { email: false } },
        workflowPreference: { enabled: true, channels: { email: true } },
        channel: "email",
      },
      allowed: false,
      reason: /turned off email for all workflows/,
    },
    {
      label: "global channel on does not override the workflow preference's off",
      input: {
        workflow: { critical: false, preferenceSettings: allOn },
        globalPreference: { enabled: true, channels: { email: true } },
        workflowPreference: { enabled: true, channels: { email: false } },
        channel: "email",
      },
      allowed: false,
      reason: /turned off email for this workflow/,
    },
    {
      label: "global channel on does not override the workflow's default off",
      input: {
        workflow: { critical: false, preferenceSettings: emailOff },
        globalPreference: { enabled: true, channels: { email: true } },
        channel: "email",
      },
      allowed: false,
      reason: /default for email is off/,
    },
    {
      label: "global off for another channel: this one goes on",
      input: {
        workflow: { critical: false, preferenceSettings: allOn },
        globalPreference: { enabled: true, channels: { sms: false } },
        channel: "email",
      },
      allowed: true,
      reason: /default for email is on/,
    },
    {
      label: "workflow preference disabled: skipped whatever its channels say",
      input: {
        workflow: { critical: false, preferenceSettings: allOn },
        workflowPreference: { enabled: false, channels: { email: true } },
        channel: "email",
      },
      allowed: false,
      reason: /turned off this workflow/,
    },
    {
      label: "workflow preference turns a channel on over the workflow's default off",
      input: {
        workflow: { critical: false, preferenceSettings: emailOff },
        workflowPreference: { enabled: true, channels: { email: true } },
        channel: "email",
      },
      allowed: true,
      reason: /turned on email for this workflow/,
    },
    {
      label: "workflow preference turns a channel off over the default on",
      input: {
        workflow: { critical: false, preferenceSettings: allOn },
        workflowPreference: { enabled: true, channels: { in_app: false } },
        channel: "in_app",
      },
      allowed: false,
      reason: /turned off in_app for this workflow/,
    },
    {
      label: "workflow preference silent on the channel: the workflow's default",
      input: {
        workflow: { critical: false, preferenceSettings: emailOff },
        workflowPreference: { enabled: true, channels: { sms: true } },
        channel: "email",
      },
      allowed: false,
      reason: /default for email is off/,
    },
  ];
  for (const c of cases) {
    const decision = channelAllowed(c.input);
    assert.equal(decision.allowed, c.allowed, c.label);
    assert.match(decision.reason, c.reason, c.label);
  }
});

test("channelAllowed: every channel reads its own setting", () => {
  for (const channel of CHANNELS) {
    const onlyThisOff = { ...allOn, [channel]: false };
    const input = { workflow: { critical: false, preferenceSettings: onlyThisOff }, channel };
    assert.equal(channelAllowed(input).allowed, false, channel);
    for (const other of CHANNELS.filter((c) => c !== channel)) {
      assert.equal(
        channelAllowed({ ...input, channel: other }).allowed,
        true,
        `${other} with ${channel} off`,
      );
    }
  }
});
