// @novu/api 3.19's `workflows` and `workflows.steps` against the real server over a socket, on both
// backends: every function returns without throwing (the SDK checks every answer against its zod
// models), and each change is seen through another call (v1's reads, the SDK's own, a trigger).
import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import { before, test } from "node:test";
import { Novu } from "@novu/api";
import { createWorkflow, uniqueName } from "./factories.ts";
import { forEachBackend, type TestTenant } from "./harness.ts";
import { OBJECT_ID } from "./patterns.ts";
import { poll } from "./poll.ts";
import { drain } from "./queue-helpers.ts";

forEachBackend("@novu/api SDK: workflows (/v2/workflows)", (ctx) => {
  let serverURL = "";
  before(async () => {
    await ctx.app.listen({ host: "127.0.0.1", port: 0 });
    serverURL = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`;
  });
  const sdk = (secretKey: string) => new Novu({ secretKey, serverURL });
  const v1 = (tenant: TestTenant) => ctx.client(tenant.dev.apiKey);

  /** The feed's message contents for a subscriber, newest first. */
  const feed = async (apiKey: string, subscriberId: string) => {
    const res = await ctx.client(apiKey).get(`/v1/subscribers/${subscriberId}/notifications/feed?limit=50`);
    assert.equal(res.statusCode, 200, res.body);
    return (res.json().data as { content: string }[]).map((m) => m.content);
  };

  test("create, get, list, update (put), patch and delete; each seen through v1 and the SDK's other calls", async () => {
    const tenant = await ctx.tenant();
    const novu = sdk(tenant.dev.apiKey);
    const workflowId = `welcome-${Date.now()}`;

    const created = await novu.workflows.create({
      name: "Welcome",
      workflowId,
      description: "The first message",
      tags: ["onboarding"],
      active: true,
      severity: "high",
      steps: [
        {
          name: "In-app welcome",
          type: "in_app",
          controlValues: {
            subject: "Hi {{subscriber.firstName}}",
            body: "Welcome aboard, {{subscriber.firstName}}!",
            primaryAction: { label: "Start", redirect: { url: "/start", target: "_blank" } },
            redirect: { url: "/home" },
            data: { kind: "welcome" },
          },
        },
        { name: "Wait", type: "delay", controlValues: { type: "regular", amount: 1, unit: "hours" } },
        {
          name: "Welcome email",
          type: "email",
          controlValues: { subject: "Welcome", body: "<p>Hello {{name}}</p>" },
        },
      ],
      preferences: {
        user: { all: { enabled: true, readOnly: false }, channels: { email: { enabled: false } } },
      },
    });
    const workflow = created.result;
    assert.match(workflow.id, OBJECT_ID);
    assert.equal(workflow.workflowId, workflowId);
    assert.equal(workflow.status, "ACTIVE");
    assert.equal(workflow.severity, "high");
    assert.deepEqual(
      workflow.steps.map((s) => [s.stepId, s.type]),
      [
        ["in-app-welcome", "in_app"],
        ["wait", "delay"],
        ["welcome-email", "email"],
      ],
    );
    assert.equal(workflow.preferences.default.channels.email?.enabled, false);
    assert.equal(workflow.preferences.default.channels.in_app?.enabled, true);

    // The one workflow, seen through v1: its trigger identifier, its steps in the v1 shape, its group.
    const read = await v1(tenant).get(`/v1/workflows/${workflow.id}`);
    assert.equal(read.statusCode, 200, read.body);
    const v1Workflow = read.json().data;
    assert.equal(v1Workflow.triggers[0].identifier, workflowId);
    assert.equal(v1Workflow._notificationGroupId, tenant.dev.generalGroupId);
    assert.equal(v1Workflow.critical, false);
    assert.equal(v1Workflow.preferenceSettings.email, false);
    assert.deepEqual(v1Workflow.steps[0].template, {
      type: "in_app",
      subject: "Hi {{subscriber.firstName}}",
      content: "Welcome aboard, {{subscriber.firstName}}!",
      cta: {
        type: "redirect",
        data: { url: "/home" },
        action: { buttons: [{ type: "primary", content: "Start", url: "/start", target: "_blank" }] },
      },
      data: { kind: "welcome" },
    });
    assert.deepEqual([v1Workflow.steps[1].metadata.amount, v1Workflow.steps[1].metadata.unit], [1, "hours"]);
    assert.equal(v1Workflow.steps[2].template.content, "<p>Hello {{name}}</p>");
    assert.equal(v1Workflow.steps[0].stepId, undefined, "v1's shape has no stepId");

    // get, by _id and by workflowId, answers the same.
    const byId = (await novu.workflows.get(workflow.id)).result;
    const byIdentifier = (await novu.workflows.get(workflowId)).result;
    assert.deepEqual(byIdentifier, byId);
    assert.deepEqual(byId.steps[0]?.controlValues, workflow.steps[0]?.controlValues);

    // list: searched by name, filtered by status and tags.
    const listed = (await novu.workflows.list({ query: "welc", limit: 10 })).result;
    assert.equal(listed.totalCount, 1);
    assert.equal(listed.workflows[0]?.workflowId, workflowId);
    assert.deepEqual(listed.workflows[0]?.stepTypeOverviews, ["in_app", "delay", "email"]);
    assert.equal((await novu.workflows.list({ status: ["INACTIVE"] })).result.totalCount, 0);
    assert.equal((await novu.workflows.list({ tags: ["onboarding", "other"] })).result.totalCount, 1);
    assert.equal((await novu.workflows.list({ tags: ["other"] })).result.totalCount, 0);

    // update (PUT): the steps read back, one changed, one removed; the rest keeps what it had.
    const [inApp, , email] = byId.steps;
    assert.ok(inApp && email);
    const updated = (
      await novu.workflows.update(
        {
          name: "Welcome aboard",
          workflowId,
          active: true,
          tags: ["onboarding", "v2"],
          steps: [
            {
              id: inApp.id,
              name: inApp.name,
              type: "in_app",
              controlValues: { ...inApp.controlValues, body: "Hello again" },
            },
            { id: email.id, name: email.name, type: "email", controlValues: email.controlValues },
          ],
          preferences: { user: { all: { enabled: true, readOnly: true }, channels: {} } },
        },
        workflow.id,
      )
    ).result;
    assert.deepEqual(
      updated.steps.map((s) => [s.id, s.stepId]),
      [
        [inApp.id, "in-app-welcome"],
        [email.id, "welcome-email"],
      ],
    );
    assert.equal(updated.preferences.default.all.readOnly, true);
    const afterPut = (await v1(tenant).get(`/v1/workflows/${workflowId}`)).json().data;
    assert.equal(afterPut.name, "Welcome aboard");
    assert.equal(afterPut.critical, true);
    assert.equal(afterPut.preferenceSettings.email, false, "channels left out keep their defaults");
    assert.equal(afterPut.steps[0].template.content, "Hello again");
    assert.deepEqual(
      afterPut.steps[0].template.cta,
      v1Workflow.steps[0].template.cta,
      "the button kept its target",
    );
    assert.equal(afterPut.steps[0].uuid, v1Workflow.steps[0].uuid);

    // patch: the status, seen by a trigger that no longer delivers... and the list's status filter.
    const patched = (await novu.workflows.patch({ active: false, description: "Paused" }, workflowId)).result;
    assert.equal(patched.status, "INACTIVE");
    assert.equal(patched.name, "Welcome aboard");
    assert.equal((await novu.workflows.list({ status: ["INACTIVE"] })).result.totalCount, 1);
    assert.equal((await v1(tenant).get(`/v1/workflows/${workflowId}`)).json().data.description, "Paused");

    // delete: gone from v1 and from the SDK's get, which throws the 404.
    await novu.workflows.delete(workflow.id);
    assert.equal((await v1(tenant).get(`/v1/workflows/${workflow.id}`)).statusCode, 404);
    await assert.rejects(novu.workflows.get(workflow.id), (error: Error & { statusCode?: number }) => {
      assert.equal(error.statusCode, 404);
      return true;
    });
  });

  test("a workflow made through v1 reads through v2, is written back unchanged, and still reads the same through v1", async () => {
    const tenant = await ctx.tenant();
    const novu = sdk(tenant.dev.apiKey);
    const made = await createWorkflow(ctx, tenant.dev.apiKey, tenant.dev.generalGroupId, {
      name: uniqueName("Digest"),
      active: true,
      steps: [
        {
          name: "Only VIPs",
          template: { type: "in_app", content: "{{step.total_count}} new", senderName: "kept" },
          filters: [
            {
              isNegated: false,
              type: "BOOLEAN",
              value: "AND",
              children: [{ field: "vip", value: "true", operator: "EQUAL", on: "payload" }],
            },
          ],
        },
        {
          template: { type: "digest" },
          metadata: {
            amount: 5,
            unit: "minutes",
            digestKey: "postId",
            type: "backoff",
            backoff: true,
            backoffAmount: 1,
            backoffUnit: "minutes",
          },
        },
        { template: { type: "delay" }, metadata: { type: "scheduled", delayPath: "sendAt" } },
        {
          template: {
            type: "email",
            subject: "News",
            content: [
              { type: "text", content: "Hello" },
              { type: "button", content: "Open", url: "https://example.com" },
            ],
          },
        },
        { template: { type: "trigger" } },
      ],
    });
    const read = (await novu.workflows.get(made._id)).result;
    assert.deepEqual(
      read.steps.map((s) => [s.stepId, s.type]),
      [
        ["only-vips", "in_app"],
        ["digest", "digest"],
        ["delay", "delay"],
        ["email", "email"],
        ["trigger", "custom"],
      ],
    );
    assert.deepEqual(read.steps[1]?.controlValues, {
      type: "regular",
      amount: 5,
      unit: "minutes",
      digestKey: "postId",
      lookBackWindow: { amount: 1, unit: "minutes" },
    });
    // A scheduled delay's payload path: a control value the SDK does not know, kept apart.
    assert.deepEqual(read.steps[2]?.controlValues?.additionalProperties, { dynamicKey: "sendAt" });
    assert.deepEqual((read.steps[4]?.controlValues as Record<string, unknown> | undefined)?.custom, {});
    assert.equal(
      (read.steps[3]?.controlValues as Record<string, unknown> | undefined)?.body,
      '<p>Hello</p>\n<p><a href="https://example.com">Open</a></p>',
    );

    // Every step's id and controls written back as read: nothing of the stored workflow changes.
    const back = await novu.workflows.update(
      {
        name: read.name,
        workflowId: read.workflowId,
        active: read.active,
        tags: read.tags,
        steps: read.steps.map((s) => ({
          id: s.id,
          stepId: s.stepId,
          name: s.name,
          type: s.type,
          controlValues: s.controlValues,
        })) as never,
        preferences: { user: read.preferences.default },
      },
      read.id,
    );
    assert.equal(back.result.id, made._id);
    const after = (await v1(tenant).get(`/v1/workflows/${made._id}`)).json().data;
    assert.deepEqual(after.steps, made.steps);
    assert.deepEqual(after.triggers, made.triggers);
    assert.equal(after.updatedAt, made.updatedAt, "a write that changes nothing leaves updatedAt alone");
  });

  test("steps.retrieve and steps.generatePreview: a step by stepId or _id, rendered with the payload given", async () => {
    const tenant = await ctx.tenant();
    const novu = sdk(tenant.dev.apiKey);
    const workflow = (
      await novu.workflows.create({
        name: "Preview",
        workflowId: `preview-${Date.now()}`,
        steps: [
          {
            name: "Bell",
            type: "in_app",
            controlValues: { subject: "For {{subscriber.firstName}}", body: "<b>{{count}}</b> items" },
          },
          {
            name: "Mail",
            type: "email",
            controlValues: { subject: "Order {{orderId}}", body: "<p>{{subscriber.firstName}}</p>" },
          },
        ],
      })
    ).result;
    const bell = workflow.steps[0];
    assert.ok(bell);
    const step = (await novu.workflows.steps.retrieve(workflow.workflowId, "bell")).result;
    assert.equal(step.id, bell.id);
    assert.deepEqual(step.controlValues, {
      subject: "For {{subscriber.firstName}}",
      body: "<b>{{count}}</b> items",
    });
    assert.deepEqual((await novu.workflows.steps.retrieve(workflow.id, bell.id)).result.stepId, "bell");
    assert.ok(
      "count" in (step.variables.properties as { payload: { properties: object } }).payload.properties,
    );

    const preview = await novu.workflows.steps.generatePreview({
      workflowId: workflow.workflowId,
      stepId: "bell",
      generatePreviewRequestDto: {
        previewPayload: { subscriber: { firstName: "Ada" }, payload: { count: 3 } },
      },
    });
    assert.deepEqual(preview.result.result, {
      type: "in_app",
      preview: { subject: "For Ada", body: "<b>3</b> items" },
    });
    // Control values given to the preview win over the stored ones; nothing is stored.
    const mail = await novu.workflows.steps.generatePreview({
      workflowId: workflow.workflowId,
      stepId: "mail",
      generatePreviewRequestDto: {
        controlValues: { subject: "Draft {{orderId}}", body: "<p>{{orderId}}</p>" },
        previewPayload: { payload: { orderId: "<7>" } },
      },
    });
    assert.deepEqual(mail.result.result, {
      type: "email",
      preview: { subject: "Draft <7>", body: "<p>&lt;7&gt;</p>" },
    });
    const stored = (await novu.workflows.steps.retrieve(workflow.workflowId, "mail")).result;
    assert.equal((stored.controlValues as Record<string, unknown>).subject, "Order {{orderId}}");

    // A payload example never reaches an object's prototype, whatever the variables or payload say.
    const hostile = await ctx
      .client(tenant.dev.apiKey)
      .post(
        `/v2/workflows/${workflow.workflowId}/step/bell/preview`,
        JSON.parse(
          '{"controlValues":{"body":"{{__proto__.polluted}} {{constructor.prototype.polluted}}"},' +
            '"previewPayload":{"payload":{"__proto__":{"polluted":"yes"}}}}',
        ),
      );
    assert.ok([201, 400].includes(hostile.statusCode), hostile.body);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  test("bad input is the SDK's error with our message, never a 500", async () => {
    const tenant = await ctx.tenant();
    const novu = sdk(tenant.dev.apiKey);
    const workflowId = `bad-${Date.now()}`;
    await novu.workflows.create({ name: "Taken", workflowId, steps: [] });
    const refused = async (call: Promise<unknown>, status: number, message: RegExp) =>
      assert.rejects(call, (error: Error & { statusCode?: number; body?: string }) => {
        assert.equal(error.statusCode, status, error.body);
        assert.match(JSON.parse(error.body ?? "{}").message, message);
        return true;
      });
    // A 400, not a 409, which the SDK would retry for an hour.
    await refused(
      novu.workflows.create({ name: "Again", workflowId, steps: [] }),
      400,
      /^workflowId is already the trigger identifier of another workflow/,
    );
    await refused(
      novu.workflows.create({
        name: "Cron",
        workflowId: `${workflowId}-2`,
        steps: [{ name: "Wait", type: "delay", controlValues: { type: "timed", cron: "0 9 * * *" } }],
      }),
      400,
      /steps\[0\]\.controlValues\.type must be regular/,
    );
    await refused(
      novu.workflows.create({
        name: "Broken",
        workflowId: `${workflowId}-3`,
        steps: [{ name: "Bell", type: "in_app", controlValues: { body: "{{#if}}" } }],
      }),
      400,
      /content/,
    );
    await refused(novu.workflows.get("nope-nothing-here"), 404, /was not found/);
    await refused(novu.workflows.steps.retrieve(workflowId, "nope"), 404, /Step nope was not found/);
    // Another organization's workflow is not there.
    const other = await ctx.tenant();
    await refused(sdk(other.dev.apiKey).workflows.get(workflowId), 404, /was not found/);
  });

  test("a workflow made through the SDK runs: the trigger delivers its in-app step", async () => {
    const tenant = await ctx.tenant();
    const novu = sdk(tenant.dev.apiKey);
    const workflowId = `runs-${Date.now()}`;
    await novu.workflows.create({
      name: "Runs",
      workflowId,
      active: true,
      steps: [
        { name: "Bell", type: "in_app", controlValues: { body: "Hi {{subscriber.firstName}}, {{n}}" } },
      ],
    });
    await novu.trigger({ workflowId, to: { subscriberId: "ada", firstName: "Ada" }, payload: { n: 1 } });
    await poll(
      () => feed(tenant.dev.apiKey, "ada"),
      (contents) => contents.length === 1,
      { what: "the message" },
    );
    assert.deepEqual(await feed(tenant.dev.apiKey, "ada"), ["Hi Ada, 1"]);
    await drain(ctx);
  });
});
