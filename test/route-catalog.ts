import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { LightMyRequestResponse } from "fastify";
import { createGroup, createWorkflow, uniqueName } from "./factories.ts";
import type { TestContext, TestTenant } from "./harness.ts";
import { poll } from "./poll.ts";
import { type SmtpSink, startSmtpSink } from "./sinks.ts";

/** What a route needs to exist before it can be called: made fresh in the tenant's Development environment. */
export interface Fixtures {
  tenant: TestTenant;
  workflowId: string;
  workflowIdentifier: string;
  /** A group no workflow uses (so it can be renamed or deleted). */
  groupId: string;
  /** A subscriber (its subscriberId has the shape of an id, so the fuzzer swaps it like one). */
  subscriberId: string;
  /** A topic whose one subscriber is `subscriberId`. */
  topicKey: string;
  /** A topic with no subscribers (so it can be deleted). */
  emptyTopicKey: string;
  /** An active workflow with one in_app step. */
  inAppIdentifier: string;
  /** A trigger of `inAppIdentifier` to `subscriberId`, already processed: its transaction, notification and message. */
  transactionId: string;
  notificationId: string;
  messageId: string;
  /** An inactive email (nodemailer) integration. */
  integrationId: string;
  /** An inactive email integration whose SMTP server (a sink on 127.0.0.1) takes every mail. */
  testEmailIntegrationId: string;
  /** An empty environment of the tenant's organization besides Development and Production (so it can be deleted). */
  spareEnvironmentId: string;
  /** A tenant (Novu's /v1/tenants) of the Development environment; its identifier is shaped like an id. */
  tenantIdentifier: string;
  /** A bridge (of a code-first app) synced into the Development environment: one workflow, CODE_WORKFLOW. */
  bridgeUrl: string;
  /** An email layout of the Development environment, not the default and unused. */
  layoutId: string;
  /** A feed no step names. */
  feedId: string;
  /** The tenant's organization (and the id of its one member, the owner). */
  organizationId: string;
  /** The _id of the tenant `tenantIdentifier`, and the override of `workflowId` for it. */
  tenantId: string;
  overrideId: string;
}

/** The workflow the catalog's bridge defines in code, and its one step. */
const CODE_WORKFLOW = "catalog-code";
const CODE_STEP = "note";

let catalogBridge: Promise<string> | undefined;

/**
 * A stand-in for a code-first app's bridge (test/bridge.test.ts runs the real framework): it
 * answers discover with one workflow and a preview with fixed content, whatever the signature.
 */
