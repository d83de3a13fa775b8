// The workflow editor's model (dashboard/src/views/workflow/model.ts), without a browser: what a save
// sends, how the page names steps in the API's messages and sums them up, that a field typed into and
// emptied again leaves no trace, and that the preview's control values read a step as the API does.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Workflow } from "../dashboard/src/types.ts";
import {
  controlValuesOf,
  draftOf,
  examplePayload,
  pageMessage,
  putIn,
  settingsOf,
  stepNamed,
  summary,
  updateBody,
} from "../dashboard/src/views/workflow/model.ts";
import { controlValuesOf as apiControlValues } from "../src/workflows/controls.ts";
import type { Step } from "../src/workflows/domain.ts";
import { normalizeSteps } from "../src/workflows/steps.ts";
import { buildTriggers } from "../src/workflows/triggers.ts";

const drafts: Record<string, unknown>[] = [
  {
    template: {
      type: "in_app",
      subject: "Order {{orderId}}",
      content: "Your order {{orderId}} shipped",
      avatar: "https://example.com/a.png",
      cta: {
        type: "redirect",
        data: { url: "https://example.com/o/{{orderId}}", target: "_blank" },
        action: {
          buttons: [
            { type: "primary", content: "Track", url: "https://example.com/t" },
            { type: "secondary", content: "Later" },
          ],
        },
      },
      data: { orderId: "{{orderId}}" },
    },
  },
  { template: { type: "in_app", content: "Plain" } },
  { template: { type: "delay" }, metadata: { type: "scheduled", delayPath: "deliverAt" } },
  { template: { type: "delay" }, metadata: { amount: 5, unit: "minutes" } },
  {
    template: { type: "digest" },
    metadata: {
      amount: 10,
      unit: "minutes",
      digestKey: "postId",
      backoff: true,
      backoffAmount: 1,
      backoffUnit: "minutes",
    },
  },
  {
    template: {
      type: "email",
      subject: "Shipped",
      preheader: "On its way",
      senderName: "Shop",
      content: [
        { type: "text", content: "Hello {{name}}" },
        { type: "button", content: "Track", url: "https://example.com/{{orderId}}" },
      ],
    },
  },
  { template: { type: "email", subject: "Plain", content: "<p>Hi</p>" } },
  { template: { type: "sms", content: "Shipped {{orderId}}" } },
  { template: { type: "chat", content: "Shipped" } },
  { template: { type: "push", title: "Shipped", content: "Order {{orderId}}" } },
  { template: { type: "custom", action: "sync" } },
  {
    template: { type: "throttle" },
    metadata: { amount: 10, unit: "minutes", threshold: 3, throttleKey: "comment.threadId" },
  },
  { template: { type: "throttle" }, metadata: { amount: 1, unit: "hours" } },
];
const steps = normalizeSteps(drafts as unknown as Parameters<typeof normalizeSteps>[0]);

// A workflow as GET /v1/workflows/:id answers it (the fields the editor reads).
const stored = {
  _id: "a".repeat(24),
  name: "Orders",
  description: "",
  severity: "none",
  critical: false,
  tags: ["a"],
  preferenceSettings: { email: true, sms: true, in_app: true, chat: true, push: true },
  data: { team: "x" },
  _notificationGroupId: "b".repeat(24),
  triggers: buildTriggers("orders", steps),
  steps: steps.map(({ stepId: _stepId, ...step }) => step),
} as unknown as Workflow;

describe("the workflow editor's model", () => {
  test("a save sends nothing unchanged: an empty body, one setting, or all steps when one changed", () => {
    const drafts = stored.steps.map(draftOf);
    assert.deepEqual(updateBody(stored, settingsOf(stored), drafts), {});
    assert.deepEqual(updateBody(stored, { ...settingsOf(stored), description: "New" }, drafts), {
      description: "New",
    });
    const edited = drafts.map((d, i) =>
      i === 3 ? { ...d, value: { ...d.value, metadata: { ...d.value.metadata, amount: 7 } } } : d,
    );
    const body = updateBody(stored, settingsOf(stored), edited);
    assert.deepEqual(Object.keys(body), ["steps"]);
    assert.deepEqual(body.steps?.[3]?.metadata?.amount, 7);
    assert.deepEqual(
      body.steps?.filter((_, i) => i !== 3),
      stored.steps.filter((_, i) => i !== 3),
    );
  });

  test("a field typed into and emptied again leaves the template as it was", () => {
    const plain = stored.steps[1]?.template as Record<string, unknown>;
    const typed = putIn(plain, ["cta", "data", "url"], "https://x", false, plain);
    assert.deepEqual(typed.cta, { data: { url: "https://x" } });
    assert.deepEqual(putIn(typed, ["cta", "data", "url"], "", true, plain), plain);
    // A field the stored step had is emptied, not removed.
    const rich = stored.steps[0]?.template as Record<string, unknown>;
    const emptied = putIn(rich, ["cta", "data", "url"], "", true, rich);
    assert.deepEqual((emptied.cta as { data: unknown }).data, { url: "", target: "_blank" });
  });

  test("the API's step paths read as the page's step numbers", () => {
    const message = "steps[2].metadata.amount must be a positive whole number for a delay step";
    assert.equal(pageMessage(message), "Step 3: amount must be a positive whole number for a delay step");
    assert.equal(stepNamed(message), 2);
    assert.equal(pageMessage("steps[0].template.content parse error"), "Step 1: content parse error");
    assert.equal(pageMessage("name must not be empty"), "name must not be empty");
    assert.equal(stepNamed("name must not be empty"), undefined);
  });

  test("each step in a line", () => {
    assert.deepEqual(
      stored.steps.map((s) => summary(s as Parameters<typeof summary>[0])),
      [
        "Your order {{orderId}} shipped",
        "Plain",
        "delay until payload.deliverAt",
        "delay 5 min",
        "digest by postId for 10 min · backoff 1 min",
        "Shipped",
        "Plain",
        "Shipped {{orderId}}",
        "Shipped",
        "Shipped",
        "1 template field",
        "throttle 3 per 10 min by comment.threadId",
        "throttle 1 per 1 hour",
      ],
    );
  });

  test("the test payload holds the variables, the digest and throttle keys and a scheduled delay's date", () => {
    const now = Date.parse("2030-01-01T00:00:00Z");
    assert.deepEqual(examplePayload(stored, now), {
      orderId: "",
      name: "",
      postId: "",
      deliverAt: "2030-01-01T00:01:00.000Z",
      comment: { threadId: "" },
    });
  });

  test("the preview's control values of a step are the API's reading of it", () => {
    for (const step of steps as Step[]) {
      if (!["in_app", "email", "sms", "chat", "push"].includes(step.template.type)) continue;
      assert.deepEqual(controlValuesOf(step.template), apiControlValues(step), step.template.type);
    }
  });
});
