import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { before, test } from "node:test";
import { Novu } from "@novu/api";
import { HTTPClient } from "@novu/api/lib/http.js";
import { ClientSDK } from "@novu/api/lib/sdks.js";
import * as errors from "@novu/api/models/errors/index.js";
import { createWorkflow, nextMillisecond, uniqueName } from "./factories.ts";
import { anonymous, forEachBackend, type TestContext } from "./harness.ts";
import { OBJECT_ID } from "./patterns.ts";
import { poll } from "./poll.ts";

// Novu's current server SDK, @novu/api 3.19.1, against the real server over a socket, as a user
// configures it: `serverURL` at the server, the API key as `secretKey`. Every call goes through the
// SDK's own request building and its strict zod models of the answers (a field missing, or of
// another type, makes it throw), and every error comes back as the SDK's own error class. Each
// function's effect is checked through another call. One app per backend serves the whole file.

const hexId = () => randomBytes(12).toString("hex");

/** What the SDK throws for an HTTP error: one of its error models, parsed (never a validation failure). */
async function sdkError<E extends errors.NovuError>(
  call: Promise<unknown>,
  model: abstract new (...args: never[]) => E,
): Promise<E> {
  try {
    await call;
  } catch (error) {
    assert.ok(
      error instanceof model,
      `expected ${model.name}, got ${(error as Error).name}: ${(error as Error).message}`,
    );
    return error;
  }
  assert.fail("the call succeeded");
}

/** Every SDK function a test here called, by its path (`subscribers.preferences.list`). */
const called = new Set<string>();

/** The SDK client (or one of its namespaces), recording each function called through it. */
function recording<T extends object>(target: T, prefix = ""): T {
  return new Proxy(target, {
    get(object, property) {
      const value = Reflect.get(object, property, object);
      if (typeof property !== "string" || property.startsWith("_")) return value;
      if (value instanceof ClientSDK) return recording(value, `${prefix}${property}.`);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        called.add(`${prefix}${property}`);
        return value.apply(object, args);
      };
    },
  });
}

/** Every function of the SDK, by its path, read from the client's namespaces (getters) and methods. */
function sdkFunctions(client: object, prefix = ""): string[] {
  const found: string[] = [];
  for (
    let proto = Object.getPrototypeOf(client);
    proto && proto !== ClientSDK.prototype;
    proto = Object.getPrototypeOf(proto)
  ) {
    for (const [name, descriptor] of Object.entries(Object.getOwnPropertyDescriptors(proto))) {
      if (name === "constructor" || name.startsWith("_")) continue;
      if (descriptor.get)
        found.push(...sdkFunctions((client as Record<string, object>)[name] as object, `${prefix}${name}.`));
      else if (typeof descriptor.value === "function") found.push(`${prefix}${name}`);
    }
  }
  return found;
}

/** The method and path a function calls, read from its source in the package (`src/funcs/<name>.ts`). */
function routeOf(fn: string): { method: string; path: string } {
  const name = fn
    .split(".")
    .map((part, i) => (i === 0 ? part : part[0]?.toUpperCase() + part.slice(1)))
    .join("");
  const source = fs
    .readFileSync(path.join(process.cwd(), "node_modules/@novu/api/src/funcs", `${name}.ts`), "utf8")
    .replace(/\s+/g, " ");
  const method = /method: "([A-Z]+)"/.exec(source)?.[1];
  const route = /pathToFunc\( ?"([^"]+)"/.exec(source)?.[1];
  assert.ok(method && route, `the route of ${fn}`);
  return { method, path: route };
}

/**
 * The functions of @novu/api 3.19.1 driven by the tests of another file, which this test checks by
 * finding each call there (`<client>.<function>(`).
 */
const DRIVEN_ELSEWHERE: { functions: string; file: string }[] = [
  { functions: "workflows.", file: "test/sdk-workflows.test.ts test/promotion.test.ts" },
  {
    functions:
      "environments.create environments.update environments.delete environments.diff environments.publish environments.getTags",
    file: "test/promotion.test.ts",
  },
];

function drivenElsewhere(fn: string) {
  return DRIVEN_ELSEWHERE.find(({ functions }) =>
    functions.split(" ").some((entry) => (entry.endsWith(".") ? fn.startsWith(entry) : fn === entry)),
  );
}

/** The functions of @novu/api 3.19.1 that Tidings does not serve, each with why. Every other one is driven by a test. */
const UNSUPPORTED: { functions: string; why: string }[] = [
  {
    functions: "contexts.",
    why: "Tidings has no contexts (a trigger's or a subscription's context keys are accepted and not used)",
  },
  {
    functions: "layouts.generatePreview",
    why: "a layout is previewed by sending an email through it: there is no preview of a layout alone",
  },
  { functions: "translations.", why: "Tidings has no translations" },
  { functions: "agents.", why: "Tidings has no conversational agents" },
  {
    functions: "channelConnections. channelEndpoints.",
    why: "chat apps are reached through webhooks a subscriber's credentials hold; there are no OAuth connections or endpoints",
  },
  { functions: "domains.", why: "Tidings receives no email: no inbound domains or routes" },
  { functions: "environmentVariables.", why: "Tidings has no environment variables" },
  { functions: "activity.track", why: "providers' delivery webhooks are not received" },
  {
    functions:
      "integrations.generateChatOAuthUrl integrations.generateConnectOAuthUrl integrations.generateLinkUserOAuthUrl integrations.linkChannelEndpoint",
    why: "chat apps are reached through webhooks a subscriber's credentials hold; there are no OAuth links",
  },
  {
    functions:
      "integrations.integrationsControllerAutoConfigureIntegration integrations.integrationsControllerConfigureIntegrationWebhook integrations.createMobileLink",
    why: "no provider is configured automatically, receives webhooks, or is set up from a phone",
  },
];

/** Why a function is unsupported, or undefined when it is supported. */
function unsupported(fn: string) {
  return UNSUPPORTED.find(({ functions }) =>
    functions.split(" ").some((entry) => (entry.endsWith(".") ? fn.startsWith(entry) : fn === entry)),
  );
}

/** No retries unless a test asks for them: a refusal is then seen as it is. */
const NO_RETRIES = { strategy: "none" } as const;

