import assert from "node:assert/strict";
import { systemClock } from "../src/clock.ts";
import { SecretBox } from "../src/store/secret-box.ts";
import { getSubscriber, openChannelCredentials } from "../src/subscribers/service.ts";
import { TEST_SECRET_KEY, type TestContext } from "./harness.ts";
import { poll } from "./poll.ts";

let counter = 0;
/** A name no other test uses. */
export const uniqueName = (prefix: string) => `${prefix} ${process.pid}-${Date.now()}-${counter++}`;

/**
 * Creates a workflow through the API (201 asserted) and returns the resource: a unique name, the
 * given group and one email step, unless `body` says otherwise.
 */
export async function createWorkflow(
  ctx: TestContext,
  apiKey: string,
  groupId: string,
  body: Record<string, unknown> = {},
) {
  const res = await ctx.client(apiKey).post("/v1/workflows", {
    name: uniqueName("Workflow"),
    notificationGroupId: groupId,
    steps: [{ template: { type: "email", subject: "Hi {{firstName}}", content: "Hello" } }],
    ...body,
  });
  assert.equal(res.statusCode, 201, res.body);
  return res.json().data;
}

/**
 * A new organization with one active workflow of `steps` in its Development environment: the
 * environment's client, the workflow's trigger identifier and its id.
 */
export async function workflowInNewTenant(
  ctx: TestContext,
  namePrefix: string,
  steps: unknown[],
  body: Record<string, unknown> = {},
) {
  const tenant = await ctx.tenant();
  const workflow = await createWorkflow(ctx, tenant.dev.apiKey, tenant.dev.generalGroupId, {
    name: uniqueName(namePrefix),
    active: true,
    steps,
    ...body,
  });
  return {
    api: ctx.client(tenant.dev.apiKey),
    name: workflow.triggers[0].identifier as string,
    workflowId: workflow._id as string,
  };
}

/** Creates a notification group through the API (201 asserted) and returns the resource. */
export async function createGroup(ctx: TestContext, apiKey: string, name = uniqueName("Group")) {
  const res = await ctx.client(apiKey).post("/v1/notification-groups", { name });
  assert.equal(res.statusCode, 201, res.body);
  return res.json().data;
}

/** Waits until the clock has moved on, so two writes never share a millisecond timestamp. */
export async function nextMillisecond() {
  const start = Date.now();
  await poll(Date.now, (now) => now !== start, { what: "the clock to move on", everyMs: 1 });
}

/** Creates (or upserts) a subscriber through the API (201 asserted) and returns the resource. */
export async function createSubscriber(
  ctx: TestContext,
  apiKey: string,
  body: Record<string, unknown> = {},
): Promise<Record<string, unknown> & { _id: string; subscriberId: string }> {
  const res = await ctx.client(apiKey).post("/v1/subscribers", {
    subscriberId: uniqueName("subscriber").replace(/ /g, "-"),
    ...body,
  });
  assert.equal(res.statusCode, 201, res.body);
  return res.json().data;
}

/**
 * A subscriber's channel credentials as stored, opened with the test apps' key: what every answer
 * shows masked, for the tests that check what was kept.
 */
export async function storedChannelCredentials(
  ctx: TestContext,
  tenant: { organizationId: string; environmentId: string },
  subscriberId: string,
) {
  const deps = { db: ctx.store.db, clock: systemClock, secrets: new SecretBox(TEST_SECRET_KEY) };
  const subscriber = await getSubscriber(deps, { ...tenant, actorId: "" }, subscriberId);
  return subscriber.channels.map((channel) => ({
    providerId: channel.providerId,
    ...openChannelCredentials(deps, subscriber, channel),
  }));
}
