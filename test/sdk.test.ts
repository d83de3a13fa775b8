import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import type { AddressInfo } from "node:net";
import { before, test } from "node:test";
import {
  ButtonTypeEnum,
  ChannelTypeEnum,
  ChatProviderIdEnum,
  type INotificationTemplateStep,
  MessageActionStatusEnum,
  MessagesStatusEnum,
  Novu,
  PreferenceLevelEnum,
  PushProviderIdEnum,
  StepTypeEnum,
  TriggerRecipientsTypeEnum,
} from "@novu/node";
import { ManualClock } from "../src/clock.ts";
import { uniqueName } from "./factories.ts";
import { type Client, forEachBackend, type TestContext } from "./harness.ts";
import { OBJECT_ID } from "./patterns.ts";
import { poll } from "./poll.ts";
import { drain } from "./queue-helpers.ts";

// The official @novu/node SDK (2.x) against the real server over a socket, configured as a user
// would: `backendUrl` pointing at the server (the SDK appends /v1), the API key as its secret key.

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

/**
 * Makes the suite's app listen on a free port (before its tests) and returns how to build an SDK
 * client for it, and the server's address for the SDK's own options.
 */
function serve(ctx: TestContext) {
  let backendUrl = "";
  before(async () => {
    await ctx.app.listen({ host: "127.0.0.1", port: 0 });
    const address = ctx.app.server.address() as AddressInfo;
    backendUrl = `http://127.0.0.1:${address.port}`;
  });
  return {
    sdk: (apiKey: string) => new Novu(apiKey, { backendUrl }),
    url: () => backendUrl,
  };
}

