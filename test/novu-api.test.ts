import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import type { AddressInfo } from "node:net";
import { before, test } from "node:test";
import { Novu } from "@novu/api";
import { HTTPClient } from "@novu/api/lib/http.js";
import * as errors from "@novu/api/models/errors/index.js";
import { createWorkflow, nextMillisecond, uniqueName } from "./factories.ts";
import { forEachBackend, type TestContext } from "./harness.ts";
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
      new Novu({ secretKey, serverURL, retryConfig: NO_RETRIES, ...options }),
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
    assert.deepEqual(
      listed.data.map((s) => s.subscriber.subscriberId),
      [ann, bob],
    );
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
      [ann, bob],
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
});
