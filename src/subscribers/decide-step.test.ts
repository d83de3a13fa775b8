import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { PreferenceSettings } from "../workflows/domain.ts";
import type { Preference } from "./domain.ts";
import { decideStep, effectiveWorkflowPreference, type PreferenceContext } from "./service.ts";

const allOn: PreferenceSettings = { email: true, sms: true, in_app: true, chat: true, push: true };
const emailOff: PreferenceSettings = { ...allOn, email: false };
const on = (channels: Preference["channels"] = {}): Preference => ({ enabled: true, channels });
const off = (channels: Preference["channels"] = {}): Preference => ({ enabled: false, channels });
const weekdays = Object.fromEntries(
  ["monday", "tuesday", "wednesday", "thursday", "friday"].map((day) => [
    day,
    { isEnabled: true, hours: [{ start: "09:00 AM", end: "05:00 PM" }] },
  ]),
);
const scheduled: Preference = { ...on(), schedule: { isEnabled: true, weeklySchedule: weekdays } };
const EVENING = Date.UTC(2026, 5, 1, 20);
const MORNING = Date.UTC(2026, 5, 1, 10);

interface Case {
  name: string;
  step: string;
  context: PreferenceContext;
  run: boolean;
  reason: RegExp;
}

// docs/engine.md, "Subscribers, topics and preferences", in order: critical → send; global off (all or the
// channel) → skip; the subscriber's workflow preference → its value; else the workflow's preferenceSettings.
// Steps that are not channels always run.
const cases: Case[] = [
  {
    name: "nothing set: the workflow's settings (on)",
    step: "email",
    context: { critical: false, preferenceSettings: allOn },
    run: true,
    reason: /preference settings have email on/,
  },
  {
    name: "nothing set: the workflow's settings (off)",
    step: "email",
    context: { critical: false, preferenceSettings: emailOff },
    run: false,
    reason: /preference settings have email off/,
  },
  {
    name: "critical sends even when everything the subscriber set says no",
    step: "email",
    context: {
      critical: true,
      preferenceSettings: emailOff,
      global: off({ email: false }),
      workflow: off({ email: false }),
    },
    run: true,
    reason: /critical/,
  },
  {
    name: "global enabled:false skips, whatever the workflow preference",
    step: "in_app",
    context: { critical: false, preferenceSettings: allOn, global: off(), workflow: on({ in_app: true }) },
    run: false,
    reason: /all notifications off/,
  },
  {
    name: "global channel off skips that channel over a workflow preference that turns it on",
    step: "sms",
    context: {
      critical: false,
      preferenceSettings: allOn,
      global: on({ sms: false }),
      workflow: on({ sms: true }),
    },
    run: false,
    reason: /sms channel off/,
  },
  {
    name: "global channel off leaves the other channels alone",
    step: "email",
    context: { critical: false, preferenceSettings: allOn, global: on({ sms: false }) },
    run: true,
    reason: /preference settings have email on/,
  },
  {
    name: "global channel on does not override the workflow's settings turning it off",
    step: "email",
    context: { critical: false, preferenceSettings: emailOff, global: on({ email: true }) },
    run: false,
    reason: /preference settings have email off/,
  },
  {
    name: "workflow preference enabled:false skips",
    step: "chat",
    context: { critical: false, preferenceSettings: allOn, workflow: off() },
    run: false,
    reason: /turned this workflow off/,
  },
  {
    name: "workflow preference for the channel turns on what the settings turn off",
    step: "email",
    context: { critical: false, preferenceSettings: emailOff, workflow: on({ email: true }) },
    run: true,
    reason: /turned email on for this workflow/,
  },
  {
    name: "workflow preference for the channel turns off what the settings turn on",
    step: "push",
    context: { critical: false, preferenceSettings: allOn, workflow: on({ push: false }) },
    run: false,
    reason: /turned push off for this workflow/,
  },
  {
    name: "workflow preference without this channel defers to the settings",
    step: "email",
    context: { critical: false, preferenceSettings: emailOff, workflow: on({ sms: true }) },
    run: false,
    reason: /preference settings have email off/,
  },
  {
    name: "a delay step runs whatever the preferences",
    step: "delay",
    context: { critical: false, preferenceSettings: emailOff, global: off(), workflow: off() },
    run: true,
    reason: /delay steps do not depend on preferences/,
  },
  {
    name: "a digest step runs whatever the preferences",
    step: "digest",
    context: { critical: false, preferenceSettings: allOn, global: off() },
    run: true,
    reason: /digest steps/,
  },
  {
    name: "a custom step runs whatever the preferences",
    step: "custom",
    context: { critical: false, preferenceSettings: allOn, global: off() },
    run: true,
    reason: /custom steps/,
  },
  // The weekly schedule: Monday 1 June 2026 at 20:00 UTC is outside 9-to-5 in UTC, inside it in Los Angeles.
  {
    name: "an email step outside the subscriber's schedule skips",
    step: "email",
    context: { critical: false, preferenceSettings: allOn, global: scheduled, now: EVENING, timezone: "UTC" },
    run: false,
    reason: /outside the subscriber's schedule/,
  },
  ...(["sms", "chat", "push"] as const).map((step) => ({
    name: `a ${step} step outside the schedule skips too`,
    step,
    context: { critical: false, preferenceSettings: allOn, global: scheduled, now: EVENING, timezone: "UTC" },
    run: false,
    reason: /outside the subscriber's schedule/,
  })),
  {
    name: "an in-app step outside the schedule is delivered: the inbox is not an interruption",
    step: "in_app",
    context: { critical: false, preferenceSettings: allOn, global: scheduled, now: EVENING, timezone: "UTC" },
    run: true,
    reason: /preference settings have in_app on/,
  },
  {
    name: "a critical workflow's step outside the schedule is delivered",
    step: "email",
    context: { critical: true, preferenceSettings: allOn, global: scheduled, now: EVENING, timezone: "UTC" },
    run: true,
    reason: /critical/,
  },
  {
    name: "a delay outside the schedule runs",
    step: "delay",
    context: { critical: false, preferenceSettings: allOn, global: scheduled, now: EVENING, timezone: "UTC" },
    run: true,
    reason: /delay steps/,
  },
  {
    name: "the schedule is read on the subscriber's clocks: 13:00 in Los Angeles is inside",
    step: "email",
    context: {
      critical: false,
      preferenceSettings: allOn,
      global: scheduled,
      now: EVENING,
      timezone: "America/Los_Angeles",
    },
    run: true,
    reason: /preference settings have email on/,
  },
  {
    name: "a schedule that is off holds nothing back",
    step: "email",
    context: {
      critical: false,
      preferenceSettings: allOn,
      global: { ...scheduled, schedule: { isEnabled: false, weeklySchedule: weekdays } },
      now: EVENING,
      timezone: "UTC",
    },
    run: true,
    reason: /preference settings have email on/,
  },
  {
    name: "without a moment (a listing) no schedule applies",
    step: "email",
    context: { critical: false, preferenceSettings: allOn, global: scheduled },
    run: true,
    reason: /preference settings have email on/,
  },
  {
    name: "inside the schedule, the global preference still decides next",
    step: "email",
    context: {
      critical: false,
      preferenceSettings: allOn,
      global: { ...scheduled, enabled: false },
      now: MORNING,
    },
    run: false,
    reason: /all notifications off/,
  },
  // The topic subscription the notification came through: it can only turn steps off.
  {
    name: "a subscription that turned the workflow off skips",
    step: "email",
    context: { critical: false, preferenceSettings: allOn, subscription: off() },
    run: false,
    reason: /topic subscription turned this workflow off/,
  },
  {
    name: "a subscription that turned the channel off skips that channel",
    step: "in_app",
    context: { critical: false, preferenceSettings: allOn, subscription: on({ in_app: false }) },
    run: false,
    reason: /topic subscription turned the in_app channel off/,
  },
  {
    name: "a subscription's channel turned off leaves the others to the next rules",
    step: "email",
    context: { critical: false, preferenceSettings: allOn, subscription: on({ in_app: false }) },
    run: true,
    reason: /preference settings have email on/,
  },
  {
    name: "a subscription turning a channel on does not override the subscriber's workflow preference",
    step: "email",
    context: {
      critical: false,
      preferenceSettings: allOn,
      subscription: on({ email: true }),
      workflow: on({ email: false }),
    },
    run: false,
    reason: /turned email off for this workflow/,
  },
  {
    name: "the global preference comes before the subscription",
    step: "sms",
    context: { critical: false, preferenceSettings: allOn, global: on({ sms: false }), subscription: off() },
    run: false,
    reason: /turned the sms channel off$/,
  },
  {
    name: "a critical workflow is delivered whatever the subscription says",
    step: "in_app",
    context: { critical: true, preferenceSettings: allOn, subscription: off({ in_app: false }) },
    run: true,
    reason: /critical/,
  },
];

describe("decideStep: may a step run for a subscriber", () => {
  for (const c of cases) {
    test(c.name, () => {
      const decision = decideStep(c.step, c.context);
      assert.equal(decision.run, c.run);
      assert.match(decision.reason, c.reason);
    });
  }
});

describe("effectiveWorkflowPreference: what the preference listing shows", () => {
  test("the subscriber's channels over the workflow's settings; enabled unless turned off", () => {
    assert.deepEqual(
      effectiveWorkflowPreference({
        critical: false,
        preferenceSettings: { ...allOn, sms: false, push: false },
        workflow: on({ sms: true, email: false }),
      }),
      { enabled: true, channels: { email: false, sms: true, in_app: true, chat: true, push: false } },
    );
    assert.deepEqual(
      effectiveWorkflowPreference({ critical: false, preferenceSettings: allOn, workflow: off() }),
      {
        enabled: false,
        channels: allOn,
      },
    );
  });

  test("a critical workflow shows on, with every channel, whatever was stored", () => {
    assert.deepEqual(
      effectiveWorkflowPreference({
        critical: true,
        preferenceSettings: emailOff,
        workflow: off({ chat: false }),
      }),
      { enabled: true, channels: allOn },
    );
  });
});