function serve(ctx: TestContext) {
  let serverURL = "";
  before(async () => {
    await ctx.app.listen({ host: "127.0.0.1", port: 0 });
    serverURL = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`;
  });
  return {
    sdk: (secretKey: string, options: Partial<ConstructorParameters<typeof Novu>[0]> = {}) =>
      recording(new Novu({ secretKey, serverURL, retryConfig: NO_RETRIES, ...options })),
    url: () => serverURL,
  };
}

forEachBackend("@novu/api 3.19 against a running server", (ctx) => {
  const { sdk } = serve(ctx);

  /** A Development tenant, its SDK client, and an active workflow with one in-app step. */
  async function setup() {
    const tenant = await ctx.tenant();
    const novu = sdk(tenant.dev.apiKey);
    const workflow = await createWorkflow(ctx, tenant.dev.apiKey, tenant.dev.generalGroupId, {
      name: uniqueName("SDK"),
      active: true,
      steps: [{ template: { type: "in_app", content: "Hello {{subscriber.firstName}}, {{n}}" } }],
    });
    return { tenant, novu, workflow, identifier: workflow.triggers[0].identifier as string };
  }

  /** The in-app messages of a transaction, once `count` of them are there. */
  async function messagesOf(novu: Novu, transactionId: string, count: number) {
    return poll(
      async () => (await novu.messages.retrieve({ transactionId: [transactionId] })).result.data,
      (found) => found.length >= count,
      { what: `${count} message(s) of ${transactionId}` },
    );
  }

  test("subscribers: create (failIfExists), retrieve, patch, search, delete", async () => {
    const { novu } = await setup();
    const subscriberId = hexId();
    const created = await novu.subscribers.create({
      subscriberId,
      firstName: "Ada",
      lastName: "Lovelace",
      email: "ada@example.com",
      phone: "+441234567890",
      locale: "en-GB",
      timezone: "Europe/London",
      data: { plan: "pro" },
    });
    assert.match(created.result.id ?? "", OBJECT_ID);
    assert.equal(created.result.subscriberId, subscriberId);
    assert.equal(created.result.deleted, false);
    assert.match(created.result.organizationId, OBJECT_ID);
    assert.match(created.result.environmentId, OBJECT_ID);

    // Again without failIfExists: an update (Novu's upsert), the same _id.
    const again = await novu.subscribers.create({ subscriberId, firstName: "Augusta" });
    assert.equal(again.result.id, created.result.id);
    assert.equal(again.result.firstName, "Augusta");
    assert.equal(again.result.lastName, "Lovelace");

    // With failIfExists: a 409 the SDK parses as its own model, carrying the subscriber; nothing changes.
    const exists = await sdkError(
      novu.subscribers.create({ subscriberId, firstName: "Nobody" }, true),
      errors.SubscriberResponseDto,
    );
    assert.equal(exists.statusCode, 409);
    assert.equal(exists.subscriberId, subscriberId);
    assert.equal(exists.firstName, "Augusta");
    assert.equal((await novu.subscribers.retrieve(subscriberId)).result.firstName, "Augusta");
    const fresh = hexId();
    assert.equal((await novu.subscribers.create({ subscriberId: fresh }, true)).result.subscriberId, fresh);

    const patched = await novu.subscribers.patch({ lastName: "King", avatar: null }, subscriberId);
    assert.equal(patched.result.lastName, "King");
    const read = await novu.subscribers.retrieve(subscriberId);
    assert.equal(read.result.lastName, "King");
    assert.deepEqual(read.result.data, { plan: "pro" });
    assert.equal(read.result.timezone, "Europe/London");

    const byEmail = await novu.subscribers.search({ email: "ADA@example" });
    assert.deepEqual(
      byEmail.result.data.map((s) => s.subscriberId),
      [subscriberId],
    );
    const byName = await novu.subscribers.search({ name: "augusta k" });
    assert.deepEqual(
      byName.result.data.map((s) => s.subscriberId),
      [subscriberId],
    );
    assert.equal((await novu.subscribers.search({ phone: "1234567" })).result.data.length, 1);
    assert.equal(
      (await novu.subscribers.search({ subscriberId: fresh })).result.data[0]?.subscriberId,
      fresh,
    );

    const deleted = await novu.subscribers.delete(fresh);
    assert.deepEqual(deleted.result, { acknowledged: true, status: "deleted" });
    const gone = await sdkError(novu.subscribers.retrieve(fresh), errors.ErrorDto);
    assert.equal(gone.statusCode, 404);
    assert.match(gone.message, /was not found/);
  });

  test("subscribers.search pages by cursor, both ways, in either order", async () => {
    const { novu } = await setup();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const subscriberId = `page-${i}-${hexId()}`;
      await novu.subscribers.create({ subscriberId, firstName: "Pager" });
      ids.push(subscriberId);
      // Created in order: each a millisecond after the last.
      await nextMillisecond();
    }
    const walk = async (orderDirection: "ASC" | "DESC") => {
      const seen: string[] = [];
      let after: string | undefined;
      let pages = 0;
      do {
        const page = (await novu.subscribers.search({ name: "pager", limit: 2, orderDirection, after }))
          .result;
        assert.equal(page.totalCount, 5);
        assert.equal(page.totalCountCapped, false);
        assert.equal(page.previous === null, pages === 0, "previous is null on the first page only");
        seen.push(...page.data.map((s) => s.subscriberId));
        after = page.next ?? undefined;
        pages++;
      } while (after);
      assert.equal(pages, 3);
      return seen;
    };
    assert.deepEqual(await walk("ASC"), ids);
    assert.deepEqual(await walk("DESC"), [...ids].reverse());

    // Back from the last page with `before`.
    const first = (await novu.subscribers.search({ name: "pager", limit: 2, orderDirection: "ASC" })).result;
    const second = (
      await novu.subscribers.search({
        name: "pager",
        limit: 2,
        orderDirection: "ASC",
        after: first.next ?? "",
      })
    ).result;
    const back = (
      await novu.subscribers.search({
        name: "pager",
        limit: 2,
        orderDirection: "ASC",
        before: second.previous ?? "",
      })
    ).result;
    assert.deepEqual(
      back.data.map((s) => s.subscriberId),
      ids.slice(0, 2),
    );
    assert.equal(back.previous, null);
    assert.equal(back.next, first.next);

    const unknown = await sdkError(
      novu.subscribers.search({ after: "0123456789abcdef01234567" }),
      errors.ErrorDto,
    );
    assert.equal(unknown.statusCode, 400);
  });

  test("trigger, triggerBulk, triggerBroadcast and cancel; an unknown workflow is the SDK's own 422", async () => {
    const { novu, identifier } = await setup();
    const subscriberId = hexId();
    const one = await novu.trigger({
      workflowId: identifier,
      to: { subscriberId, firstName: "Lin" },
      payload: { n: 1 },
    });
    assert.equal(one.result.acknowledged, true);
    assert.equal(one.result.status, "processed");
    const [message] = await messagesOf(novu, one.result.transactionId ?? "", 1);
    assert.equal(message?.content, "Hello Lin, 1");

    const bulk = await novu.triggerBulk({
      events: [
        { workflowId: identifier, to: subscriberId, payload: { n: 2 } },
        { workflowId: "no-such-workflow", to: subscriberId },
      ],
    });
    assert.equal(bulk.result[0]?.status, "processed");
    assert.equal(bulk.result[1]?.acknowledged, false);
    assert.equal(bulk.result[1]?.status, "error");
    assert.match(bulk.result[1]?.error?.[0] ?? "", /workflow_not_found/);
    await messagesOf(novu, bulk.result[0]?.transactionId ?? "", 1);

    const other = hexId();
    await novu.subscribers.create({ subscriberId: other, firstName: "Mo" });
    const broadcast = await novu.triggerBroadcast({ name: identifier, payload: { n: 3 } });
    assert.equal(broadcast.result.status, "processed");
    const everyone = await messagesOf(novu, broadcast.result.transactionId ?? "", 2);
    assert.deepEqual(everyone.map((m) => m.content).sort(), ["Hello Lin, 3", "Hello Mo, 3"]);

    const unknown = await sdkError(
      novu.trigger({ workflowId: "no-such-workflow", to: subscriberId }),
      errors.ValidationErrorDto,
    );
    assert.equal(unknown.statusCode, 422);
    assert.match(unknown.message, /workflow_not_found/);
    assert.deepEqual(Object.keys(unknown.errors), ["name"]);

    const invalid = await sdkError(
      novu.trigger({ workflowId: identifier, to: subscriberId, transactionId: "t".repeat(256) }),
      errors.PayloadValidationExceptionDto,
    );
    assert.equal(invalid.statusCode, 400);
    assert.equal(invalid.type, "PAYLOAD_VALIDATION_ERROR");
    assert.deepEqual(
      invalid.errors.map((e) => e.field),
      ["transactionId"],
    );

    const canceled = await novu.cancel(hexId());
    assert.equal(canceled.result, false);
  });

  test("subscribers.preferences: list, update (global with its schedule, one workflow), bulkUpdate; a trigger honours them", async () => {
    const { tenant, novu } = await setup();
    const workflow = await createWorkflow(ctx, tenant.dev.apiKey, tenant.dev.generalGroupId, {
      name: uniqueName("SDK preferences"),
      active: true,
      steps: [
        { template: { type: "in_app", content: "In the inbox" } },
        { template: { type: "email", subject: "Hi", content: "By email" } },
      ],
    });
    const identifier: string = workflow.triggers[0].identifier;
    const critical = await createWorkflow(ctx, tenant.dev.apiKey, tenant.dev.generalGroupId, {
      name: uniqueName("SDK critical"),
      active: true,
      critical: true,
      steps: [{ template: { type: "in_app", content: "Always" } }],
    });
    const subscriberId = hexId();
    await novu.subscribers.create({ subscriberId });

    const initial = (await novu.subscribers.preferences.list({ subscriberId })).result;
    assert.deepEqual(initial.global, { enabled: true, channels: { inApp: true, email: true } });
    const mine = initial.workflows.find((w) => w.workflow.identifier === identifier);
    assert.deepEqual(mine?.channels, { inApp: true, email: true });
    assert.deepEqual(mine?.overrides, [
      { channel: "in_app", source: "template" },
      { channel: "email", source: "template" },
    ]);
    assert.equal(mine?.workflow.slug, `${identifier}_wf_${workflow._id}`);
    assert.equal(
      initial.workflows.some((w) => w.workflow.identifier === critical.triggers[0].identifier),
      false,
      "critical workflows only when asked for",
    );
    const all = (await novu.subscribers.preferences.list({ subscriberId, criticality: "all" })).result;
    assert.equal(all.workflows.length, initial.workflows.length + 1);

    const schedule = {
      isEnabled: true,
      weeklySchedule: { monday: { isEnabled: true, hours: [{ start: "09:00 AM", end: "05:00 PM" }] } },
    };
    const global = (
      await novu.subscribers.preferences.update({ channels: { email: false }, schedule }, subscriberId)
    ).result;
    assert.deepEqual(global.global, { enabled: true, channels: { inApp: true, email: false }, schedule });

    const own = (
      await novu.subscribers.preferences.update(
        { workflowId: identifier, channels: { inApp: false } },
        subscriberId,
      )
    ).result;
    const changed = own.workflows.find((w) => w.workflow.identifier === identifier);
    assert.deepEqual(changed?.channels, { inApp: false, email: true });
    assert.deepEqual(changed?.overrides, [
      { channel: "in_app", source: "subscriber" },
      { channel: "email", source: "template" },
    ]);

    // The trigger honours both: the in-app step off for the workflow, email off globally.
    const sent = await novu.trigger({ workflowId: identifier, to: subscriberId });
    const jobs = await poll(
      async () => {
        const page = await novu.notifications.list({
          transactionId: sent.result.transactionId ?? "",
          page: 0,
          limit: 10,
        });
        return page.result.data[0]?.jobs ?? [];
      },
      (found) => found.length === 2 && found.every((job) => job.status === "skipped"),
      { what: "both steps skipped by the preferences" },
    );
    assert.deepEqual(
      jobs.map((job) => job.type),
      ["in_app", "email"],
    );

    const bulk = (
      await novu.subscribers.preferences.bulkUpdate(
        { preferences: [{ workflowId: workflow._id, channels: { inApp: true } }] },
        subscriberId,
      )
    ).result;
    assert.equal(bulk.length, 1);
    assert.equal(bulk[0]?.level, "template");
    assert.deepEqual(bulk[0]?.channels, { inApp: true, email: true });
    assert.equal(bulk[0]?.workflow?.identifier, identifier);
    const after = (await novu.subscribers.preferences.list({ subscriberId })).result;
    assert.deepEqual(after.workflows.find((w) => w.workflow.identifier === identifier)?.channels, {
      inApp: true,
      email: true,
    });

    const refused = await sdkError(
      novu.subscribers.preferences.bulkUpdate(
        { preferences: [{ workflowId: "no-such-workflow", channels: { email: true } }] },
        subscriberId,
      ),
      errors.ErrorDto,
    );
    assert.equal(refused.statusCode, 404);
    const criticalOff = await sdkError(
      novu.subscribers.preferences.update(
        { workflowId: critical._id, channels: { inApp: false } },
        subscriberId,
      ),
      errors.ErrorDto,
    );
    assert.equal(criticalOff.statusCode, 400);
  });

  test("topics: create (upsert, failIfExists), list by cursor and filters, get, update, delete", async () => {
    const { novu } = await setup();
    const key = `team:${hexId()}`;
    const created = await novu.topics.create({ key, name: "Team", data: { floor: 3 } });
    assert.match(created.result.id, OBJECT_ID);
    assert.equal(created.result.key, key);
    assert.deepEqual(created.result.data, { floor: 3 });
    // Again: the topic with what was sent (an update), the same _id.
    const again = await novu.topics.create({ key, name: "The team" });
    assert.equal(again.result.id, created.result.id);
    assert.equal(again.result.name, "The team");
    const exists = await sdkError(novu.topics.create({ key, name: "Other" }, true), errors.TopicResponseDto);
    assert.equal(exists.statusCode, 409);
    assert.equal(exists.key, key);
    // (The error class keeps its own `name`: the topic's is in data$.)
    assert.equal(exists.data$.name, "The team");

    const updated = await novu.topics.update({ name: "Renamed", data: { floor: 4 } }, key);
    assert.equal(updated.result.name, "Renamed");
    const read = await novu.topics.get(key);
    assert.equal(read.result.name, "Renamed");
    assert.deepEqual(read.result.data, { floor: 4 });

    const other = `team:${hexId()}`;
    await novu.topics.create({ key: other, name: "Other team" });
    const first = (await novu.topics.list({ limit: 1, orderDirection: "ASC" })).result;
    assert.equal(first.totalCount, 2);
    assert.deepEqual(
      first.data.map((t) => t.key),
      [key],
    );
    const second = (await novu.topics.list({ limit: 1, orderDirection: "ASC", after: first.next ?? "" }))
      .result;
    assert.deepEqual(
      second.data.map((t) => t.key),
      [other],
    );
    assert.equal(second.next, null);
    assert.deepEqual(
      (await novu.topics.list({ key: other })).result.data.map((t) => t.key),
      [other],
    );
    assert.deepEqual(
      (await novu.topics.list({ name: "renamed" })).result.data.map((t) => t.key),
      [key],
    );

    // A topic with subscribers goes with them (the /v1 delete refuses).
    const member = hexId();
    await novu.subscribers.create({ subscriberId: member });
    await novu.topics.subscriptions.create({ subscriptions: [member] }, key);
    assert.deepEqual((await novu.topics.delete(key)).result, { acknowledged: true });
    const gone = await sdkError(novu.topics.get(key), errors.ErrorDto);
    assert.equal(gone.statusCode, 404);
    assert.equal((await novu.subscribers.topics.list({ subscriberId: member })).result.data.length, 0);
  });

  test("topics.subscriptions with their preferences, honoured by a topic trigger; subscribers.topics.list; topics.subscribers.retrieve", async () => {
    const { novu, workflow, identifier } = await setup();
    const key = `news:${hexId()}`;
    const [ann, bob, cy] = [hexId(), hexId(), hexId()];
    for (const [subscriberId, firstName] of [
      [ann, "Ann"],
      [bob, "Bob"],
      [cy, "Cy"],
    ] as const)
      await novu.subscribers.create({
        subscriberId,
        firstName,
        email: `${firstName.toLowerCase()}@example.com`,
      });

    const made = await novu.topics.subscriptions.create(
      {
        name: "News",
        subscriptions: [
          ann,
          { subscriberId: bob, identifier: "bob-news", name: "Bob's news" },
          "nobody-here",
        ],
        preferences: [{ workflowId: identifier, enabled: true }],
      },
      key,
    );
    assert.deepEqual(made.result.meta, { totalCount: 3, successful: 2, failed: 1 });
    assert.deepEqual(
      made.result.errors?.map((e) => [e.subscriberId, e.code]),
      [["nobody-here", "SUBSCRIBER_NOT_FOUND"]],
    );
    const byBob = made.result.data.find((s) => s.subscriber?.subscriberId === bob);
    assert.equal(byBob?.identifier, "bob-news");
    assert.equal(byBob?.name, "Bob's news");
    assert.equal(byBob?.topic.key, key);
    assert.equal(byBob?.topic.name, "News");
    assert.equal(byBob?.subscriber?.email, "bob@example.com");
    assert.deepEqual(
      byBob?.preferences?.map((p) => [p.workflow?.id, p.enabled]),
      [[workflow._id, true]],
    );
    const annIdentifier = `tk_${key}:si_${ann}`;
    assert.equal(made.result.data.find((s) => s.subscriber?.subscriberId === ann)?.identifier, annIdentifier);

    // Ann turns the workflow off on her subscription.
    const changed = await novu.topics.subscriptions.update({
      topicKey: key,
      identifier: annIdentifier,
      updateTopicSubscriptionRequestDto: {
        name: "Ann's",
        preferences: [{ workflowId: identifier, enabled: false }],
      },
    });
    assert.equal(changed.result.name, "Ann's");
    assert.deepEqual(
      changed.result.preferences?.map((p) => p.enabled),
      [false],
    );
    const read = await novu.topics.subscriptions.getSubscription(key, annIdentifier);
    assert.equal(read.result.identifier, annIdentifier);
    assert.equal(read.result.name, "Ann's");
    assert.deepEqual(
      read.result.preferences?.map((p) => [p.workflow?.identifier, p.enabled]),
      [[identifier, false]],
    );

    // A trigger to the topic: Bob is notified, Ann is not (held back at the fan-out).
    const sent = await novu.trigger({
      workflowId: identifier,
      to: { type: "Topic", topicKey: key },
      payload: { n: 7 },
    });
    const [message] = await messagesOf(novu, sent.result.transactionId ?? "", 1);
    assert.equal(message?.content, "Hello Bob, 7");
    const notified = await novu.notifications.list({
      transactionId: sent.result.transactionId ?? "",
      page: 0,
      limit: 10,
    });
    assert.deepEqual(
      notified.result.data.map((n) => n.subscriber?.subscriberId),
      [bob],
    );

    const listed = (await novu.topics.subscriptions.list({ topicKey: key, orderDirection: "ASC" })).result;
    assert.equal(listed.totalCount, 2);
    // Made by one request, within one second: their order is the ids', which are random within it.
    const inOrder = listed.data.map((s) => s.subscriber.subscriberId);
    assert.deepEqual([...inOrder].sort(), [ann, bob].sort());
    const pageOne = (await novu.topics.subscriptions.list({ topicKey: key, limit: 1, orderDirection: "ASC" }))
      .result;
    const pageTwo = (
      await novu.topics.subscriptions.list({
        topicKey: key,
        limit: 1,
        orderDirection: "ASC",
        after: pageOne.next ?? "",
      })
    ).result;
    assert.deepEqual(
      [...pageOne.data, ...pageTwo.data].map((s) => s.subscriber.subscriberId),
      inOrder,
    );
    assert.deepEqual(
      (await novu.topics.subscriptions.list({ topicKey: key, subscriberId: bob })).result.data.map(
        (s) => s.identifier,
      ),
      ["bob-news"],
    );
    const bobs = (await novu.subscribers.topics.list({ subscriberId: bob })).result;
    assert.deepEqual(
      bobs.data.map((s) => [s.topic.key, s.identifier]),
      [[key, "bob-news"]],
    );
    assert.equal(
      (await novu.subscribers.topics.list({ subscriberId: bob, key: "no-such-topic" })).result.data.length,
      0,
    );

    const member = await novu.topics.subscribers.retrieve(bob, key);
    assert.equal(member.result.topicKey, key);
    assert.equal(member.result.externalSubscriberId, bob);

    const removed = await novu.topics.subscriptions.delete(
      { subscriptions: [{ identifier: "bob-news" }, cy] },
      key,
    );
    assert.deepEqual(removed.result.meta, { totalCount: 2, successful: 1, failed: 1 });
    assert.deepEqual(
      removed.result.data.map((s) => s.identifier),
      ["bob-news"],
    );
    assert.deepEqual(
      (await novu.topics.subscriptions.list({ topicKey: key })).result.data.map(
        (s) => s.subscriber.subscriberId,
      ),
      [ann],
    );
    const noneLeft = await sdkError(
      novu.topics.subscriptions.delete({ subscriberIds: [bob] }, key),
      errors.ErrorDto,
    );
    assert.equal(noneLeft.statusCode, 404);
  });

  test("a trigger the SDK retries runs once: the idempotency-key it sends makes the transactionId", async () => {
    const { tenant, identifier } = await setup();
    // The first answer to a trigger is lost on its way back (a proxy's 502): the SDK retries, with the same key.
    let lost = 0;
    const httpClient = new HTTPClient({
      fetcher: async (input, init) => {
        const response = await fetch(input, init);
        const url = input instanceof Request ? input.url : String(input);
        if (lost === 0 && new URL(url).pathname === "/v1/events/trigger") {
          lost++;
          await response.text();
          return new Response("Bad Gateway", { status: 502 });
        }
        return response;
      },
    });
    const retrying = sdk(tenant.dev.apiKey, {
      httpClient,
      retryConfig: {
        strategy: "backoff",
        backoff: { initialInterval: 1, maxInterval: 5, exponent: 1, maxElapsedTime: 10_000 },
        retryConnectionErrors: true,
      },
    });
    const subscriberId = hexId();
    const sent = await retrying.trigger({ workflowId: identifier, to: subscriberId, payload: { n: 1 } });
    assert.equal(lost, 1, "the first answer was lost and the call retried");
    assert.deepEqual(sent.headers["idempotency-replay"], ["true"], "the retry got the first acknowledgement");
    const novu = sdk(tenant.dev.apiKey);
    await messagesOf(novu, sent.result.transactionId ?? "", 1);
    const notifications = await novu.notifications.list({
      subscriberIds: [subscriberId],
      page: 0,
      limit: 10,
    });
    assert.equal(notifications.result.data.length, 1, "one notification, not two");

    // The same key again by hand: the first acknowledgement, for bulk and broadcast too; another request under it: 422.
    const key = `key-${hexId()}`;
    const first = await novu.trigger({ workflowId: identifier, to: subscriberId, payload: { n: 2 } }, key);
    const again = await novu.trigger({ workflowId: identifier, to: subscriberId, payload: { n: 2 } }, key);
    assert.equal(again.result.transactionId, first.result.transactionId);
    const reused = await sdkError(
      novu.trigger({ workflowId: identifier, to: subscriberId, payload: { n: 3 } }, key),
      errors.ValidationErrorDto,
    );
    assert.equal(reused.statusCode, 422);
    assert.deepEqual(Object.keys(reused.errors), ["idempotency-key"]);
    const bulkKey = `key-${hexId()}`;
    const events = { events: [{ workflowId: identifier, to: subscriberId, payload: { n: 4 } }] };
    const bulk = await novu.triggerBulk(events, bulkKey);
    const bulkAgain = await novu.triggerBulk(events, bulkKey);
    assert.equal(bulkAgain.result[0]?.transactionId, bulk.result[0]?.transactionId);
    const broadcastKey = `key-${hexId()}`;
    const everyone = await novu.triggerBroadcast({ name: identifier, payload: { n: 5 } }, broadcastKey);
    const everyoneAgain = await novu.triggerBroadcast({ name: identifier, payload: { n: 5 } }, broadcastKey);
    assert.equal(everyoneAgain.result.transactionId, everyone.result.transactionId);
    for (const transactionId of [
      first.result.transactionId,
      bulk.result[0]?.transactionId,
      everyone.result.transactionId,
    ])
      await messagesOf(novu, transactionId ?? "", 1);
    const all = await novu.notifications.list({ subscriberIds: [subscriberId], page: 0, limit: 10 });
    assert.equal(all.result.data.length, 4, "each of the four triggers ran once");
  });

  test("cancel: a delayed trigger is canceled and sends nothing", async () => {
    const { tenant, novu } = await setup();
    const delayed = await createWorkflow(ctx, tenant.dev.apiKey, tenant.dev.generalGroupId, {
      name: uniqueName("SDK delayed"),
      active: true,
      steps: [
        { template: { type: "delay" }, metadata: { amount: 1, unit: "days", type: "regular" } },
        { template: { type: "in_app", content: "Later" } },
      ],
    });
    const sent = await novu.trigger({ workflowId: delayed.triggers[0].identifier, to: hexId() });
    const transactionId = sent.result.transactionId ?? "";
    await poll(
      async () =>
        (await novu.notifications.list({ transactionId, page: 0, limit: 1 })).result.data[0]?.jobs?.[0]
          ?.status,
      (status) => status === "delayed",
      { what: "the delay to start" },
    );
    assert.equal((await novu.cancel(transactionId)).result, true);
    const jobs =
      (await novu.notifications.list({ transactionId, page: 0, limit: 1 })).result.data[0]?.jobs ?? [];
    assert.deepEqual(
      jobs.map((job) => job.status),
      ["canceled", "canceled"],
    );
    assert.equal((await novu.cancel(transactionId)).result, false, "nothing left to cancel");
  });

  test("subscribers' v1 functions: createBulk, credentials update/append/delete, properties.updateOnlineFlag", async () => {
    const { novu } = await setup();
    const [one, two] = [hexId(), hexId()];
    const bulk = await novu.subscribers.createBulk({
      subscribers: [
        { subscriberId: one, firstName: "One" },
        { subscriberId: two },
        { subscriberId: one, lastName: "Uno" },
        { subscriberId: "bad", email: "not-an-email" },
      ],
    });
    assert.deepEqual(bulk.result.created.map((c) => c.subscriberId).sort(), [one, two].sort());
    assert.deepEqual(
      bulk.result.updated.map((c) => c.subscriberId),
      [one],
    );
    assert.deepEqual(
      bulk.result.failed.map((c) => c.subscriberId),
      ["bad"],
    );
    const read = (await novu.subscribers.retrieve(one)).result;
    assert.deepEqual([read.firstName, read.lastName], ["One", "Uno"]);

    const slack = await novu.subscribers.credentials.update(
      { providerId: "slack", credentials: { webhookUrl: "https://hooks.slack.com/services/T/B/secret" } },
      one,
    );
    assert.deepEqual(
      slack.result.channels?.map((c) => [c.providerId, c.credentials.webhookUrl]),
      [["slack", "https://hooks.slack.com/********"]],
    );
    await novu.subscribers.credentials.append(
      { providerId: "fcm", credentials: { deviceTokens: ["a"] } },
      one,
    );
    const appended = await novu.subscribers.credentials.append(
      { providerId: "fcm", credentials: { deviceTokens: ["b"] } },
      one,
    );
    assert.equal(
      appended.result.channels?.find((c) => c.providerId === "fcm")?.credentials.deviceTokens?.length,
      2,
    );
    await novu.subscribers.credentials.delete(one, "slack");
    assert.deepEqual(
      (await novu.subscribers.retrieve(one)).result.channels?.map((c) => c.providerId),
      ["fcm"],
    );

    const online = await novu.subscribers.properties.updateOnlineFlag({ isOnline: true }, two);
    assert.equal(online.result.isOnline, true);
    assert.equal((await novu.subscribers.retrieve(two)).result.isOnline, true);
  });

  test("subscribers.notifications (v2, the inbox's mirror) and the v1 feed, unseen count and message marks", async () => {
    const { tenant, novu } = await setup();
    const billing = await createWorkflow(ctx, tenant.dev.apiKey, tenant.dev.generalGroupId, {
      name: uniqueName("SDK billing"),
      active: true,
      severity: "high",
      tags: ["billing"],
      steps: [
        {
          template: {
            type: "in_app",
            content: "Invoice {{n}}",
            cta: {
              type: "redirect",
              data: { url: "/invoices/{{n}}" },
              action: {
                buttons: [
                  { type: "primary", content: "Pay" },
                  { type: "secondary", content: "Later" },
                ],
              },
            },
          },
        },
      ],
    });
    const subscriberId = hexId();
    await novu.subscribers.create({ subscriberId, firstName: "Ada" });
    for (const n of [1, 2, 3]) {
      const sent = await novu.trigger({
        workflowId: billing.triggers[0].identifier,
        to: subscriberId,
        payload: { n },
      });
      await messagesOf(novu, sent.result.transactionId ?? "", 1);
    }
    const list = async (query: Record<string, unknown> = {}) =>
      (await novu.subscribers.notifications.list({ subscriberId, limit: 10, ...query })).result.data;
    const [third, second, first] = await list();
    assert.deepEqual([third?.body, second?.body, first?.body], ["Invoice 3", "Invoice 2", "Invoice 1"]);
    assert.equal(first?.severity, "high");
    assert.equal(first?.primaryAction?.label, "Pay");
    const count = async (filter: Record<string, unknown>) =>
      (await novu.subscribers.notifications.count(subscriberId, JSON.stringify([filter]))).result[0]?.count;
    assert.equal(await count({ read: false }), 3);

    const id = (n: { id: string } | undefined) => n?.id ?? "";
    assert.equal(
      (await novu.subscribers.notifications.markAsRead({ subscriberId, notificationId: id(first) })).result
        .isRead,
      true,
    );
    assert.equal(await count({ read: false }), 2);
    assert.equal(
      (await novu.subscribers.notifications.markAsUnread({ subscriberId, notificationId: id(first) })).result
        .isRead,
      false,
    );
    assert.equal(
      (await novu.subscribers.notifications.archive({ subscriberId, notificationId: id(first) })).result
        .isArchived,
      true,
    );
    assert.equal(await count({ archived: true }), 1);
    assert.equal(
      (await novu.subscribers.notifications.unarchive({ subscriberId, notificationId: id(first) })).result
        .isArchived,
      false,
    );
    const snoozed = await novu.subscribers.notifications.snooze({
      subscriberId,
      notificationId: id(second),
      snoozeSubscriberNotificationDto: { snoozeUntil: new Date(Date.now() + 3_600_000) },
    });
    assert.equal(snoozed.result.isSnoozed, true);
    assert.deepEqual(
      (await list()).map((n) => n.body),
      ["Invoice 3", "Invoice 1"],
    );
    assert.equal(
      (await novu.subscribers.notifications.unsnooze({ subscriberId, notificationId: id(second) })).result
        .isSnoozed,
      false,
    );
    const done = await novu.subscribers.notifications.completeAction({
      subscriberId,
      notificationId: id(third),
      actionType: "primary",
    });
    assert.equal(done.result.primaryAction?.isCompleted, true);
    const reverted = await novu.subscribers.notifications.revertAction({
      subscriberId,
      notificationId: id(third),
      actionType: "primary",
    });
    assert.equal(reverted.result.primaryAction?.isCompleted, false);

    // Seen: the first (read, then unread: still seen) and now the third; the second came back from its
    // snooze delivered again, unseen.
    await novu.subscribers.notifications.markAsSeen({ notificationIds: [id(third)] }, subscriberId);
    assert.equal(await count({ seen: true }), 2);

    // The v1 feed and unseen count see the same messages; v1 marks change them for v2 too.
    const feed = (await novu.subscribers.notifications.feed({ subscriberId, limit: 10 })).result;
    assert.equal(feed.totalCount, 3);
    assert.equal(feed.data.find((m) => m.id === id(second))?.seen, false);
    assert.equal((await novu.subscribers.notifications.unseenCount({ subscriberId })).result.count, 1);
    const marked = await novu.subscribers.messages.markAllAs(
      { messageId: id(second), markAs: "read" },
      subscriberId,
    );
    assert.deepEqual(
      marked.result.map((m) => [m.id, m.read, m.seen]),
      [[id(second), true, true]],
    );
    assert.equal((await novu.subscribers.notifications.unseenCount({ subscriberId })).result.count, 0);
    const action = await novu.subscribers.messages.updateAsSeen({
      subscriberId,
      messageId: id(first),
      type: "secondary",
      markMessageActionAsSeenDto: { status: "done" },
    });
    assert.equal(action.result.id, id(first));
    assert.equal((await list()).find((n) => n.id === id(first))?.secondaryAction?.isCompleted, true);
    // The first (read when archived) and the second were read: two change.
    assert.equal((await novu.subscribers.messages.markAll({ markAs: "unread" }, subscriberId)).result, 2);
    assert.equal(await count({ read: false }), 3);

    // The bulk v2 marks, then deletes.
    await novu.subscribers.notifications.markAllAsRead({}, subscriberId);
    assert.equal(await count({ read: false }), 0);
    await novu.subscribers.notifications.markAsUnread({ subscriberId, notificationId: id(first) });
    await novu.subscribers.notifications.archiveAllRead({}, subscriberId);
    assert.deepEqual(
      (await list({ archived: false })).map((n) => n.id),
      [id(first)],
    );
    await novu.subscribers.notifications.archiveAll({}, subscriberId);
    assert.equal(await count({ archived: true }), 3);
    await novu.subscribers.notifications.delete({ subscriberId, notificationId: id(first) });
    assert.equal((await list({ archived: true })).length, 2);
    await novu.subscribers.notifications.deleteAll({}, subscriberId);
    assert.equal(
      (await novu.subscribers.notifications.feed({ subscriberId, limit: 10 })).result.totalCount,
      0,
    );
  });

  test("messages (retrieve, delete, deleteByTransactionId) and notifications (list, retrieve: the activity)", async () => {
    const { novu, identifier } = await setup();
    const subscriberId = hexId();
    const one = await novu.trigger({
      workflowId: identifier,
      to: { subscriberId, firstName: "Jo" },
      payload: { n: 1 },
    });
    const two = await novu.trigger({ workflowId: identifier, to: subscriberId, payload: { n: 2 } });
    const [first] = await messagesOf(novu, one.result.transactionId ?? "", 1);
    await messagesOf(novu, two.result.transactionId ?? "", 1);
    const mine = (await novu.messages.retrieve({ subscriberId, channel: "in_app" })).result;
    assert.equal(mine.data.length, 2);
    assert.deepEqual(
      mine.data.map((m) => [m.transactionId, m.channel]).sort(),
      [
        [one.result.transactionId, "in_app"],
        [two.result.transactionId, "in_app"],
      ].sort(),
    );

    const activity = (await novu.notifications.list({ subscriberIds: [subscriberId], page: 0, limit: 10 }))
      .result;
    assert.deepEqual(
      activity.data.map((n) => n.transactionId).sort(),
      [one.result.transactionId, two.result.transactionId].sort(),
    );
    const detail = (await novu.notifications.retrieve(activity.data[0]?.id ?? "")).result;
    assert.equal(detail.subscriber?.subscriberId, subscriberId);
    assert.deepEqual(detail.to, { subscriberId });
    assert.equal(detail.jobs?.[0]?.type, "in_app");
    assert.equal(detail.jobs?.[0]?.providerId, "novu");
    const settled = await poll(
      async () => (await novu.notifications.retrieve(detail.id ?? "")).result.jobs?.[0],
      (job) => job?.status === "completed" && (job.executionDetails?.length ?? 0) > 0,
      { what: "the job's execution details" },
    );
    assert.equal(settled?.executionDetails?.at(-1)?.status, "Success");

    const deleted = await novu.messages.delete(first?.id ?? "");
    assert.deepEqual(deleted.result, { acknowledged: true, status: "deleted" });
    await novu.messages.deleteByTransactionId(two.result.transactionId ?? "");
    assert.equal((await novu.messages.retrieve({ subscriberId })).result.data.length, 0);
    const none = await sdkError(
      novu.messages.deleteByTransactionId(two.result.transactionId ?? ""),
      errors.ErrorDto,
    );
    assert.equal(none.statusCode, 404);
  });

  test("integrations: create, list, listActive, update, setAsPrimary, delete", async () => {
    const { novu } = await setup();
    const created = await novu.integrations.create({
      providerId: "nodemailer",
      channel: "email",
      name: "Office SMTP",
      credentials: { host: "smtp.example.com", port: "587", from: "office@example.com", password: "s3cret" },
      active: false,
    });
    const id = created.result.id ?? "";
    assert.match(id, OBJECT_ID);
    assert.equal(created.result.credentials?.password, "********");
    assert.deepEqual(
      (await novu.integrations.list()).result.map((i) => i.id),
      [id],
    );
    assert.deepEqual((await novu.integrations.listActive()).result, []);
    const updated = await novu.integrations.update({ active: true, name: "Renamed" }, id);
    assert.equal(updated.result.active, true);
    assert.equal(updated.result.name, "Renamed");
    assert.deepEqual(
      (await novu.integrations.listActive()).result.map((i) => i.id),
      [id],
    );
    const primary = await novu.integrations.setAsPrimary(id);
    assert.equal(primary.result.primary, true);
    assert.deepEqual((await novu.integrations.delete(id)).result, []);
    assert.deepEqual((await novu.integrations.list()).result, []);
    const missing = await sdkError(novu.integrations.update({ name: "x" }, id), errors.SDKError);
    assert.equal(missing.statusCode, 404, "a 404 the SDK declares as no model of its own");
  });

  test("layouts: create, retrieve (by layoutId or id), update the HTML, list, duplicate, usage, delete", async () => {
    const { tenant, novu } = await setup();
    const layoutId = `brand-${hexId()}`;
    const created = (await novu.layouts.create({ layoutId, name: "Brand" })).result;
    assert.match(created.id, OBJECT_ID);
    assert.equal(created.layoutId, layoutId);
    assert.equal(created.isDefault, false);
    assert.match(created.controls.values.email?.body ?? "", /\{\{\{body\}\}\}/);
    assert.equal((await novu.layouts.retrieve(created.id)).result.layoutId, layoutId);
    const html = "<main>{{{body}}}<footer>{{company}}</footer></main>";
    const updated = await novu.layouts.update(
      { name: "Brand frame", controlValues: { email: { body: html, editorType: "html" } } },
      layoutId,
    );
    assert.equal(updated.result.name, "Brand frame");
    assert.equal(updated.result.controls.values.email?.body, html);
    const refused = await sdkError(
      novu.layouts.update(
        { name: "x", controlValues: { email: { body: "<p>no body</p>", editorType: "html" } } },
        layoutId,
      ),
      errors.ErrorDto,
    );
    assert.equal(refused.statusCode, 400);

    const copy = (
      await novu.layouts.duplicate({ name: "Brand copy", layoutId: `${layoutId}-copy` }, layoutId)
    ).result;
    assert.equal(copy.layoutId, `${layoutId}-copy`);
    assert.equal(copy.controls.values.email?.body, html);
    const listed = (await novu.layouts.list({ orderBy: "name", orderDirection: "ASC", query: "brand" }))
      .result;
    assert.deepEqual(
      [listed.totalCount, listed.layouts.map((l) => l.name)],
      [2, ["Brand copy", "Brand frame"]],
    );
    assert.equal((await novu.layouts.list({ limit: 1, offset: 1 })).result.layouts.length, 1);

    // A workflow step that names the layout: usage lists it, and the layout cannot be deleted.
    const workflow = await createWorkflow(ctx, tenant.dev.apiKey, tenant.dev.generalGroupId, {
      name: uniqueName("Framed"),
      steps: [{ template: { type: "email", subject: "Hi", content: "Hello", _layoutId: created.id } }],
    });
    assert.deepEqual((await novu.layouts.usage(layoutId)).result.workflows, [
      { name: workflow.name, workflowId: workflow.triggers[0].identifier },
    ]);
    const inUse = await sdkError(novu.layouts.delete(layoutId), errors.ErrorDto);
    assert.equal(inUse.statusCode, 409);
    await novu.layouts.delete(copy.id);
    const gone = await sdkError(novu.layouts.retrieve(copy.layoutId), errors.ErrorDto);
    assert.equal(gone.statusCode, 404);
  });

  test("environments.list: the organization's two environments", async () => {
    const { tenant, novu } = await setup();
    const listed = (await novu.environments.list()).result;
    assert.deepEqual(listed.map((e) => [e.name, e.id]).sort(), [
      ["Development", tenant.dev.environmentId],
      ["Production", tenant.prod.environmentId],
    ]);
  });

  // Last: it reads what the tests above called.
  test("every function of @novu/api 3.19.1 is driven above, or listed as unsupported with why; the lists hold on the server", async () => {
    const all = sdkFunctions(new Novu({ secretKey: "-" }));
    assert.ok(
      all.length > 100 && all.includes("subscribers.preferences.list"),
      "the SDK's functions are read",
    );
    const notDriven = all.filter((fn) => !called.has(fn) && !unsupported(fn) && !drivenElsewhere(fn));
    assert.deepEqual(notDriven, [], "every supported function is called by a test here or in the file named");
    for (const fn of all.filter((f) => drivenElsewhere(f))) {
      const files = (drivenElsewhere(fn)?.file ?? "").split(" ");
      const sources = files.map((file) => fs.readFileSync(path.join(process.cwd(), file), "utf8")).join("\n");
      assert.ok(sources.includes(`.${fn}(`), `${fn} is called in ${files.join(" or ")}`);
    }
    const listedButCalled = all.filter((fn) => called.has(fn) && unsupported(fn));
    assert.deepEqual(listedButCalled, [], "a function driven here is not listed as unsupported");
    for (const entry of UNSUPPORTED)
      assert.ok(
        all.some((fn) => unsupported(fn) === entry),
        `"${entry.functions}" names functions of the SDK`,
      );
    // The server agrees: a supported function's route exists (without a key: 401), an unsupported one's does not (404).
    const filled = (route: string) => route.replace(/\{\w+\}/g, "0123456789abcdef01234567");
    for (const fn of all) {
      const why = unsupported(fn);
      const { method, path: route } = routeOf(fn);
      const res = await anonymous(ctx).request({ method: method as "GET", url: filled(route) });
      if (why)
        assert.match(
          res.json().message,
          /^No route for /,
          `${fn} (${method} ${route}) is not served: ${why.why}`,
        );
      else assert.equal(res.statusCode, 401, `${fn} (${method} ${route}) is served`);
    }
  });
});
