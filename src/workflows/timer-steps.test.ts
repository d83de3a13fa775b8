import assert from "node:assert/strict";
import { test } from "node:test";
import { assertErrorBody } from "../../test/error-body.ts";
import { uniqueName } from "../../test/factories.ts";
import { forEachBackend } from "../../test/harness.ts";

// Delay and digest steps at save time (docs/engine.md, "Delays and digests"): a scheduled delay's delayPath
// is saved and returned; a wait that could not run is a 400 naming the field, on create and on update.

forEachBackend("workflows: delay and digest metadata", (ctx) => {
  test("a scheduled delay's delayPath is saved, returned, and kept by an update", async () => {
    const { dev } = await ctx.tenant();
    const api = ctx.client(dev.apiKey);
    const created = await api.post("/v1/workflows", {
      name: uniqueName("Scheduled"),
      notificationGroupId: dev.generalGroupId,
      steps: [
        { template: { type: "delay" }, metadata: { type: "scheduled", delayPath: "meeting.startsAt" } },
        { template: { type: "in_app", content: "Starting" } },
      ],
    });
    assert.equal(created.statusCode, 201, created.body);
    const workflow = created.json().data;
    assert.equal(workflow.steps[0].metadata.delayPath, "meeting.startsAt");
    assert.equal(workflow.steps[0].metadata.type, "scheduled");
    assert.equal("delayPath" in workflow.steps[1].metadata, false, "only where it was given");
    const read = await api.get(`/v1/workflows/${workflow._id}`);
    assert.equal(read.json().data.steps[0].metadata.delayPath, "meeting.startsAt");
    const updated = await api.put(`/v1/workflows/${workflow._id}`, {
      steps: [
        {
          _id: workflow.steps[0]._id,
          template: { type: "delay" },
          metadata: { type: "scheduled", delayPath: "sendAt" },
        },
      ],
    });
    assert.equal(updated.statusCode, 200, updated.body);
    assert.equal(updated.json().data.steps[0].metadata.delayPath, "sendAt");
  });

  test("a delay or digest that could not run is a 400 naming each field, and nothing is saved", async () => {
    const { dev } = await ctx.tenant();
    const api = ctx.client(dev.apiKey);
    const delay = (metadata?: Record<string, unknown>) => ({
      template: { type: "delay" },
      ...(metadata ? { metadata } : {}),
    });
    const digest = (metadata: Record<string, unknown>) => ({ template: { type: "digest" }, metadata });
    const cases: [Record<string, unknown>[], string[], RegExp][] = [
      [
        [delay()],
        ["steps[0].metadata.amount"],
        /^steps\[0\]\.metadata\.amount must be a positive whole number/,
      ],
      [[delay({ amount: 0, unit: "minutes" })], ["steps[0].metadata.amount"], /positive whole number/],
      [[delay({ amount: -1, unit: "minutes" })], ["steps[0].metadata.amount"], /./],
      [[delay({ amount: 1.5, unit: "minutes" })], ["steps[0].metadata.amount"], /./],
      [[delay({ amount: 5, unit: "fortnights" })], ["steps[0].metadata.unit"], /./],
      [[delay({ amount: 1_000_000_000, unit: "weeks" })], ["steps[0].metadata.amount"], /at most 100 years/],
      [
        [delay({ type: "scheduled" })],
        ["steps[0].metadata.delayPath"],
        /delayPath must name the payload field/,
      ],
      [[delay({ type: "scheduled", delayPath: "  " })], ["steps[0].metadata.delayPath"], /./],
      [
        [delay({ type: "timed", amount: 1, unit: "hours" })],
        ["steps[0].metadata.type"],
        /regular or scheduled/,
      ],
      [[digest({ unit: "minutes" })], ["steps[0].metadata.amount"], /for a digest step/],
      [[digest({ amount: 5, unit: "aeons" })], ["steps[0].metadata.unit"], /./],
      [
        [digest({ amount: 5, unit: "minutes", backoff: true })],
        ["steps[0].metadata.backoffAmount"],
        /backoffAmount must be a positive whole number when backoff is on/,
      ],
      [
        [digest({ amount: 5, unit: "minutes", backoff: true, backoffAmount: 0 })],
        ["steps[0].metadata.backoffAmount"],
        /when backoff is on/,
      ],
      [[digest({ amount: 5, unit: "minutes", type: "backoff" })], ["steps[0].metadata.backoffAmount"], /./],
      [
        [digest({ amount: 5, unit: "minutes", type: "timed" })],
        ["steps[0].metadata.type"],
        /regular or backoff/,
      ],
      [
        [{ template: { type: "in_app", content: "Hi {{name" } }, delay(), digest({ backoff: true })],
        [
          "steps[0].template.content",
          "steps[1].metadata.amount",
          "steps[2].metadata.amount",
          "steps[2].metadata.backoffAmount",
        ],
        /^steps\[0\]\.template\.content does not compile/,
      ],
    ];
    for (const [steps, fields, message] of cases) {
      const res = await api.post("/v1/workflows", {
        name: uniqueName("Bad timer"),
        notificationGroupId: dev.generalGroupId,
        steps,
      });
      assertErrorBody(res, 400, { path: "/v1/workflows", fields, message });
    }
    const list = await api.get("/v1/workflows");
    assert.equal(list.json().totalCount, 0, "no workflow was saved");

    // On update too, and the workflow stays as it was.
    const saved = await api.post("/v1/workflows", {
      name: uniqueName("Good timer"),
      notificationGroupId: dev.generalGroupId,
      steps: [
        digest({ amount: 5, unit: "minutes", backoff: true, backoffAmount: 1, backoffUnit: "minutes" }),
      ],
    });
    assert.equal(saved.statusCode, 201, saved.body);
    const id = saved.json().data._id;
    const res = await api.put(`/v1/workflows/${id}`, {
      steps: [digest({ amount: 5, unit: "minutes", backoff: true })],
    });
    assertErrorBody(res, 400, {
      path: `/v1/workflows/${id}`,
      fields: ["steps[0].metadata.backoffAmount"],
      message: /when backoff is on/,
    });
    assert.equal((await api.get(`/v1/workflows/${id}`)).json().data.steps[0].metadata.backoffAmount, 1);
  });
});
