import assert from "node:assert/strict";
import { test } from "node:test";
import { controlValuesOf, stepDraftOf, type V2StepType } from "./controls.ts";
import type { Step } from "./domain.ts";
import { normalizeSteps } from "./steps.ts";

/** A stored step, as v1 makes it. */
const stored = (template: Step["template"], metadata: Record<string, unknown> = {}, name?: string): Step => {
  const [step] = normalizeSteps([{ ...(name ? { name } : {}), template, metadata } as never]);
  return step as Step;
};

/** A v2 write of control values into `previous` (or a new step): its template and metadata. */
function write(type: V2StepType, controlValues: Record<string, unknown> | undefined, previous?: Step) {
  const { draft, errors } = stepDraftOf(
    { name: previous?.name ?? type, type, controlValues },
    previous,
    "steps[0]",
  );
  const [step] = normalizeSteps([draft], previous ? [previous] : []);
  return { step: step as Step, errors };
}

test("each step type: the control values read from a step write back the same step", () => {
  const steps = [
    stored({
      type: "in_app",
      content: "Hi {{name}}",
      subject: "S",
      avatar: "https://a/b.png",
      data: { k: "v" },
      cta: {
        type: "redirect",
        data: { url: "/x", target: "_blank" },
        action: {
          buttons: [
            { type: "primary", content: "Go", url: "/go" },
            { type: "secondary", content: "Later" },
          ],
        },
      },
    }),
    stored({ type: "email", subject: "Hello", content: "<p>Hi</p>", preheader: "Pre", senderName: "Team" }),
    stored({ type: "sms", content: "Code {{code}}" }),
    stored({ type: "chat", content: "Deployed" }),
    stored({ type: "push", title: "T", content: "B" }),
    stored({ type: "delay" }, { amount: 5, unit: "minutes" }),
    stored(
      { type: "digest" },
      {
        amount: 1,
        unit: "hours",
        digestKey: "post",
        type: "backoff",
        backoff: true,
        backoffAmount: 2,
        backoffUnit: "minutes",
      },
    ),
    stored({ type: "custom", anything: { deep: [1] } }),
  ];
  for (const step of steps) {
    const type = step.template.type as V2StepType;
    const values = controlValuesOf(step);
    const fresh = write(type, values);
    assert.deepEqual(fresh.errors, [], type);
    assert.deepEqual(fresh.step.template, step.template, `${type}: a new step from the control values`);
    assert.deepEqual(fresh.step.metadata, step.metadata, `${type}: its timing`);
    assert.deepEqual(controlValuesOf(fresh.step), values, type);
  }
});

test("control values equal to what a step shows keep what v2 cannot show; others are written", () => {
  const blocks = stored({
    type: "email",
    subject: "News",
    content: [
      { type: "text", content: "Hello" },
      { type: "button", content: "Open", url: "https://example.com" },
    ],
  });
  const shown = controlValuesOf(blocks);
  assert.equal(shown.body, '<p>Hello</p>\n<p><a href="https://example.com">Open</a></p>');
  assert.deepEqual(write("email", { ...shown, editorType: "block" }, blocks).step.template, blocks.template);
  assert.deepEqual(
    write("email", { ...shown, body: "<p>New</p>" }, blocks).step.template.content,
    "<p>New</p>",
  );

  // A button's target and the template's other fields stay through a change of the body.
  const inApp = stored({
    type: "in_app",
    content: "Before",
    custom: "kept",
    cta: {
      type: "redirect",
      data: {},
      action: { buttons: [{ type: "primary", content: "Go", url: "/go", target: "_top" }] },
    },
  });
  const changed = write("in_app", { ...controlValuesOf(inApp), body: "After" }, inApp).step.template;
  assert.equal(changed.content, "After");
  assert.equal(changed.custom, "kept");
  assert.deepEqual(changed.cta, inApp.template.cta);
  // null removes a control value; left out, the step's content stays as it is.
  assert.equal(
    (write("in_app", { body: "After", primaryAction: null }, inApp).step.template.cta as { action?: unknown })
      .action,
    undefined,
  );
  assert.deepEqual(write("in_app", undefined, inApp).step.template, inApp.template);
});

test("a scheduled delay keeps its payload path when the SDK leaves it out; an amount makes it regular", () => {
  const scheduled = stored({ type: "delay" }, { type: "scheduled", delayPath: "sendAt" });
  assert.deepEqual(controlValuesOf(scheduled), { dynamicKey: "sendAt" });
  // What @novu/api sends back: its own default type, without the control value it does not know.
  assert.deepEqual(write("delay", { type: "regular" }, scheduled).step.metadata, scheduled.metadata);
  const regular = write("delay", { type: "regular", amount: 2, unit: "hours" }, scheduled).step.metadata;
  assert.deepEqual(
    [regular.type, regular.amount, regular.unit, regular.delayPath],
    ["regular", 2, "hours", undefined],
  );
  assert.equal(write("delay", { dynamicKey: "at" }).step.metadata.delayPath, "at");
});

test("what a control value cannot be is named, by step and control", () => {
  const { errors } = stepDraftOf(
    {
      name: "x",
      type: "delay",
      controlValues: { type: "timed", cron: "* * * * *", unit: "fortnights", amount: "5", extra: 1 },
    },
    undefined,
    "steps[2]",
  );
  assert.deepEqual(
    errors.map((e) => e.field),
    [
      "steps[2].controlValues.extra",
      "steps[2].controlValues.type",
      "steps[2].controlValues.amount",
      "steps[2].controlValues.unit",
      "steps[2].controlValues.cron",
    ],
  );
  const email = stepDraftOf(
    { name: "m", type: "email", controlValues: { subject: 5, from: { email: "a@b" } } },
    undefined,
    "s",
  );
  assert.deepEqual(
    email.errors.map((e) => `${e.field} ${e.message}`),
    [
      "s.controlValues.subject must be a string",
      "s.controlValues.from email is not supported: an email step sends from its integration's address",
    ],
  );
});
