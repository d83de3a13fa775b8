import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import type { AddressInfo } from "node:net";
import { before, test } from "node:test";
import { type INotificationTemplateStep, Novu, StepTypeEnum } from "@novu/node";
import { forEachBackend } from "./harness.ts";

/**
 * The official @novu/node SDK (2.x) against the real server over a socket, configured as a user
 * would: `backendUrl` pointing at the server (the SDK appends /v1), the API key as its secret key.
 */
forEachBackend("@novu/node SDK against a running server", (ctx) => {
  let backendUrl = "";
  before(async () => {
    await ctx.app.listen({ host: "127.0.0.1", port: 0 });
    const address = ctx.app.server.address() as AddressInfo;
    backendUrl = `http://127.0.0.1:${address.port}`;
  });

  const sdk = (apiKey: string) => new Novu(apiKey, { backendUrl });

  /** What the SDK throws for an HTTP error (an axios error): the status and our error body. */
  async function failure(call: Promise<unknown>) {
    try {
      await call;
    } catch (error) {
      const response = (error as { response?: { status: number; data: { message: string } } }).response;
      if (response) return { status: response.status, body: response.data };
      throw error;
    }
    assert.fail("the call succeeded");
  }

  // The step as Novu's own documentation writes it for notificationTemplates.create. In JavaScript
  // the filter's "AND" and "NOT_IN" are plain strings; the SDK's types want the enums of
  // @novu/shared, which it does not re-export, hence the cast.
  const chatStep = (): INotificationTemplateStep =>
    ({
      active: true,
      shouldStopOnFail: false,
      uuid: randomUUID(),
      name: "Chat",
      filters: [
        {
          value: "AND",
          children: [{ field: "{{chatContent}}", value: "flag", operator: "NOT_IN", on: "payload" }],
        },
      ],
      template: {
        type: StepTypeEnum.CHAT,
        active: true,
        subject: "",
        variables: [{ type: "String", name: "chatContent", required: true }],
        content: "{{chatContent}}",
        contentType: "editor",
      },
    }) as unknown as INotificationTemplateStep;

  test("notificationGroups: create, get, getOne, update, delete", async () => {
    const { dev } = await ctx.tenant();
    const novu = sdk(dev.apiKey);

    const created = await novu.notificationGroups.create("Marketing");
    assert.equal(created.status, 201);
    const group = created.data.data;
    assert.equal(group.name, "Marketing");
    assert.equal(group._environmentId, dev.environmentId);
    assert.match(group._id, /^[0-9a-f]{24}$/);

    const all = await novu.notificationGroups.get();
    assert.equal(all.status, 200);
    assert.deepEqual(
      all.data.data.map((g: { name: string }) => g.name),
      ["General", "Marketing"],
    );

    const one = await novu.notificationGroups.getOne(group._id);
    assert.deepEqual(one.data.data, group);

    const updated = await novu.notificationGroups.update(group._id, { name: "Growth" });
    assert.equal(updated.status, 200);
    assert.equal(updated.data.data.name, "Growth");
    assert.equal(updated.data.data._id, group._id);

    const duplicate = await failure(novu.notificationGroups.create("growth"));
    assert.equal(duplicate.status, 409);
    assert.match(duplicate.body.message, new RegExp(group._id));

    const deleted = await novu.notificationGroups.delete(group._id);
    assert.equal(deleted.status, 200);
    assert.deepEqual(deleted.data, { data: { acknowledged: true, status: "deleted" } });
    const gone = await failure(novu.notificationGroups.getOne(group._id));
    assert.equal(gone.status, 404);
  });

  test("notificationTemplates: create, getAll, getOne, update, updateStatus, delete", async () => {
    const { dev } = await ctx.tenant();
    const novu = sdk(dev.apiKey);
    const group = (await novu.notificationGroups.create("Onboarding")).data.data;

    const created = await novu.notificationTemplates.create({
      name: "Onboarding Workflow",
      notificationGroupId: group._id,
      steps: [chatStep()],
      description: "Onboarding workflow to trigger after user sign up",
      active: true,
      draft: false,
      critical: false,
      tags: ["onboarding"],
      preferenceSettings: { email: true, sms: false, in_app: true, chat: true, push: false },
      data: { owner: "growth" },
    });
    assert.equal(created.status, 201);
    const workflow = created.data.data;
    assert.equal(workflow.name, "Onboarding Workflow");
    assert.equal(workflow.active, true);
    assert.equal(workflow.draft, false);
    assert.equal(workflow._notificationGroupId, group._id);
    assert.equal(workflow.notificationGroup.name, "Onboarding");
    assert.deepEqual(workflow.tags, ["onboarding"]);
    assert.deepEqual(workflow.data, { owner: "growth" });
    assert.equal(workflow.preferenceSettings.sms, false);
    assert.equal(workflow.steps[0].template.type, "chat");
    assert.equal(workflow.steps[0].filters[0].children[0].operator, "NOT_IN");
    assert.deepEqual(workflow.triggers, [
      {
        type: "event",
        identifier: "onboarding-workflow",
        variables: [{ name: "chatContent" }],
        subscriberVariables: [],
      },
    ]);

    const second = await novu.notificationTemplates.create({
      name: "Password reset",
      notificationGroupId: group._id,
      steps: [{ template: { type: StepTypeEnum.EMAIL, subject: "Reset", content: "Hi {{firstName}}" } }],
    });
    assert.equal(second.status, 201);

    const page = await novu.notificationTemplates.getAll(0, 1);
    assert.equal(page.status, 200);
    assert.equal(page.data.page, 0);
    assert.equal(page.data.pageSize, 1);
    assert.equal(page.data.totalCount, 2);
    assert.deepEqual(
      page.data.data.map((w: { _id: string }) => w._id),
      [second.data.data._id],
    );
    const defaults = await novu.notificationTemplates.getAll();
    assert.equal(defaults.data.pageSize, 10);
    assert.equal(defaults.data.data.length, 2);

    const one = await novu.notificationTemplates.getOne(workflow._id);
    assert.deepEqual(one.data.data, workflow);
    const byIdentifier = await novu.notificationTemplates.getOne("onboarding-workflow");
    assert.equal(byIdentifier.data.data._id, workflow._id);

    // The SDK's update sends the create payload (name and group required by its types).
    const updated = await novu.notificationTemplates.update(workflow._id, {
      name: "Onboarding, renamed",
      notificationGroupId: dev.generalGroupId,
      description: "Now in General",
      steps: [chatStep(), { template: { type: StepTypeEnum.SMS, content: "Code {{code}}" } }],
    });
    assert.equal(updated.status, 200);
    const after = updated.data.data;
    assert.equal(after.name, "Onboarding, renamed");
    assert.equal(after.notificationGroup.name, "General");
    assert.equal(after.triggers[0].identifier, "onboarding-workflow");
    assert.deepEqual(after.triggers[0].variables, [{ name: "chatContent" }, { name: "code" }]);
    assert.deepEqual(after.triggers[0].subscriberVariables, [{ name: "phone" }]);

    const off = await novu.notificationTemplates.updateStatus(workflow._id, false);
    assert.equal(off.status, 200);
    assert.equal(off.data.data.active, false);
    assert.equal(off.data.data.draft, true);

    const deleted = await novu.notificationTemplates.delete(workflow._id);
    assert.equal(deleted.status, 200);
    assert.deepEqual(deleted.data, { data: true });
    assert.equal((await failure(novu.notificationTemplates.getOne(workflow._id))).status, 404);
    assert.equal((await failure(novu.notificationTemplates.updateStatus(workflow._id, true))).status, 404);
    assert.equal((await novu.notificationTemplates.getAll()).data.totalCount, 1);
  });

  test("errors reach the SDK as Novu's error shape, with our status codes", async () => {
    const { dev, prod } = await ctx.tenant();
    const novu = sdk(dev.apiKey);
    const invalid = await failure(
      novu.notificationTemplates.create({ name: "No group", notificationGroupId: "not-an-id" }),
    );
    assert.equal(invalid.status, 400);
    assert.match(invalid.body.message, /^notificationGroupId /);
    const foreign = await failure(sdk(prod.apiKey).notificationGroups.getOne(dev.generalGroupId));
    assert.equal(foreign.status, 404);
    const unauthenticated = await failure(
      sdk("tid_sk_notarealkeyatallnotarealkey00").notificationGroups.get(),
    );
    assert.equal(unauthenticated.status, 401);
  });

  test("with retryConfig the SDK sends an Idempotency-Key on POST and PATCH, which the server takes", async () => {
    const { dev } = await ctx.tenant();
    const novu = new Novu(dev.apiKey, {
      backendUrl,
      retryConfig: { retryMax: 2, waitMin: 0.01, waitMax: 0.05 },
    });
    const group = await novu.notificationGroups.create("Retried");
    assert.equal(group.status, 201);
    assert.ok(group.config.headers["Idempotency-Key"], "the SDK added a key");
    const renamed = await novu.notificationGroups.update(group.data.data._id, { name: "Retried twice" });
    assert.equal(renamed.status, 200);
    const workflow = await novu.notificationTemplates.create({
      name: "Retried",
      notificationGroupId: group.data.data._id,
    });
    assert.equal(workflow.status, 201);
    assert.equal((await novu.notificationTemplates.getAll()).data.totalCount, 1);
  });
});