forEachBackend("@novu/node SDK against a running server", (ctx) => {
  const { sdk, url } = serve(ctx);

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
      backendUrl: url(),
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
        ["slack", "", { webhookUrl: "https://hooks.slack.com/********", deviceTokens: [] }],
        ["fcm", "fcm-main", { webhookUrl: "", deviceTokens: ["********", "********"] }],
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

  test("layouts, feeds, organizations and workflow overrides", async () => {
    const { dev } = await ctx.tenant();
    const novu = sdk(dev.apiKey);

    const content = "<main>{{{body}}} {{footer}}</main>";
    const layout = await novu.layouts.create({
      name: "Brand",
      identifier: "brand",
      description: "The frame",
      content,
      variables: [{ name: "footer", type: "String" as never, defaultValue: "Acme", required: false }],
      isDefault: true,
    });
    assert.equal(layout.status, 201);
    const layoutId = layout.data.data._id;
    const other = (
      await novu.layouts.create({
        name: "Other",
        identifier: "other",
        description: "",
        content: "{{{body}}}",
      })
    ).data.data;
    const listed = await novu.layouts.list({
      page: 0,
      pageSize: 10,
      sortBy: "createdAt",
      orderBy: -1 as never,
    });
    assert.deepEqual(
      listed.data.data.map((l: { identifier: string }) => l.identifier),
      ["other", "brand", "novu-default-layout"],
      "newest first; the default layout of onboarding, the oldest, last",
    );
    // The SDK's get asks the list with the id as a parameter: the list answers.
    assert.equal((await novu.layouts.get(layoutId)).status, 200);
    const updated = await novu.layouts.update(other._id, { name: "Other frame" });
    assert.equal(updated.data.data.name, "Other frame");
    assert.equal((await novu.layouts.setDefault(other._id)).status, 204);
    assert.equal((await failure(novu.layouts.delete(other._id))).status, 409, "the default");
    assert.equal((await novu.layouts.delete(layoutId)).status, 204);

    const feed = await novu.feeds.create("Updates");
    assert.equal(feed.status, 201);
    assert.deepEqual(
      (await novu.feeds.get()).data.data.map((f: { name: string }) => f.name),
      ["Updates"],
    );
    assert.deepEqual((await novu.feeds.delete(feed.data.data._id)).data.data, []);

    const me = (await novu.organizations.getCurrent()).data.data;
    assert.deepEqual(
      (await novu.organizations.list()).data.data.map((o: { _id: string }) => o._id),
      [me._id],
    );
    assert.equal((await novu.organizations.rename({ name: "Renamed org" })).data.data.name, "Renamed org");
    const branding = await novu.organizations.updateBranding({
      color: "#ff0000",
      logo: "https://cdn.example.com/logo.png",
      fontColor: "#000000",
      fontFamily: "Inter",
      contentBackground: "#ffffff",
    });
    assert.equal(branding.data.data.color, "#ff0000");
    const [owner] = (await novu.organizations.getMembers()).data.data;
    assert.equal(
      (await novu.organizations.updateMemberRole(owner._id, { role: "admin" as never })).status,
      200,
    );
    assert.equal((await failure(novu.organizations.removeMember(owner._id))).status, 409);
    const created = await novu.organizations.create({ name: "Second org" });
    assert.equal(created.status, 201);
    assert.equal(created.data.data.name, "Second org");

    const tenant = (await novu.tenants.create("acme", { name: "Acme" })).data.data;
    const workflow = (
      await novu.notificationTemplates.create({
        name: "Overridden",
        notificationGroupId: dev.generalGroupId,
        steps: [{ template: { type: "in_app" as never, content: "Hi" } } as never],
      })
    ).data.data;
    const override = await novu.workflowOverrides.create({
      workflowId: workflow._id,
      tenantId: tenant._id,
      active: false,
    });
    assert.equal(override.status, 201);
    const overrideId = override.data.data._id;
    assert.equal((await novu.workflowOverrides.getOneById(overrideId)).data.data.active, false);
    assert.equal(
      (await novu.workflowOverrides.getOneByTenantIdandWorkflowId(workflow._id, tenant._id)).data.data._id,
      overrideId,
    );
    const changed = await novu.workflowOverrides.updateOneById(overrideId, {
      preferenceSettings: { email: false },
    });
    assert.equal(changed.data.data.preferenceSettings.email, false);
    const again = await novu.workflowOverrides.updateOneByTenantIdandWorkflowId(workflow._id, tenant._id, {
      active: true,
    });
    assert.equal(again.data.data.active, true);
    assert.equal((await novu.workflowOverrides.list(0, 10)).data.data.length, 1);
    assert.deepEqual((await novu.workflowOverrides.delete(overrideId)).data, { data: true });
  });
});

const START = Date.UTC(2026, 5, 1, 12);

interface FeedMessage {
  _id: string;
  _notificationId: string;
  transactionId: string;
  subscriberId: string;
  channel: string;
  content: string;
  seen: boolean;
  read: boolean;
  lastSeenDate: string;
  lastReadDate: string;
  payload: Record<string, unknown>;
  cta: { type: string; data: { url?: string }; action?: { status: string; result: unknown } };
}

interface JobView {
  type: string;
  status: string;
}

const FINAL = new Set(["completed", "failed", "canceled", "merged", "skipped"]);

/**
 * The engine through the SDK: triggers of every shape, the subscriber's feed and what the inbox
 * does with it, messages, cancel. The worker runs in the server's process; the tests wait for it
 * by polling what the API shows (with a deadline), and move business time with a ManualClock.
 */
