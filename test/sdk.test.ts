import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import type { AddressInfo } from "node:net";
import { before, test } from "node:test";
import {
  ChannelTypeEnum,
  ChatProviderIdEnum,
  type INotificationTemplateStep,
  Novu,
  PreferenceLevelEnum,
  PushProviderIdEnum,
  StepTypeEnum,
} from "@novu/node";
import { forEachBackend } from "./harness.ts";
import { OBJECT_ID } from "./patterns.ts";

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
    assert.match(group._id, OBJECT_ID);

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
  test("subscribers: identify, get, list, update, bulkCreate, credentials, online status, delete", async () => {
    const { dev } = await ctx.tenant();
    const novu = sdk(dev.apiKey);

    const identified = await novu.subscribers.identify("user-1", {
      firstName: "Ada",
      lastName: "Lovelace",
      email: "ada@example.com",
      phone: "+15555550100",
      avatar: "https://example.com/ada.png",
      locale: "en-GB",
      data: { plan: "pro" },
    });
    assert.equal(identified.status, 201);
    const ada = identified.data.data;
    assert.equal(ada.subscriberId, "user-1");
    assert.equal(ada._environmentId, dev.environmentId);
    assert.deepEqual(ada.data, { plan: "pro" });
    const again = await novu.subscribers.identify("user-1", { lastName: "King" });
    assert.equal(again.data.data._id, ada._id, "identify is an upsert");
    assert.equal(again.data.data.firstName, "Ada");

    const got = await novu.subscribers.get("user-1");
    assert.equal(got.status, 200);
    assert.equal(got.data.data.lastName, "King");

    const bulk = await novu.subscribers.bulkCreate([
      { subscriberId: "user-2", firstName: "Grace" },
      { subscriberId: "user-1", email: "ada@king.example" },
    ]);
    assert.equal(bulk.status, 201);
    assert.deepEqual(bulk.data.data, {
      created: [{ subscriberId: "user-2" }],
      updated: [{ subscriberId: "user-1" }],
      failed: [],
    });

    const page = await novu.subscribers.list(0, 1);
    assert.equal(page.status, 200);
    assert.deepEqual(
      [page.data.page, page.data.pageSize, page.data.totalCount, page.data.hasMore],
      [0, 1, 2, true],
    );
    assert.equal(page.data.data.length, 1);
    assert.equal((await novu.subscribers.list(1, 1)).data.hasMore, false);

    const updated = await novu.subscribers.update("user-2", { lastName: "Hopper", locale: "en-US" });
    assert.equal(updated.status, 200);
    assert.deepEqual([updated.data.data.firstName, updated.data.data.lastName], ["Grace", "Hopper"]);

    const slack = await novu.subscribers.setCredentials("user-2", ChatProviderIdEnum.Slack, {
      webhookUrl: "https://hooks.slack.com/services/T/B/x",
    });
    assert.equal(slack.status, 200);
    const push = await novu.subscribers.setCredentials(
      "user-2",
      PushProviderIdEnum.FCM,
      { deviceTokens: ["token-a", "token-b"] },
      "fcm-main",
    );
    assert.deepEqual(
      push.data.data.channels.map(
        (c: { providerId: string; integrationIdentifier: string; credentials: unknown }) => [
          c.providerId,
          c.integrationIdentifier,
          c.credentials,
        ],
      ),
      [
        ["slack", "", { webhookUrl: "https://hooks.slack.com/services/T/B/x", deviceTokens: [] }],
        ["fcm", "fcm-main", { webhookUrl: "", deviceTokens: ["token-a", "token-b"] }],
      ],
    );
    const unset = await novu.subscribers.unsetCredentials("user-2", PushProviderIdEnum.FCM);
    assert.equal(unset.status, 200);
    assert.deepEqual(unset.data.data.channels[1].credentials, { webhookUrl: "", deviceTokens: [] });
    const removed = await novu.subscribers.deleteCredentials("user-2", ChatProviderIdEnum.Slack);
    assert.equal(removed.status, 204);
    assert.deepEqual(
      (await novu.subscribers.get("user-2")).data.data.channels.map(
        (c: { providerId: string }) => c.providerId,
      ),
      ["fcm"],
    );

    const online = await novu.subscribers.updateOnlineStatus("user-2", true);
    assert.equal(online.status, 200);
    assert.equal(online.data.data.isOnline, true);
    assert.ok(online.data.data.lastOnlineAt);
    assert.equal((await novu.subscribers.updateOnlineStatus("user-2", false)).data.data.isOnline, false);

    const deleted = await novu.subscribers.delete("user-2");
    assert.equal(deleted.status, 200);
    assert.deepEqual(deleted.data, { data: { acknowledged: true, status: "deleted" } });
    assert.equal((await failure(novu.subscribers.get("user-2"))).status, 404);
    const invalid = await failure(novu.subscribers.identify("user-3", { email: "not-an-email" }));
    assert.equal(invalid.status, 400);
    assert.match(invalid.body.message, /^email /);
  });

  test("subscribers: preferences (getPreference, updatePreference, global, by level)", async () => {
    const { dev } = await ctx.tenant();
    const novu = sdk(dev.apiKey);
    await novu.subscribers.identify("reader", { firstName: "Reader" });
    const workflow = (
      await novu.notificationTemplates.create({
        name: "Weekly digest",
        notificationGroupId: dev.generalGroupId,
        active: true,
        steps: [{ template: { type: StepTypeEnum.EMAIL, subject: "Digest", content: "Hi" } }],
      })
    ).data.data;
    const critical = (
      await novu.notificationTemplates.create({
        name: "Password reset",
        notificationGroupId: dev.generalGroupId,
        active: true,
        critical: true,
        steps: [{ template: { type: StepTypeEnum.EMAIL, subject: "Reset", content: "Hi" } }],
      })
    ).data.data;

    const listed = await novu.subscribers.getPreference("reader", { includeInactiveChannels: false });
    assert.equal(listed.status, 200);
    assert.deepEqual(
      listed.data.data.map((p: { template: { _id: string; critical: boolean } }) => [
        p.template._id,
        p.template.critical,
      ]),
      [
        [workflow._id, false],
        [critical._id, true],
      ],
    );

    const changed = await novu.subscribers.updatePreference("reader", workflow._id, {
      channel: { type: ChannelTypeEnum.EMAIL, enabled: false },
    });
    assert.equal(changed.status, 200);
    assert.equal(changed.data.data.preference.channels.email, false);
    const disabled = await novu.subscribers.updatePreference("reader", workflow._id, { enabled: false });
    assert.equal(disabled.data.data.preference.enabled, false);
    const refused = await failure(
      novu.subscribers.updatePreference("reader", critical._id, { enabled: false }),
    );
    assert.equal(refused.status, 400);
    assert.match(refused.body.message, /is critical/);

    const global = await novu.subscribers.getGlobalPreference("reader");
    assert.equal(global.status, 200);
    assert.deepEqual(global.data.data, [
      {
        preference: {
          enabled: true,
          channels: { email: true, sms: true, in_app: true, chat: true, push: true },
        },
      },
    ]);
    const globalChanged = await novu.subscribers.updateGlobalPreference("reader", {
      enabled: true,
      preferences: [{ type: ChannelTypeEnum.SMS, enabled: false }],
    });
    assert.equal(globalChanged.status, 200);
    assert.equal(globalChanged.data.data.preference.channels.sms, false);
    const byLevel = await novu.subscribers.getPreferenceByLevel("reader", PreferenceLevelEnum.GLOBAL);
    assert.deepEqual(byLevel.data.data, [globalChanged.data.data]);
    const templates = await novu.subscribers.getPreferenceByLevel("reader", PreferenceLevelEnum.TEMPLATE);
    assert.equal(templates.data.data[0].preference.enabled, false);
  });

  test("topics: create, get, list, rename, addSubscribers, getSubscriber, checkSubscriber, removeSubscribers, delete", async () => {
    const { dev } = await ctx.tenant();
    const novu = sdk(dev.apiKey);
    await novu.subscribers.bulkCreate([{ subscriberId: "a" }, { subscriberId: "b" }]);

    const created = await novu.topics.create({ key: "team:eng", name: "Engineering" });
    assert.equal(created.status, 201);
    assert.deepEqual(Object.keys(created.data.data).sort(), ["_id", "key"]);
    assert.equal(created.data.data.key, "team:eng");
    assert.equal((await failure(novu.topics.create({ key: "team:eng", name: "Again" }))).status, 409);

    const added = await novu.topics.addSubscribers("team:eng", { subscribers: ["a", "b", "ghost"] });
    assert.equal(added.status, 200);
    assert.deepEqual(added.data.data, { succeeded: ["a", "b"], failed: { notFound: ["ghost"] } });

    const topic = await novu.topics.get("team:eng");
    assert.equal(topic.status, 200);
    assert.equal(topic.data.data.name, "Engineering");
    assert.deepEqual([...topic.data.data.subscribers].sort(), ["a", "b"]);

    const member = await novu.topics.getSubscriber("team:eng", "a");
    assert.equal(member.status, 200);
    assert.equal(member.data.data.externalSubscriberId, "a");
    assert.equal(member.data.data._topicId, created.data.data._id);
    assert.equal((await novu.topics.checkSubscriber("team:eng", "b")).status, 200);

    await novu.topics.create({ key: "team:ops", name: "Operations" });
    const list = await novu.topics.list({ page: 0, pageSize: 1 });
    assert.equal(list.status, 200);
    assert.deepEqual([list.data.page, list.data.pageSize, list.data.totalCount], [0, 1, 2]);
    assert.equal(list.data.data[0].key, "team:eng");
    const byKey = await novu.topics.list({ key: "team:ops" });
    assert.deepEqual(
      byKey.data.data.map((t: { key: string }) => t.key),
      ["team:ops"],
    );

    const renamed = await novu.topics.rename("team:eng", "Engineering (all)");
    assert.equal(renamed.status, 200);
    assert.equal(renamed.data.data.name, "Engineering (all)");

    assert.equal((await failure(novu.topics.delete("team:eng"))).status, 409);
    const removal = await novu.topics.removeSubscribers("team:eng", { subscribers: ["a", "b"] });
    assert.equal(removal.status, 204);
    assert.equal((await failure(novu.topics.checkSubscriber("team:eng", "a"))).status, 404);
    const deleted = await novu.topics.delete("team:eng");
    assert.equal(deleted.status, 204);
    assert.equal((await failure(novu.topics.get("team:eng"))).status, 404);
  });

  test("environments: getCurrent, getAll, getApiKeys, regenerateApiKeys", async () => {
    const { dev, prod } = await ctx.tenant();
    const novu = sdk(dev.apiKey);
    const current = await novu.environments.getCurrent();
    assert.equal(current.status, 200);
    assert.equal(current.data.data._id, dev.environmentId);
    assert.equal(current.data.data.hmac, false);
    const all = await novu.environments.getAll();
    assert.deepEqual(
      all.data.data.map((e: { _id: string }) => e._id),
      [dev.environmentId, prod.environmentId],
    );
    const keys = await novu.environments.getApiKeys();
    assert.equal(keys.data.data[0].key, `tid_sk_****${dev.apiKey.slice(-4)}`);
    const regenerated = await novu.environments.regenerateApiKeys();
    assert.equal(regenerated.status, 201);
    const newKey = regenerated.data.data[0].key;
    assert.equal((await failure(novu.environments.getCurrent())).status, 401);
    assert.equal((await sdk(newKey).environments.getCurrent()).data.data._id, dev.environmentId);
  });
});