function startCatalogBridge(): Promise<string> {
  catalogBridge ??= new Promise((resolve) => {
    const server = http.createServer((request, response) => {
      const action = new URL(request.url ?? "/", "http://bridge").searchParams.get("action");
      request.resume();
      response.setHeader("content-type", "application/json");
      // No socket kept for the next call: the client's keep-alive agent could send it on one this
      // server is closing (its 5 s idle timeout), an ECONNRESET that loaded full runs met in fixtures.
      response.setHeader("connection", "close");
      if (action === "discover") {
        response.end(
          JSON.stringify({
            workflows: [{ workflowId: CODE_WORKFLOW, steps: [{ stepId: CODE_STEP, type: "in_app" }] }],
          }),
        );
      } else {
        response.end(
          JSON.stringify({
            outputs: { body: "Hello" },
            providers: {},
            options: { skip: false },
            metadata: {},
          }),
        );
      }
    });
    server.listen(0, "127.0.0.1", () => {
      server.unref();
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}/api/novu`);
    });
  });
  return catalogBridge;
}

const codeWorkflowUrls = (path: string) => (): ResourceUrl[] => [
  {
    url: path,
    notFound: new RegExp(`^No workflow defined in code ${CODE_WORKFLOW} in this environment$`),
  },
];

export interface CatalogRoute {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** The path as Fastify declares it (`/v1/workflows/:workflowId/status`). */
  path: string;
  /** The concrete URL for a call within the fixtures' environment. */
  url(f: Fixtures): string;
  /** A valid body, when the route takes one. */
  body?(f: Fixtures): Record<string, unknown>;
  /** The success status of a valid call. */
  ok: number;
  /**
   * When the URL names a resource: every way to name the fixtures' one (by id, and by trigger
   * identifier where the route takes one), each with the 404 message a key of another environment
   * must get for it, changing nothing.
   */
  resourceUrls?(f: Fixtures): ResourceUrl[];
  /** Why a POST or PATCH takes no Idempotency-Key (it must then not document one). */
  noIdempotencyKey?: string;
  /** The valid call revokes the fixtures' Development key. */
  revokesKey?: boolean;
}

export interface ResourceUrl {
  url: string;
  notFound: RegExp;
}

const literally = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The workflow named by its id and by its trigger identifier. */
const workflowUrls =
  (path: string) =>
  (f: Fixtures): ResourceUrl[] =>
    [f.workflowId, f.workflowIdentifier].map((ref) => ({
      url: path.replace(":workflowId", ref),
      notFound: new RegExp(`^Workflow ${literally(ref)} was not found$`),
    }));

const groupUrls = (f: Fixtures): ResourceUrl[] => [
  {
    url: `/v1/notification-groups/${f.groupId}`,
    notFound: new RegExp(`^Notification group ${f.groupId} was not found$`),
  },
];

const both = (path: string) => [path, path.replace("/v1/workflows", "/v1/notification-templates")];

let counter = 0;
/** A fresh 24-hex string: a subscriberId or topic key shaped like an id. */
const hexId = () => randomBytes(12).toString("hex");
const CHANNEL_TYPES = ["email", "sms", "in_app", "chat", "push"] as const;
/** The next channel type, in turn: each call of a body gets another (the idempotency test needs two bodies). */
const nextChannel = () => CHANNEL_TYPES[counter++ % CHANNEL_TYPES.length];

const subscriberRoute = (
  method: CatalogRoute["method"],
  suffix: string,
  ok: number,
  body?: CatalogRoute["body"],
): CatalogRoute => ({
  method,
  path: `/v1/subscribers/:subscriberId${suffix}`,
  url: (f) =>
    `/v1/subscribers/${f.subscriberId}${suffix
      .replace(":providerId", "slack")
      .replace(":level", "global")
      .replace(":workflowId", f.workflowId)}`,
  ...(body ? { body } : {}),
  ok,
  resourceUrls: (f) => [
    {
      url: `/v1/subscribers/${f.subscriberId}${suffix
        .replace(":providerId", "slack")
        .replace(":level", "global")
        .replace(":workflowId", f.workflowId)}`,
      notFound: new RegExp(`^Subscriber ${f.subscriberId} was not found$`),
    },
  ],
});

const topicRoute = (
  method: CatalogRoute["method"],
  suffix: string,
  ok: number,
  body?: CatalogRoute["body"],
  key: (f: Fixtures) => string = (f) => f.topicKey,
): CatalogRoute => ({
  method,
  path: `/v1/topics/:topicKey${suffix}`,
  url: (f) => `/v1/topics/${key(f)}${suffix.replace(":subscriberId", f.subscriberId)}`,
  ...(body ? { body } : {}),
  ok,
  resourceUrls: (f) => [
    {
      url: `/v1/topics/${key(f)}${suffix.replace(":subscriberId", f.subscriberId)}`,
      notFound: new RegExp(`^Topic ${key(f)} was not found$`),
    },
  ],
});

const integrationUrls =
  (suffix = "") =>
  (f: Fixtures): ResourceUrl[] => [
    {
      url: `/v1/integrations/${f.integrationId}${suffix}`,
      notFound: new RegExp(`^Integration ${f.integrationId} was not found$`),
    },
  ];

/** The integration routes (docs/engine.md, "Delivery"). */
const INTEGRATION_ROUTES: CatalogRoute[] = [
  {
    method: "POST",
    path: "/v1/integrations",
    url: () => "/v1/integrations",
    body: () => ({ providerId: "slack", channel: "chat", name: uniqueName("Catalog Slack") }),
    ok: 201,
  },
  { method: "GET", path: "/v1/integrations", url: () => "/v1/integrations", ok: 200 },
  { method: "GET", path: "/v1/integrations/active", url: () => "/v1/integrations/active", ok: 200 },
  {
    method: "PUT",
    path: "/v1/integrations/:integrationId",
    url: (f) => `/v1/integrations/${f.integrationId}`,
    body: () => ({
      name: uniqueName("Catalog SMTP"),
      // A new port needs the password again (a stored one only goes where it was given for).
      credentials: { host: "smtp.example.com", port: "2525", password: "catalog-secret" },
    }),
    ok: 200,
    resourceUrls: integrationUrls(),
  },
  {
    method: "DELETE",
    path: "/v1/integrations/:integrationId",
    url: (f) => `/v1/integrations/${f.integrationId}`,
    ok: 200,
    resourceUrls: integrationUrls(),
  },
  {
    method: "POST",
    path: "/v1/integrations/:integrationId/set-primary",
    url: (f) => `/v1/integrations/${f.integrationId}/set-primary`,
    ok: 200,
    resourceUrls: integrationUrls("/set-primary"),
    noIdempotencyKey: "it sets a state (the channel's primary): repeating it changes nothing more",
  },
  {
    method: "POST",
    path: "/v1/events/test/email",
    url: () => "/v1/events/test/email",
    body: (f) => ({
      to: "catalog@example.com",
      subject: "Test {{name}}",
      content: "<p>Hello {{name}}</p>",
      contentType: "customHtml",
      payload: { name: "catalog" },
      integrationId: f.testEmailIntegrationId,
    }),
    ok: 201,
    noIdempotencyKey: "each call sends an email, which a replay could not take back",
  },
  {
    method: "GET",
    path: "/v1/integrations/in-app/status",
    url: () => "/v1/integrations/in-app/status",
    ok: 200,
  },
  {
    method: "GET",
    path: "/v1/integrations/:channelType/limit",
    url: () => "/v1/integrations/email/limit",
    ok: 200,
  },
  { method: "GET", path: "/v1/inbound-parse/mx/status", url: () => "/v1/inbound-parse/mx/status", ok: 200 },
  {
    method: "GET",
    path: "/v1/integrations/webhook/provider/:providerId/status",
    url: () => "/v1/integrations/webhook/provider/nodemailer/status",
    ok: 200,
    resourceUrls: () => [
      {
        url: "/v1/integrations/webhook/provider/nodemailer/status",
        notFound: /^No integration of provider nodemailer was found$/,
      },
    ],
  },
];

const SETS_A_STATE =
  "it sets a state (read, seen, archived, snoozed, an action's status): repeating it changes nothing more";

/** The API key's mirror of the inbox, over the fixtures' subscriber's notifications (docs/engine.md, "The inbox"). */
const subscriberNotificationRoute = (
  method: CatalogRoute["method"],
  suffix: string,
  ok: number,
  body?: CatalogRoute["body"],
): CatalogRoute => {
  // The count takes its filters in the query string, and cannot be called without them.
  const query = suffix === "/count" ? `?filters=${encodeURIComponent('[{"read":false},{}]')}` : "";
  const urlOf = (f: Fixtures) =>
    `/v2/subscribers/${f.subscriberId}/notifications${suffix
      .replace(":notificationId", f.messageId)
      .replace(":actionType", "primary")}${query}`;
  return {
    method,
    path: `/v2/subscribers/:subscriberId/notifications${suffix}`,
    url: urlOf,
    ...(body ? { body } : {}),
    ok,
    resourceUrls: (f) => [
      { url: urlOf(f), notFound: new RegExp(`^Subscriber ${f.subscriberId} was not found$`) },
    ],
    ...(method === "POST" || method === "PATCH" ? { noIdempotencyKey: SETS_A_STATE } : {}),
  };
};

const SUBSCRIBER_NOTIFICATION_ROUTES: CatalogRoute[] = [
  subscriberNotificationRoute("GET", "", 200),
  subscriberNotificationRoute("GET", "/count", 200),
  ...["read", "unread", "archive", "unarchive", "unsnooze"].map((mark) =>
    subscriberNotificationRoute("PATCH", `/:notificationId/${mark}`, 200),
  ),
  subscriberNotificationRoute("PATCH", "/:notificationId/snooze", 200, () => ({
    // Each call its own moment, within the default limit of 90 days.
    snoozeUntil: new Date(Date.now() + 3_600_000 + counter++).toISOString(),
  })),
  subscriberNotificationRoute("PATCH", "/:notificationId/actions/:actionType/complete", 200),
  subscriberNotificationRoute("PATCH", "/:notificationId/actions/:actionType/revert", 200),
  subscriberNotificationRoute("DELETE", "/:notificationId", 204),
  subscriberNotificationRoute("POST", "/seen", 204, (f) => ({ notificationIds: [f.messageId] })),
  ...["read", "archive", "read-archive", "delete"].map((action) =>
    subscriberNotificationRoute("POST", `/${action}`, 204, () => ({})),
  ),
];

const v2WorkflowUrls = (suffix: string) => (f: Fixtures) =>
  workflowUrls(`/v2/workflows/:workflowId${suffix}`)(f);

const WORKFLOW_V2_ROUTES: CatalogRoute[] = [
  {
    method: "POST",
    path: "/v2/workflows",
    url: () => "/v2/workflows",
    body: () => ({
      name: uniqueName("Catalog workflow"),
      workflowId: `catalog-${hexId()}`,
      steps: [{ name: "Bell", type: "in_app", controlValues: { body: "Hello {{name}}" } }],
    }),
    ok: 201,
  },
  { method: "GET", path: "/v2/workflows", url: () => "/v2/workflows?limit=10&orderBy=name", ok: 200 },
  {
    method: "GET",
    path: "/v2/workflows/:workflowId",
    url: (f) => `/v2/workflows/${f.workflowId}`,
    ok: 200,
    resourceUrls: v2WorkflowUrls(""),
  },
  {
    method: "PUT",
    path: "/v2/workflows/:workflowId",
    url: (f) => `/v2/workflows/${f.workflowId}`,
    body: () => ({
      name: uniqueName("Catalog update"),
      steps: [{ name: "Mail", type: "email", controlValues: { subject: "Hi", body: "Hello" } }],
      preferences: {},
    }),
    ok: 200,
    resourceUrls: v2WorkflowUrls(""),
  },
  {
    method: "PATCH",
    path: "/v2/workflows/:workflowId",
    url: (f) => `/v2/workflows/${f.workflowId}`,
    body: () => ({ description: uniqueName("Catalog patch") }),
    ok: 200,
    resourceUrls: v2WorkflowUrls(""),
    noIdempotencyKey: "it sets the fields sent: repeating it changes nothing more",
  },
  {
    method: "DELETE",
    path: "/v2/workflows/:workflowId",
    url: (f) => `/v2/workflows/${f.workflowId}`,
    ok: 204,
    resourceUrls: v2WorkflowUrls(""),
  },
  {
    // The fixture workflow's one step is an email step named "email": its step id.
    method: "GET",
    path: "/v2/workflows/:workflowId/steps/:stepId",
    url: (f) => `/v2/workflows/${f.workflowId}/steps/email`,
    ok: 200,
    resourceUrls: v2WorkflowUrls("/steps/email"),
  },
  {
    method: "POST",
    path: "/v2/workflows/:workflowId/step/:stepId/preview",
    url: (f) => `/v2/workflows/${f.workflowId}/step/email/preview`,
    body: () => ({ previewPayload: { payload: { firstName: "Ada" } } }),
    ok: 201,
    resourceUrls: v2WorkflowUrls("/step/email/preview"),
    noIdempotencyKey: "a preview writes nothing",
  },
];

// The environment routes name environments of the organization, which a key of its other
// environment may name too: their tenancy cases are test/promotion.test.ts's (another
// organization's key gets 404).
const ENVIRONMENT_ROUTES: CatalogRoute[] = [
  {
    method: "POST",
    path: "/v1/environments",
    url: () => "/v1/environments",
    body: () => ({ name: uniqueName("Catalog environment"), color: "#336699" }),
    ok: 201,
    noIdempotencyKey: "a stored response would keep the new key in plaintext",
  },
  {
    method: "PUT",
    path: "/v1/environments/:environmentId",
    url: (f) => `/v1/environments/${f.spareEnvironmentId}`,
    body: () => ({ name: uniqueName("Catalog rename") }),
    ok: 200,
  },
  {
    method: "DELETE",
    path: "/v1/environments/:environmentId",
    url: (f) => `/v1/environments/${f.spareEnvironmentId}`,
    ok: 200,
  },
  { method: "GET", path: "/v1/changes", url: () => "/v1/changes?page=0&limit=10&promoted=false", ok: 200 },
  { method: "GET", path: "/v1/changes/count", url: () => "/v1/changes/count", ok: 200 },
  {
    method: "POST",
    path: "/v1/changes/:changeId/apply",
    url: (f) => `/v1/changes/${f.workflowId}/apply`,
    ok: 201,
  },
  {
    method: "POST",
    path: "/v1/changes/bulk/apply",
    url: () => "/v1/changes/bulk/apply",
    // Each call its own body (the order of the ids), as the idempotency cases need.
    body: (f) => ({ changeIds: counter++ % 2 === 0 ? [f.workflowId, f.groupId] : [f.groupId, f.workflowId] }),
    ok: 201,
  },
  {
    method: "GET",
    path: "/v2/environments/:environmentId/tags",
    url: (f) => `/v2/environments/${f.tenant.dev.environmentId}/tags`,
    ok: 200,
  },
  {
    method: "POST",
    path: "/v2/environments/:targetEnvironmentId/diff",
    url: (f) => `/v2/environments/${f.tenant.prod.environmentId}/diff`,
    body: () => ({}),
    ok: 200,
    noIdempotencyKey: "a diff writes nothing",
  },
  {
    method: "POST",
    path: "/v2/environments/:targetEnvironmentId/publish",
    url: (f) => `/v2/environments/${f.tenant.prod.environmentId}/publish`,
    body: () => ({ dryRun: counter++ % 2 === 0 }),
    ok: 200,
  },
  {
    method: "PUT",
    path: "/v2/workflows/:workflowId/sync",
    url: (f) => `/v2/workflows/${f.workflowId}/sync`,
    body: (f) => ({ targetEnvironmentId: f.tenant.prod.environmentId }),
    ok: 200,
    resourceUrls: v2WorkflowUrls("/sync"),
  },
];

/** A subscriber route of Novu's /v2 (@novu/api 3), over the fixtures' subscriber. */
const subscriberV2Route = (
  method: CatalogRoute["method"],
  suffix: string,
  ok: number,
  extra: Partial<Pick<CatalogRoute, "body" | "noIdempotencyKey">> = {},
): CatalogRoute => ({
  method,
  path: `/v2/subscribers/:subscriberId${suffix}`,
  url: (f) => `/v2/subscribers/${f.subscriberId}${suffix}`,
  ...extra,
  ok,
  resourceUrls: (f) => [
    {
      url: `/v2/subscribers/${f.subscriberId}${suffix}`,
      notFound: new RegExp(`^Subscriber ${f.subscriberId} was not found$`),
    },
  ],
});

/** The default identifier of the fixtures' subscriber's subscription to the fixtures' topic. */
const fixtureSubscription = (f: Fixtures) => `tk_${f.topicKey}:si_${f.subscriberId}`;

/** A topic route of Novu's /v2, over the fixtures' topic (which holds the fixtures' subscriber). */
const topicV2Route = (
  method: CatalogRoute["method"],
  suffix: string,
  ok: number,
  extra: Partial<Pick<CatalogRoute, "body" | "noIdempotencyKey">> = {},
): CatalogRoute => {
  const urlOf = (f: Fixtures) =>
    `/v2/topics/${f.topicKey}${suffix.replace(":identifier", encodeURIComponent(fixtureSubscription(f)))}`;
  return {
    method,
    path: `/v2/topics/:topicKey${suffix}`,
    url: urlOf,
    ...extra,
    ok,
    resourceUrls: (f) => [{ url: urlOf(f), notFound: new RegExp(`^Topic ${f.topicKey} was not found$`) }],
  };
};

const SETS_FIELDS = "it sets the fields sent: repeating it changes nothing more";

/** Novu's /v2 subscribers, topics and their subscriptions and preferences (what @novu/api 3 calls). */
const layoutV2Route = (
  method: CatalogRoute["method"],
  suffix: string,
  ok: number,
  body?: () => Record<string, unknown>,
): CatalogRoute => ({
  method,
  path: `/v2/layouts/:layoutId${suffix}`,
  url: (f) => `/v2/layouts/${f.layoutId}${suffix}`,
  ...(body ? { body } : {}),
  ok,
  resourceUrls: (f) => [
    {
      url: `/v2/layouts/${f.layoutId}${suffix}`,
      notFound: new RegExp(`^Layout ${f.layoutId} was not found$`),
    },
  ],
});

const V2_ROUTES: CatalogRoute[] = [
  {
    method: "GET",
    path: "/v2/layouts",
    url: () => "/v2/layouts?limit=10&orderBy=name&query=Fixture",
    ok: 200,
  },
  {
    method: "POST",
    path: "/v2/layouts",
    url: () => "/v2/layouts",
    body: () => ({ layoutId: hexId(), name: "Catalog layout" }),
    ok: 201,
  },
  layoutV2Route("GET", "", 200),
  layoutV2Route("PUT", "", 200, () => ({
    name: uniqueName("Catalog layout"),
    controlValues: { email: { body: "<div>{{{body}}}</div>", editorType: "html" } },
  })),
  layoutV2Route("DELETE", "", 204),
  layoutV2Route("POST", "/duplicate", 201, () => ({ name: uniqueName("Catalog copy") })),
  layoutV2Route("GET", "/usage", 200),
  { method: "GET", path: "/v2/subscribers", url: () => "/v2/subscribers?limit=10&name=Fixture", ok: 200 },
  {
    // Not scoped: a subscriberId the key's environment does not have is created there.
    method: "POST",
    path: "/v2/subscribers",
    url: () => "/v2/subscribers",
    body: () => ({ subscriberId: hexId(), firstName: "Catalog" }),
    ok: 201,
  },
  subscriberV2Route("GET", "", 200),
  subscriberV2Route("PATCH", "", 200, {
    body: () => ({ lastName: uniqueName("Catalog") }),
    noIdempotencyKey: SETS_FIELDS,
  }),
  subscriberV2Route("DELETE", "", 200),
  subscriberV2Route("GET", "/preferences", 200),
  subscriberV2Route("PATCH", "/preferences", 200, {
    body: () => ({ channels: { email: counter++ % 2 === 0 } }),
    noIdempotencyKey: SETS_A_STATE,
  }),
  subscriberV2Route("PATCH", "/preferences/bulk", 200, {
    body: (f) => ({ preferences: [{ workflowId: f.workflowId, channels: { email: counter++ % 2 === 0 } }] }),
    noIdempotencyKey: SETS_A_STATE,
  }),
  subscriberV2Route("GET", "/subscriptions", 200),
  { method: "GET", path: "/v2/topics", url: () => "/v2/topics?limit=10&orderDirection=ASC", ok: 200 },
  {
    // Not scoped: a key the key's environment has no topic for makes one there.
    method: "POST",
    path: "/v2/topics",
    url: () => "/v2/topics",
    body: () => ({ key: hexId(), name: "Catalog topic", data: { n: counter++ } }),
    ok: 201,
  },
  topicV2Route("GET", "", 200),
  topicV2Route("PATCH", "", 200, {
    body: () => ({ name: uniqueName("Catalog rename") }),
    noIdempotencyKey: SETS_FIELDS,
  }),
  topicV2Route("DELETE", "", 200),
  topicV2Route("GET", "/subscriptions", 200),
  {
    ...topicV2Route("POST", "/subscriptions", 201, {
      // The name is the topic's when this makes it (the fixtures' exists): each body its own.
      body: (f) => ({ subscriptions: [f.subscriberId], name: uniqueName("Catalog topic") }),
    }),
    // Another environment has no such subscriber: nothing is made there, the topic neither.
    resourceUrls: (f) => [
      {
        url: `/v2/topics/${f.topicKey}/subscriptions`,
        notFound: new RegExp(`^Subscriber ${f.subscriberId} was not found$`),
      },
    ],
  },
  topicV2Route("DELETE", "/subscriptions", 200, { body: (f) => ({ subscriptions: [f.subscriberId] }) }),
  topicV2Route("GET", "/subscriptions/:identifier", 200),
  topicV2Route("PATCH", "/subscriptions/:identifier", 200, {
    body: () => ({ name: uniqueName("Catalog subscription") }),
    noIdempotencyKey: SETS_FIELDS,
  }),
];

/**
 * Every /v1 and /v2 route, with a valid call. The shared auth and tenancy cases run for each of these, and a
 * test fails when the OpenAPI document lists a /v1 or /v2 route that is missing here: a new route
 * cannot forget them.
 */
const BRIDGE_ROUTES: CatalogRoute[] = [
  {
    method: "POST",
    path: "/v1/bridge/sync",
    url: () => "/v1/bridge/sync?source=cli",
    body: (f) => ({ bridgeUrl: f.bridgeUrl }),
    ok: 201,
    noIdempotencyKey:
      "a sync sets the environment's code workflows to the bridge's: repeating it changes nothing more",
  },
  {
    method: "POST",
    path: "/v1/bridge/diff",
    url: () => "/v1/bridge/diff",
    body: (f) => ({ bridgeUrl: f.bridgeUrl }),
    ok: 201,
    noIdempotencyKey: "a diff writes nothing",
  },
  {
    method: "PUT",
    path: "/v1/bridge/controls/:workflowId/:stepId",
    url: () => `/v1/bridge/controls/${CODE_WORKFLOW}/${CODE_STEP}`,
    body: () => ({ controls: { greeting: "Hi" } }),
    ok: 200,
    resourceUrls: codeWorkflowUrls(`/v1/bridge/controls/${CODE_WORKFLOW}/${CODE_STEP}`),
  },
  {
    method: "POST",
    path: "/v1/bridge/preview/:workflowId/:stepId",
    url: () => `/v1/bridge/preview/${CODE_WORKFLOW}/${CODE_STEP}`,
    body: () => ({ payload: { name: "Ada" } }),
    ok: 201,
    resourceUrls: codeWorkflowUrls(`/v1/bridge/preview/${CODE_WORKFLOW}/${CODE_STEP}`),
    noIdempotencyKey: "a preview writes nothing",
  },
];

/** How many workflow-override bodies the catalog has made: each alternates `active`. */
let overrideBodies = 0;

export const ROUTES: CatalogRoute[] = [
  ...BRIDGE_ROUTES,
  ...both("/v1/workflows").map(
    (path): CatalogRoute => ({
      method: "POST",
      path,
      url: () => path,
      body: (f) => ({
        name: uniqueName("Catalog workflow"),
        notificationGroupId: f.tenant.dev.generalGroupId,
        steps: [{ template: { type: "in_app", content: "Hello {{name}}" } }],
      }),
      ok: 201,
    }),
  ),
  ...both("/v1/workflows/:workflowId").map(
    (path): CatalogRoute => ({
      method: "GET",
      path,
      url: (f) => path.replace(":workflowId", f.workflowId),
      ok: 200,
      resourceUrls: workflowUrls(path),
    }),
  ),
  ...both("/v1/workflows/:workflowId/status").map(
    (path): CatalogRoute => ({
      method: "PUT",
      path,
      url: (f) => path.replace(":workflowId", f.workflowId),
      body: () => ({ active: true }),
      ok: 200,
      resourceUrls: workflowUrls(path),
    }),
  ),
  ...both("/v1/workflows").map(
    (path): CatalogRoute => ({
      method: "GET",
      path,
      url: () => `${path}?page=0&limit=10`,
      ok: 200,
    }),
  ),
  ...both("/v1/workflows/:workflowId").map(
    (path): CatalogRoute => ({
      method: "PUT",
      path,
      url: (f) => path.replace(":workflowId", f.workflowId),
      body: () => ({ description: uniqueName("Catalog update") }),
      ok: 200,
      resourceUrls: workflowUrls(path),
    }),
  ),
  ...both("/v1/workflows/:workflowId").map(
    (path): CatalogRoute => ({
      method: "DELETE",
      path,
      url: (f) => path.replace(":workflowId", f.workflowId),
      ok: 200,
      resourceUrls: workflowUrls(path),
    }),
  ),
  {
    method: "GET",
    path: "/v1/workflows/variables",
    url: () => "/v1/workflows/variables",
    ok: 200,
  },
  {
    method: "GET",
    path: "/v1/notification-groups/:id",
    url: (f) => `/v1/notification-groups/${f.groupId}`,
    ok: 200,
    resourceUrls: groupUrls,
  },
  {
    method: "PATCH",
    path: "/v1/notification-groups/:id",
    url: (f) => `/v1/notification-groups/${f.groupId}`,
    body: () => ({ name: uniqueName("Catalog rename") }),
    ok: 200,
    resourceUrls: groupUrls,
  },
  {
    method: "DELETE",
    path: "/v1/notification-groups/:id",
    url: (f) => `/v1/notification-groups/${f.groupId}`,
    ok: 200,
    resourceUrls: groupUrls,
  },
  {
    method: "POST",
    path: "/v1/notification-groups",
    url: () => "/v1/notification-groups",
    body: () => ({ name: uniqueName("Catalog group") }),
    ok: 201,
  },
  {
    method: "GET",
    path: "/v1/notification-groups",
    url: () => "/v1/notification-groups",
    ok: 200,
  },
  {
    method: "POST",
    path: "/v1/subscribers",
    url: () => "/v1/subscribers",
    body: () => ({ subscriberId: hexId(), firstName: "Catalog", email: "catalog@example.com" }),
    ok: 201,
  },
  {
    method: "POST",
    path: "/v1/subscribers/bulk",
    url: () => "/v1/subscribers/bulk",
    body: (f) => ({
      subscribers: [{ subscriberId: hexId() }, { subscriberId: f.subscriberId, lastName: "Bulk" }],
    }),
    ok: 201,
  },
  {
    method: "GET",
    path: "/v1/subscribers",
    url: () => "/v1/subscribers?page=0&limit=10",
    ok: 200,
  },
  subscriberRoute("GET", "", 200),
  subscriberRoute("PUT", "", 200, () => ({ firstName: uniqueName("Catalog") })),
  subscriberRoute("DELETE", "", 200),
  subscriberRoute("PUT", "/credentials", 200, () => ({
    providerId: "slack",
    credentials: { webhookUrl: "https://hooks.example.com/catalog" },
  })),
  subscriberRoute("PATCH", "/credentials", 200, () => ({
    providerId: "fcm",
    credentials: { deviceTokens: [uniqueName("token")] },
  })),
  subscriberRoute("DELETE", "/credentials/:providerId", 204),
  subscriberRoute("PATCH", "/online-status", 200, () => ({ isOnline: counter++ % 2 === 0 })),
  subscriberRoute("GET", "/preferences", 200),
  subscriberRoute("GET", "/preferences/:level", 200),
  subscriberRoute("PATCH", "/preferences/:workflowId", 200, () => ({
    channel: { type: nextChannel(), enabled: false },
  })),
  subscriberRoute("PATCH", "/preferences", 200, () => ({
    preferences: [{ type: nextChannel(), enabled: false }],
  })),
  {
    method: "POST",
    path: "/v1/tenants",
    url: () => "/v1/tenants",
    body: () => ({ identifier: hexId(), name: "Catalog tenant", data: { plan: "pro" } }),
    ok: 201,
  },
  {
    method: "GET",
    path: "/v1/tenants",
    url: () => "/v1/tenants?page=0&limit=10",
    ok: 200,
  },
  ...(
    [
      ["GET", 200, undefined],
      ["PATCH", 200, () => ({ name: uniqueName("Catalog tenant") })],
      ["DELETE", 204, undefined],
    ] as const
  ).map(
    ([method, ok, body]): CatalogRoute => ({
      method,
      path: "/v1/tenants/:identifier",
      url: (f) => `/v1/tenants/${f.tenantIdentifier}`,
      ...(body ? { body } : {}),
      ok,
      resourceUrls: (f) => [
        {
          url: `/v1/tenants/${f.tenantIdentifier}`,
          notFound: new RegExp(`^Tenant ${f.tenantIdentifier} was not found$`),
        },
      ],
    }),
  ),
  {
    method: "POST",
    path: "/v1/layouts",
    url: () => "/v1/layouts",
    body: () => ({ name: "Catalog layout", identifier: hexId(), content: "<main>{{{body}}}</main>" }),
    ok: 201,
  },
  {
    method: "GET",
    path: "/v1/layouts",
    url: () => "/v1/layouts?page=0&pageSize=10",
    ok: 200,
  },
  ...(
    [
      ["GET", "", 200, undefined],
      ["PATCH", "", 200, () => ({ name: uniqueName("Catalog layout") })],
      ["DELETE", "", 204, undefined],
      ["POST", "/default", 204, undefined],
    ] as const
  ).map(
    ([method, suffix, ok, body]): CatalogRoute => ({
      method,
      path: `/v1/layouts/:layoutId${suffix}`,
      url: (f) => `/v1/layouts/${f.layoutId}${suffix}`,
      ...(body ? { body } : {}),
      ok,
      ...(method === "POST" ? { noIdempotencyKey: "Making a layout the default twice is the same" } : {}),
      resourceUrls: (f) => [
        {
          url: `/v1/layouts/${f.layoutId}${suffix}`,
          notFound: new RegExp(`^Layout not found for id ${f.layoutId} in the environment [0-9a-f]{24}$`),
        },
      ],
    }),
  ),
  {
    method: "POST",
    path: "/v1/feeds",
    url: () => "/v1/feeds",
    body: () => ({ name: uniqueName("Catalog feed") }),
    ok: 201,
  },
  { method: "GET", path: "/v1/feeds", url: () => "/v1/feeds", ok: 200 },
  {
    method: "DELETE",
    path: "/v1/feeds/:feedId",
    url: (f) => `/v1/feeds/${f.feedId}`,
    ok: 200,
    resourceUrls: (f) => [
      { url: `/v1/feeds/${f.feedId}`, notFound: new RegExp(`^Feed ${f.feedId} was not found$`) },
    ],
  },
  { method: "GET", path: "/v1/organizations", url: () => "/v1/organizations", ok: 200 },
  { method: "GET", path: "/v1/organizations/me", url: () => "/v1/organizations/me", ok: 200 },
  {
    method: "POST",
    path: "/v1/organizations",
    url: () => "/v1/organizations",
    body: () => ({ name: uniqueName("Catalog organization") }),
    ok: 201,
  },
  {
    method: "PATCH",
    path: "/v1/organizations",
    url: () => "/v1/organizations",
    body: () => ({ name: uniqueName("Catalog rename") }),
    ok: 200,
    noIdempotencyKey: SETS_FIELDS,
  },
  {
    method: "PUT",
    path: "/v1/organizations/branding",
    url: () => "/v1/organizations/branding",
    body: () => ({ color: "#abcdef", logo: "https://cdn.example.com/logo.png" }),
    ok: 200,
  },
  { method: "GET", path: "/v1/organizations/members", url: () => "/v1/organizations/members", ok: 200 },
  { method: "GET", path: "/v1/users/me", url: () => "/v1/users/me", ok: 200 },
  {
    method: "PUT",
    path: "/v1/organizations/members/:memberId/roles",
    url: (f) => `/v1/organizations/members/${f.organizationId}/roles`,
    body: () => ({ role: "admin" }),
    ok: 200,
  },
  {
    // The one member, the owner, cannot be removed: the best a valid call gets is this refusal.
    method: "DELETE",
    path: "/v1/organizations/members/:memberId",
    url: (f) => `/v1/organizations/members/${f.organizationId}`,
    ok: 409,
  },
  {
    // The fixtures' workflow has an override for the fixtures' tenant; this one is for a new tenant.
    method: "POST",
    path: "/v1/workflow-overrides",
    url: () => "/v1/workflow-overrides",
    // Each call another body (the Idempotency-Key test sends the key again with a second one).
    body: (f) => ({
      workflowId: f.inAppIdentifier,
      tenantId: f.tenantId,
      active: overrideBodies++ % 2 === 1,
    }),
    ok: 201,
  },
  {
    method: "GET",
    path: "/v1/workflow-overrides",
    url: () => "/v1/workflow-overrides?page=0&limit=10",
    ok: 200,
  },
  ...(
    [
      ["GET", 200, undefined],
      ["PUT", 200, () => ({ active: counter++ % 2 === 0 })],
      ["DELETE", 200, undefined],
    ] as const
  ).map(
    ([method, ok, body]): CatalogRoute => ({
      method,
      path: "/v1/workflow-overrides/:overrideId",
      url: (f) => `/v1/workflow-overrides/${f.overrideId}`,
      ...(body ? { body } : {}),
      ok,
      resourceUrls: (f) => [
        {
          url: `/v1/workflow-overrides/${f.overrideId}`,
          notFound: new RegExp(`^Workflow Override with id ${f.overrideId} not found$`),
        },
      ],
    }),
  ),
  ...(
    [
      ["GET", 200, undefined],
      ["PUT", 200, () => ({ preferenceSettings: { email: counter++ % 2 === 0 } })],
    ] as const
  ).map(
    ([method, ok, body]): CatalogRoute => ({
      method,
      path: "/v1/workflow-overrides/workflows/:workflowId/tenants/:tenantId",
      url: (f) => `/v1/workflow-overrides/workflows/${f.workflowId}/tenants/${f.tenantId}`,
      ...(body ? { body } : {}),
      ok,
      resourceUrls: (f) => [
        {
          url: `/v1/workflow-overrides/workflows/${f.workflowId}/tenants/${f.tenantId}`,
          notFound: new RegExp(`^Workflow ${f.workflowId} was not found$`),
        },
      ],
    }),
  ),
  {
    method: "POST",
    path: "/v1/topics",
    url: () => "/v1/topics",
    body: () => ({ key: hexId(), name: "Catalog topic" }),
    ok: 201,
  },
  {
    method: "GET",
    path: "/v1/topics",
    url: () => "/v1/topics?page=0&pageSize=10",
    ok: 200,
  },
  topicRoute("GET", "", 200),
  topicRoute("PATCH", "", 200, () => ({ name: uniqueName("Catalog rename") })),
  topicRoute("DELETE", "", 204, undefined, (f) => f.emptyTopicKey),
  // Not scoped: adding to a key the environment has no topic for creates the topic (as Novu does).
  // (A second, unknown subscriberId makes each call's body its own.)
  {
    ...topicRoute("POST", "/subscribers", 200, (f) => ({ subscribers: [f.subscriberId, hexId()] })),
    resourceUrls: undefined,
  },
  topicRoute("POST", "/subscribers/removal", 204, (f) => ({ subscribers: [f.subscriberId, hexId()] })),
  topicRoute("GET", "/subscribers/:subscriberId", 200),
  {
    method: "GET",
    path: "/v1/environments/me",
    url: () => "/v1/environments/me",
    ok: 200,
  },
  {
    method: "PUT",
    path: "/v1/environments/me",
    url: () => "/v1/environments/me",
    body: () => ({ hmac: true }),
    ok: 200,
  },
  {
    method: "GET",
    path: "/v1/environments",
    url: () => "/v1/environments",
    ok: 200,
  },
  {
    method: "GET",
    path: "/v1/environments/api-keys",
    url: () => "/v1/environments/api-keys",
    ok: 200,
  },
  {
    method: "POST",
    path: "/v1/environments/api-keys/regenerate",
    url: () => "/v1/environments/api-keys/regenerate",
    ok: 201,
    noIdempotencyKey: "a stored response would keep the new key in plaintext",
    revokesKey: true,
  },
  {
    method: "POST",
    path: "/v1/events/trigger",
    url: () => "/v1/events/trigger",
    // Without a transactionId: the Idempotency-Key then makes it (the trigger's own retry key).
    body: (f) => ({ name: f.inAppIdentifier, to: f.subscriberId, payload: { n: counter++ } }),
    ok: 201,
  },
  {
    method: "POST",
    path: "/v1/events/trigger/bulk",
    url: () => "/v1/events/trigger/bulk",
    body: (f) => ({ events: [{ name: f.inAppIdentifier, to: f.subscriberId, payload: { n: counter++ } }] }),
    ok: 201,
  },
  {
    method: "POST",
    path: "/v1/events/trigger/broadcast",
    url: () => "/v1/events/trigger/broadcast",
    body: (f) => ({ name: f.inAppIdentifier, payload: { n: counter++ } }),
    ok: 201,
  },
  {
    // Not scoped: canceling a transaction the environment does not have answers `{data:false}`.
    method: "DELETE",
    path: "/v1/events/trigger/:transactionId",
    url: (f) => `/v1/events/trigger/${f.transactionId}`,
    ok: 200,
  },
  subscriberRoute("GET", "/notifications/feed", 200),
  subscriberRoute("GET", "/notifications/unseen", 200),
  {
    ...subscriberRoute("POST", "/messages/mark-as", 201),
    noIdempotencyKey: "it sets a state (read, seen, an action's status): repeating it changes nothing more",
    body: (f) => ({ messageId: f.messageId, markAs: counter++ % 2 === 0 ? "read" : "unread" }),
  },
  {
    ...subscriberRoute("POST", "/messages/markAs", 201),
    noIdempotencyKey: "it sets a state (read, seen, an action's status): repeating it changes nothing more",
    body: (f) => ({ messageId: [f.messageId], mark: { seen: counter++ % 2 === 0 } }),
  },
  {
    ...subscriberRoute("POST", "/messages/mark-all", 201, () => ({
      markAs: counter++ % 2 === 0 ? "read" : "seen",
    })),
    noIdempotencyKey: "it sets a state (read, seen, an action's status): repeating it changes nothing more",
  },
  {
    ...subscriberRoute("POST", "/messages/:messageId/actions/:type", 201, () => ({
      status: counter++ % 2 === 0 ? "done" : "pending",
    })),
    noIdempotencyKey: "it sets a state (read, seen, an action's status): repeating it changes nothing more",
    url: (f) => `/v1/subscribers/${f.subscriberId}/messages/${f.messageId}/actions/primary`,
    resourceUrls: (f) => [
      {
        url: `/v1/subscribers/${f.subscriberId}/messages/${f.messageId}/actions/primary`,
        notFound: new RegExp(`^Subscriber ${f.subscriberId} was not found$`),
      },
    ],
  },
  {
    method: "GET",
    path: "/v1/messages",
    url: () => "/v1/messages?page=0&limit=10",
    ok: 200,
  },
  {
    method: "DELETE",
    path: "/v1/messages/:messageId",
    url: (f) => `/v1/messages/${f.messageId}`,
    ok: 200,
    resourceUrls: (f) => [
      { url: `/v1/messages/${f.messageId}`, notFound: new RegExp(`^Message ${f.messageId} was not found$`) },
    ],
  },
  {
    method: "DELETE",
    path: "/v1/messages/transaction/:transactionId",
    url: (f) => `/v1/messages/transaction/${f.transactionId}`,
    ok: 204,
    resourceUrls: (f) => [
      {
        url: `/v1/messages/transaction/${f.transactionId}`,
        notFound: new RegExp(`^No messages of transaction ${literally(f.transactionId)} were found$`),
      },
    ],
  },
  {
    method: "GET",
    path: "/v1/notifications",
    url: () => "/v1/notifications?page=0",
    ok: 200,
  },
  {
    method: "GET",
    path: "/v1/notifications/:notificationId",
    url: (f) => `/v1/notifications/${f.notificationId}`,
    ok: 200,
    resourceUrls: (f) => [
      {
        url: `/v1/notifications/${f.notificationId}`,
        notFound: new RegExp(`^Notification ${f.notificationId} was not found$`),
      },
    ],
  },
  {
    method: "GET",
    path: "/v1/notifications/stats",
    url: () => "/v1/notifications/stats",
    ok: 200,
  },
  {
    method: "GET",
    path: "/v1/notifications/graph/stats",
    url: () => "/v1/notifications/graph/stats?days=7",
    ok: 200,
  },
  {
    method: "GET",
    path: "/v1/execution-details",
    url: (f) => `/v1/execution-details?notificationId=${f.notificationId}`,
    ok: 200,
  },
  ...INTEGRATION_ROUTES,
  ...SUBSCRIBER_NOTIFICATION_ROUTES,
  ...WORKFLOW_V2_ROUTES,
  ...ENVIRONMENT_ROUTES,
  ...V2_ROUTES,
];

/** One SMTP server for the file's test emails, started when first needed; it does not hold the process. */
let catalogSink: Promise<SmtpSink> | undefined;
const catalogSmtpSink = () => {
  catalogSink ??= startSmtpSink({ unref: true });
  return catalogSink;
};

/**
 * A fresh tenant with, in its Development environment: one workflow, one unused group, one
 * subscriber, a topic holding that subscriber and an empty topic.
 */
export async function makeFixtures(ctx: TestContext): Promise<Fixtures> {
  const tenant = await ctx.tenant();
  const api = ctx.client(tenant.dev.apiKey);
  const created = async (res: Promise<LightMyRequestResponse>, status = 201) => {
    const answer = await res;
    assert.equal(answer.statusCode, status, answer.body);
    return answer;
  };
  const subscriberId = hexId();
  const topicKey = hexId();
  const emptyTopicKey = hexId();
  const tenantIdentifier = hexId();
  const transactionId = hexId();
  // What does not depend on anything else is made at once (the suite makes a set per route).
  const [workflow, group, inApp, , , spare, integration, , testEmailIntegration, layout] = await Promise.all([
    createWorkflow(ctx, tenant.dev.apiKey, tenant.dev.generalGroupId, {
      name: uniqueName("Fixture workflow"),
      steps: [{ template: { type: "email", subject: "Hi", content: "Hello {{firstName}}" } }],
    }),
    createGroup(ctx, tenant.dev.apiKey, uniqueName("Fixture group")),
    createWorkflow(ctx, tenant.dev.apiKey, tenant.dev.generalGroupId, {
      name: uniqueName("Fixture in-app workflow"),
      active: true,
      steps: [{ template: { type: "in_app", content: "Hello {{subscriber.firstName}}" } }],
    }),
    (async () => {
      await created(api.post("/v1/subscribers", { subscriberId, firstName: "Fixture" }));
      // Adding to a topic that does not exist yet creates it.
      await created(api.post(`/v1/topics/${topicKey}/subscribers`, { subscribers: [subscriberId] }), 200);
    })(),
    created(api.post("/v1/topics", { key: emptyTopicKey, name: "Fixture topic" })),
    created(api.post("/v1/environments", { name: uniqueName("Fixture environment"), color: "#000" })),
    created(
      api.post("/v1/integrations", {
        providerId: "nodemailer",
        channel: "email",
        credentials: {
          host: "smtp.example.com",
          port: "587",
          from: "team@example.com",
          password: "fixture-secret",
        },
      }),
    ),
    created(api.post("/v1/tenants", { identifier: tenantIdentifier, name: "Fixture tenant" })),
    (async () =>
      created(
        api.post("/v1/integrations", {
          providerId: "nodemailer",
          channel: "email",
          credentials: {
            host: "127.0.0.1",
            port: String((await catalogSmtpSink()).port),
            ignoreTls: true,
            from: "team@example.com",
          },
        }),
      ))(),
    created(
      api.post("/v1/layouts", {
        name: "Fixture layout",
        identifier: hexId(),
        content: "<div>{{{body}}}</div>",
      }),
    ),
  ]);
  const bridgeUrl = await startCatalogBridge();
  await created(api.post("/v1/bridge/sync", { bridgeUrl }));
  const inAppIdentifier: string = inApp.triggers[0].identifier;
  const tenantId: string = (await created(api.get(`/v1/tenants/${tenantIdentifier}`), 200)).json().data._id;
  const override = await created(
    api.post("/v1/workflow-overrides", {
      workflowId: workflow._id,
      tenantId,
      preferenceSettings: { sms: false },
    }),
  );
  const trigger = await created(
    api.post("/v1/events/trigger", { name: inAppIdentifier, to: subscriberId, transactionId }),
  );
  assert.equal(trigger.json().data.status, "processed", trigger.body);
  const message = await waitForFeedMessage(ctx, tenant.dev.apiKey, subscriberId, transactionId);
  return {
    tenant,
    workflowId: workflow._id,
    workflowIdentifier: workflow.triggers[0].identifier,
    groupId: group._id,
    subscriberId,
    topicKey,
    emptyTopicKey,
    inAppIdentifier,
    transactionId,
    notificationId: message._notificationId,
    messageId: message._id,
    integrationId: integration.json().data._id,
    testEmailIntegrationId: testEmailIntegration.json().data._id,
    spareEnvironmentId: spare.json().data._id,
    tenantIdentifier,
    bridgeUrl,
    layoutId: layout.json().data._id,
    organizationId: (await created(api.get("/v1/organizations/me"), 200)).json().data._id,
    feedId: (await created(api.post("/v1/feeds", { name: uniqueName("Fixture feed") }))).json().data._id,
    tenantId,
    overrideId: override.json().data._id,
  };
}

/** The transaction's message in the subscriber's feed, once it is there (the worker runs in-process). */
async function waitForFeedMessage(
  ctx: TestContext,
  apiKey: string,
  subscriberId: string,
  transactionId: string,
) {
  const api = ctx.client(apiKey);
  const found = await poll(
    async () => {
      const feed = await api.get(`/v1/subscribers/${subscriberId}/notifications/feed`);
      assert.equal(feed.statusCode, 200, feed.body);
      return (feed.json().data as { _id: string; _notificationId: string; transactionId: string }[]).find(
        (m) => m.transactionId === transactionId,
      );
    },
    (message) => message !== undefined,
    { what: `the in-app message of transaction ${transactionId}` },
  );
  return found as NonNullable<typeof found>;
}