forEachBackend<ManualClock>(
  "@novu/node SDK: triggers, the subscriber's feed, messages",
  (ctx) => {
    const { sdk } = serve(ctx);

    const inApp = (content = "Hi {{subscriber.firstName}}, {{note}}") =>
      ({
        template: {
          type: StepTypeEnum.IN_APP,
          content,
          cta: { type: "redirect", data: { url: "/orders/{{orderId}}" } },
        },
      }) as unknown as INotificationTemplateStep;
    const delay = (minutes: number) =>
      ({
        template: { type: StepTypeEnum.DELAY },
        metadata: { type: "regular", amount: minutes, unit: "minutes" },
      }) as unknown as INotificationTemplateStep;

    /** A new tenant, an SDK client for its Development key, and an active workflow of `steps`. */
    async function setup(steps: INotificationTemplateStep[] = [inApp()]) {
      const { dev } = await ctx.tenant();
      const novu = sdk(dev.apiKey);
      const created = await novu.notificationTemplates.create({
        name: uniqueName("SDK engine workflow"),
        notificationGroupId: dev.generalGroupId,
        active: true,
        steps,
      });
      assert.equal(created.status, 201);
      const name = created.data.data.triggers[0].identifier as string;
      return { novu, api: ctx.client(dev.apiKey), name };
    }

    /** The subscriber's feed (newest first) once it holds at least `count` messages. */
    async function feedOf(novu: Novu, subscriberId: string, count: number): Promise<FeedMessage[]> {
      return poll(
        async () =>
          (await novu.subscribers.getNotificationsFeed(subscriberId, { limit: 100 })).data
            .data as FeedMessage[],
        (data) => data.length >= count,
        { what: `the feed of ${subscriberId} to hold ${count} messages` },
      );
    }

    /**
     * The jobs of a transaction once `notifications` notifications exist and every job has reached
     * a final state (read through the API; the SDK has no call for notifications).
     */
    async function settled(api: Client, transactionId: string, notifications = 1): Promise<JobView[]> {
      const found = await poll(
        async () => {
          const res = await api.get(`/v1/notifications?transactionId=${transactionId}&limit=100`);
          assert.equal(res.statusCode, 200, res.body);
          return res.json().data as { jobs: JobView[] }[];
        },
        (all) => all.length >= notifications && all.every((n) => n.jobs.every((j) => FINAL.has(j.status))),
        { what: `transaction ${transactionId} to have run` },
      );
      return found.flatMap((n) => n.jobs);
    }

    const contents = (messages: FeedMessage[]) => messages.map((m) => m.content);

    test("trigger: to as a subscriber object, a subscriberId, a topic and an array", async () => {
      const { novu, api, name } = await setup();

      const ack = await novu.trigger(name, {
        to: { subscriberId: "ada", firstName: "Ada", email: "ada@example.com" },
        payload: { note: "<b>welcome</b>", orderId: "42" },
      });
      assert.equal(ack.status, 201);
      assert.equal(ack.data.data.acknowledged, true);
      assert.equal(ack.data.data.status, "processed");
      assert.ok(ack.data.data.transactionId, "a transactionId is generated");
      const [message] = await feedOf(novu, "ada", 1);
      assert.ok(message);
      assert.equal(message.content, "Hi Ada, &lt;b&gt;welcome&lt;/b&gt;");
      assert.equal(message.cta.data.url, "/orders/42");
      assert.equal(message.transactionId, ack.data.data.transactionId);
      assert.equal(message.subscriberId, "ada");
      assert.equal(message.channel, "in_app");
      assert.deepEqual(message.payload, { note: "<b>welcome</b>", orderId: "42" });
      assert.equal((await novu.subscribers.get("ada")).data.data.email, "ada@example.com", "upserted");
      // The feed is newest first: each trigger's messages a second after the last's.
      ctx.clock.advance(1000);

      const plain = await novu.trigger(name, {
        to: "grace",
        payload: { note: "plain" },
        transactionId: "tx-plain",
      });
      assert.equal(plain.status, 201);
      assert.equal(plain.data.data.transactionId, "tx-plain");
      assert.deepEqual(contents(await feedOf(novu, "grace", 1)), ["Hi , plain"]);
      assert.equal((await novu.subscribers.get("grace")).status, 200, "a subscriberId alone creates it");
      ctx.clock.advance(1000);

      await novu.subscribers.identify("linus", { firstName: "Linus" });
      await novu.topics.create({ key: "team", name: "Team" });
      await novu.topics.addSubscribers("team", { subscribers: ["ada", "linus"] });
      const topic = await novu.trigger(name, {
        to: [{ type: TriggerRecipientsTypeEnum.TOPIC, topicKey: "team" }],
        payload: { note: "team" },
        transactionId: "tx-topic",
      });
      assert.equal(topic.status, 201);
      assert.equal(topic.data.data.status, "processed");
      await settled(api, "tx-topic", 2);
      ctx.clock.advance(1000);

      // A topic and its member named again, a subscriberId and a new subscriber object: each once.
      const array = await novu.trigger(name, {
        to: [
          "grace",
          { subscriberId: "ken", firstName: "Ken" },
          { type: TriggerRecipientsTypeEnum.TOPIC, topicKey: "team" },
          "ada",
        ],
        payload: { note: "all" },
        transactionId: "tx-array",
      });
      assert.equal(array.status, 201);
      await settled(api, "tx-array", 4);
      assert.deepEqual(contents(await feedOf(novu, "ada", 3)), [
        "Hi Ada, all",
        "Hi Ada, team",
        "Hi Ada, &lt;b&gt;welcome&lt;/b&gt;",
      ]);
      assert.deepEqual(contents(await feedOf(novu, "linus", 2)), ["Hi Linus, all", "Hi Linus, team"]);
      assert.deepEqual(contents(await feedOf(novu, "grace", 2)), ["Hi , all", "Hi , plain"]);
      assert.deepEqual(contents(await feedOf(novu, "ken", 1)), ["Hi Ken, all"]);

      const unknown = await failure(novu.trigger("no-such-workflow", { to: "ada" }));
      assert.equal(unknown.status, 422);
      const missingTopic = await failure(
        novu.trigger(name, { to: [{ type: TriggerRecipientsTypeEnum.TOPIC, topicKey: "nobody" }] }),
      );
      assert.equal(missingTopic.status, 422);
    });

    test("trigger: the actor renders, and overrides.delay replaces the step's delay", async () => {
      const { novu, api, name } = await setup([delay(5), inApp("{{actor.firstName}} says {{note}}")]);
      const triggeredAt = ctx.clock.now();
      const res = await novu.trigger(name, {
        to: "listener",
        actor: { subscriberId: "boss", firstName: "Boss" },
        payload: { note: "hi" },
        // The SDK types the unit with @novu/shared's DigestUnitEnum, which it does not re-export.
        overrides: { delay: { amount: 1, unit: "hours" as never } },
        transactionId: "tx-actor",
      });
      assert.equal(res.status, 201);
      const runAt = await poll(
        async () => {
          const found = await api.get("/v1/notifications?transactionId=tx-actor");
          const job = found.json().data[0]?.jobs[0];
          return job?.status === "delayed" ? (job.runAt as string) : "";
        },
        (at) => at !== "",
        { what: "the delay to wait" },
      );
      assert.equal(runAt, new Date(triggeredAt + 60 * 60_000).toISOString(), "an hour, not five minutes");
      ctx.clock.advance(60 * 60_000);
      await settled(api, "tx-actor");
      assert.deepEqual(contents(await feedOf(novu, "listener", 1)), ["Boss says hi"]);
    });

    test("bulkTrigger: each event acknowledged or refused on its own", async () => {
      const { novu, api, name } = await setup();
      const res = await novu.bulkTrigger([
        { name, to: "bulk-a", payload: { note: "one" }, transactionId: "bulk-1" },
        { name, to: ["bulk-a", { subscriberId: "bulk-b", firstName: "Bee" }], payload: { note: "two" } },
        { name: "no-such-workflow", to: "bulk-a" },
      ]);
      assert.equal(res.status, 201);
      const [first, second, third] = res.data.data;
      assert.deepEqual(first, { acknowledged: true, status: "processed", transactionId: "bulk-1" });
      assert.equal(second.acknowledged, true);
      assert.equal(second.status, "processed");
      assert.equal(third.acknowledged, false);
      assert.equal(third.error.length, 1);
      await settled(api, "bulk-1");
      await settled(api, second.transactionId, 2);
      assert.deepEqual(contents(await feedOf(novu, "bulk-a", 2)).sort(), ["Hi , one", "Hi , two"]);
      assert.deepEqual(contents(await feedOf(novu, "bulk-b", 1)), ["Hi Bee, two"]);
    });

    test("broadcast: every subscriber of the environment, and no other environment's", async () => {
      const { novu, api, name } = await setup();
      const outsider = sdk((await ctx.tenant()).dev.apiKey);
      await outsider.subscribers.identify("b1", { firstName: "Outsider" });
      await novu.subscribers.bulkCreate([
        { subscriberId: "b1", firstName: "One" },
        { subscriberId: "b2", firstName: "Two" },
      ]);
      const res = await novu.broadcast(name, { payload: { note: "to all" }, transactionId: "broadcast-1" });
      assert.equal(res.status, 201);
      assert.deepEqual(res.data.data, {
        acknowledged: true,
        status: "processed",
        transactionId: "broadcast-1",
      });
      await settled(api, "broadcast-1", 2);
      assert.deepEqual(contents(await feedOf(novu, "b1", 1)), ["Hi One, to all"]);
      assert.deepEqual(contents(await feedOf(novu, "b2", 1)), ["Hi Two, to all"]);
      assert.deepEqual(contents(await feedOf(outsider, "b1", 0)), []);
    });

    test("events.cancel: a delayed trigger canceled by transactionId delivers nothing", async () => {
      const { novu, api, name } = await setup([delay(5), inApp()]);
      await novu.trigger(name, { to: "waiting", payload: { note: "canceled" }, transactionId: "to-cancel" });
      await novu.trigger(name, { to: "waiting", payload: { note: "kept" }, transactionId: "to-keep" });
      for (const tx of ["to-cancel", "to-keep"]) {
        await poll(
          async () =>
            (await api.get(`/v1/notifications?transactionId=${tx}`)).json().data[0]?.jobs[0]?.status,
          (status) => status === "delayed",
          { what: `${tx} to wait in its delay` },
        );
      }

      const canceled = await novu.events.cancel("to-cancel");
      assert.equal(canceled.status, 200);
      assert.deepEqual(canceled.data, { data: true });
      assert.deepEqual((await novu.events.cancel("to-cancel")).data, { data: false }, "nothing left");
      assert.deepEqual((await novu.events.cancel("never-sent")).data, { data: false });

      ctx.clock.advance(5 * 60_000);
      const kept = await settled(api, "to-keep");
      assert.deepEqual(
        kept.map((j) => [j.type, j.status]),
        [
          ["delay", "completed"],
          ["in_app", "completed"],
        ],
      );
      const gone = await settled(api, "to-cancel");
      assert.deepEqual(
        gone.map((j) => [j.type, j.status]),
        [
          ["delay", "canceled"],
          ["in_app", "canceled"],
        ],
      );
      // A canceled job never runs again: once the queue has done all that is due, the feed holds the
      // kept trigger's message only.
      await drain(ctx);
      assert.deepEqual(contents(await feedOf(novu, "waiting", 1)), ["Hi , kept"]);
      const none = await novu.messages.list({ transactionIds: ["to-cancel"] });
      assert.equal(none.data.totalCount, 0);
    });

    /** A subscriber with three in-app messages, n = 0, 1, 2 (newest last), a second apart. */
    async function inbox() {
      const { novu, api, name } = await setup();
      const subscriberId = "reader";
      await novu.subscribers.identify(subscriberId, { firstName: "Reader" });
      for (const n of [0, 1, 2]) {
        await novu.trigger(name, {
          to: subscriberId,
          payload: { note: `n${n}`, n, group: { key: n === 2 ? "b" : "a" } },
          transactionId: `inbox-${n}`,
        });
        await settled(api, `inbox-${n}`);
        ctx.clock.advance(1000);
      }
      const messages = await feedOf(novu, subscriberId, 3);
      assert.deepEqual(contents(messages), ["Hi Reader, n2", "Hi Reader, n1", "Hi Reader, n0"]);
      return { novu, api, subscriberId, messages };
    }

    test("getNotificationsFeed: pages, and the seen, read and payload filters as the SDK sends them", async () => {
      const { novu, subscriberId, messages } = await inbox();
      const feed = (params: Parameters<Novu["subscribers"]["getNotificationsFeed"]>[1]) =>
        novu.subscribers.getNotificationsFeed(subscriberId, params);

      const first = await feed({ page: 0, limit: 2 });
      assert.equal(first.status, 200);
      assert.deepEqual(
        [first.data.page, first.data.pageSize, first.data.totalCount, first.data.hasMore],
        [0, 2, 3, true],
      );
      assert.deepEqual(contents(first.data.data), ["Hi Reader, n2", "Hi Reader, n1"]);
      const second = await feed({ page: 1, limit: 2 });
      assert.deepEqual(contents(second.data.data), ["Hi Reader, n0"]);
      assert.equal(second.data.hasMore, false);
      assert.equal((await feed({})).data.pageSize, 10);

      // The SDK sends payload as base64 JSON; a nested subset matches.
      assert.deepEqual(contents((await feed({ payload: { group: { key: "b" } } })).data.data), [
        "Hi Reader, n2",
      ]);
      assert.deepEqual(contents((await feed({ payload: { n: 0 } })).data.data), ["Hi Reader, n0"]);
      assert.equal((await feed({ payload: { n: 7 } })).data.totalCount, 0);

      const [newest, middle] = messages;
      assert.ok(newest && middle);
      await novu.subscribers.markMessageAs(subscriberId, newest._id, { seen: true, read: true });
      await novu.subscribers.markMessageSeen(subscriberId, middle._id);
      assert.deepEqual(
        (await feed({ read: true })).data.data.map((m: FeedMessage) => m._id),
        [newest._id],
      );
      assert.equal((await feed({ read: false })).data.totalCount, 2);
      assert.deepEqual(
        (await feed({ seen: true })).data.data.map((m: FeedMessage) => m._id),
        [newest._id, middle._id],
      );
      assert.deepEqual(contents((await feed({ seen: false, read: false })).data.data), ["Hi Reader, n0"]);
      assert.deepEqual(contents((await feed({ seen: true, payload: { n: 1 } })).data.data), [
        "Hi Reader, n1",
      ]);

      assert.equal((await failure(novu.subscribers.getNotificationsFeed("nobody", {}))).status, 404);
    });

    test("getUnseenCount, markMessageSeen, markMessageRead, markMessageAs, markAllMessagesAs", async () => {
      const { novu, subscriberId, messages } = await inbox();
      const ids = messages.map((m) => m._id);
      const [a, b, c] = ids;
      assert.ok(a && b && c);
      const unseen = async () => (await novu.subscribers.getUnseenCount(subscriberId, false)).data.data.count;
      const seen = async () => (await novu.subscribers.getUnseenCount(subscriberId, true)).data.data.count;
      const state = async () =>
        Object.fromEntries(
          (await feedOf(novu, subscriberId, 3)).map((m) => [m._id, [m.seen, m.read]] as const),
        );

      const counted = await novu.subscribers.getUnseenCount(subscriberId, false);
      assert.equal(counted.status, 200);
      assert.deepEqual(counted.data, { data: { count: 3 } });
      assert.equal(await seen(), 0);

      const marked = await novu.subscribers.markMessageSeen(subscriberId, a);
      assert.equal(marked.status, 201);
      assert.equal(marked.data.data.length, 1);
      assert.equal(marked.data.data[0]._id, a);
      assert.equal(marked.data.data[0].seen, true);
      assert.equal(marked.data.data[0].read, false);
      assert.equal(marked.data.data[0].lastSeenDate, new Date(ctx.clock.now()).toISOString());
      assert.deepEqual([await unseen(), await seen()], [2, 1]);

      // markMessageRead sends the older body, { mark: { read: true } }: it sets read alone, as Novu's does.
      const read = await novu.subscribers.markMessageRead(subscriberId, b);
      assert.equal(read.status, 201);
      assert.deepEqual([read.data.data[0].seen, read.data.data[0].read], [false, true]);
      assert.ok(read.data.data[0].lastReadDate);
      assert.equal(await unseen(), 2);
      const seenToo = await novu.subscribers.markMessageAs(subscriberId, b, { seen: true });
      assert.deepEqual([seenToo.data.data[0].seen, seenToo.data.data[0].read], [true, true]);
      assert.equal(await unseen(), 1);
      const unread = await novu.subscribers.markMessageAs(subscriberId, b, { read: false });
      assert.equal(unread.status, 201);
      assert.deepEqual([unread.data.data[0].seen, unread.data.data[0].read], [true, false]);
      const both = await novu.subscribers.markMessageAs(subscriberId, c, { seen: true, read: true });
      assert.deepEqual([both.data.data[0].seen, both.data.data[0].read], [true, true]);
      assert.deepEqual(await state(), { [a]: [true, false], [b]: [true, false], [c]: [true, true] });
      assert.equal(await unseen(), 0);

      // markAllMessagesAs takes the four values of the SDK's MessagesStatusEnum; read implies seen.
      const allRead = await novu.subscribers.markAllMessagesAs(subscriberId, MessagesStatusEnum.READ);
      assert.equal(allRead.status, 201);
      assert.deepEqual(allRead.data, { data: 2 }, "two were unread");
      assert.deepEqual(await state(), { [a]: [true, true], [b]: [true, true], [c]: [true, true] });
      const allUnread = await novu.subscribers.markAllMessagesAs(subscriberId, MessagesStatusEnum.UNREAD);
      assert.deepEqual(allUnread.data, { data: 3 });
      assert.deepEqual(await state(), { [a]: [true, false], [b]: [true, false], [c]: [true, false] });
      const allUnseen = await novu.subscribers.markAllMessagesAs(subscriberId, MessagesStatusEnum.UNSEEN);
      assert.deepEqual(allUnseen.data, { data: 3 });
      assert.deepEqual([await unseen(), await seen()], [3, 0]);
      const allSeen = await novu.subscribers.markAllMessagesAs(subscriberId, MessagesStatusEnum.SEEN);
      assert.deepEqual(allSeen.data, { data: 3 });
      assert.deepEqual([await unseen(), await seen()], [0, 3]);
      assert.deepEqual(await state(), { [a]: [true, false], [b]: [true, false], [c]: [true, false] });
      const readAfterSeen = await novu.subscribers.markAllMessagesAs(subscriberId, MessagesStatusEnum.READ);
      assert.deepEqual(readAfterSeen.data, { data: 3 }, "seen but unread messages are marked read");
      assert.deepEqual(
        (await novu.subscribers.markAllMessagesAs(subscriberId, MessagesStatusEnum.READ)).data,
        { data: 0 },
        "nothing left to change",
      );

      // Another subscriber's message id changes nothing.
      await novu.subscribers.identify("someone-else", {});
      const foreign = await novu.subscribers.markMessageAs("someone-else", a, { seen: false });
      assert.deepEqual(foreign.data.data, []);
      assert.equal(await unseen(), 0);
      assert.equal((await failure(novu.subscribers.getUnseenCount("nobody", false))).status, 404);
    });

    test("markMessageActionSeen records the button's action on the message", async () => {
      const { novu, subscriberId, messages } = await inbox();
      const [message] = messages;
      assert.ok(message);
      const res = await novu.subscribers.markMessageActionSeen(
        subscriberId,
        message._id,
        ButtonTypeEnum.PRIMARY,
        { status: MessageActionStatusEnum.DONE, payload: { accepted: true } },
      );
      assert.equal(res.status, 201);
      assert.equal(res.data.data._id, message._id);
      assert.deepEqual(res.data.data.cta.action, {
        status: "done",
        result: { type: "primary", payload: { accepted: true } },
      });
      const [stored] = await feedOf(novu, subscriberId, 3);
      assert.deepEqual(stored?.cta.action?.status, "done");
    });

    test("messages.list (subscriberId, channel, transactionIds, page) and deleteById, deleteByTransactionId", async () => {
      const { novu, subscriberId, messages } = await inbox();
      await novu.trigger((await novu.notificationTemplates.getAll()).data.data[0].triggers[0].identifier, {
        to: "other-reader",
        payload: { note: "elsewhere" },
        transactionId: "other",
      });
      await feedOf(novu, "other-reader", 1);

      const all = await novu.messages.list();
      assert.equal(all.status, 200);
      assert.equal(all.data.totalCount, 4);
      const mine = await novu.messages.list({ subscriberId, channel: ChannelTypeEnum.IN_APP });
      assert.deepEqual(
        mine.data.data.map((m: FeedMessage) => m._id),
        messages.map((m) => m._id),
      );
      const paged = await novu.messages.list({ subscriberId, page: 1, limit: 2 });
      assert.deepEqual(
        [paged.data.page, paged.data.pageSize, paged.data.totalCount, paged.data.hasMore],
        [1, 2, 3, false],
      );
      assert.deepEqual(contents(paged.data.data), ["Hi Reader, n0"]);
      assert.equal((await novu.messages.list({ channel: ChannelTypeEnum.EMAIL })).data.totalCount, 0);
      assert.equal((await novu.messages.list({ subscriberId: "nobody" })).data.totalCount, 0);

      // The SDK sends transactionIds as transactionId[]=…
      const byTransaction = await novu.messages.list({ transactionIds: ["inbox-0", "other"] });
      assert.deepEqual(contents(byTransaction.data.data).sort(), ["Hi , elsewhere", "Hi Reader, n0"]);
      const one = await novu.messages.list({ transactionIds: ["inbox-1"] });
      assert.deepEqual(contents(one.data.data), ["Hi Reader, n1"]);

      const [newest] = messages;
      assert.ok(newest);
      const deleted = await novu.messages.deleteById(newest._id);
      assert.equal(deleted.status, 200);
      assert.deepEqual(deleted.data, { data: { acknowledged: true, status: "deleted" } });
      assert.equal((await failure(novu.messages.deleteById(newest._id))).status, 404);
      assert.deepEqual(contents(await feedOf(novu, subscriberId, 2)), ["Hi Reader, n1", "Hi Reader, n0"]);
      assert.equal((await novu.subscribers.getUnseenCount(subscriberId, false)).data.data.count, 2);

      const byTx = await novu.messages.deleteByTransactionId("inbox-1");
      assert.equal(byTx.status, 204);
      assert.deepEqual(contents(await feedOf(novu, subscriberId, 1)), ["Hi Reader, n0"]);
      assert.equal((await failure(novu.messages.deleteByTransactionId("inbox-1"))).status, 404);
      assert.equal((await novu.messages.list()).data.totalCount, 2);

      // subscribers.delete takes the subscriber's messages with it.
      assert.equal((await novu.subscribers.delete("other-reader")).status, 200);
      assert.deepEqual(contents((await novu.messages.list()).data.data), ["Hi Reader, n0"]);
      assert.equal((await novu.messages.list({ transactionIds: ["other"] })).data.totalCount, 0);
    });

    test("executionDetails.get: what happened to a notification's jobs", async () => {
      const { novu, messages } = await inbox();
      const [message] = messages;
      assert.ok(message);
      const res = await novu.executionDetails.get({
        notificationId: message._notificationId,
        subscriberId: "reader",
      });
      assert.equal(res.status, 200);
      const details = res.data.data as { _notificationId: string; status: string; detail: string }[];
      assert.ok(details.length > 0);
      for (const d of details) assert.equal(d._notificationId, message._notificationId);
      assert.ok(details.some((d) => d.status === "Success" && d.detail === "In-app message created"));
    });
  },
  { clock: () => new ManualClock(START) },
);
