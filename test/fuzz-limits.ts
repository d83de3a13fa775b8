// The fuzzer's second part (test/hostile-input.test.ts): generated attacks on the limits a hostile
// tenant meets, each a request or two against a fixture environment, with the invariants each must
// keep. What is generated: templates that loop without end or render past RENDER_MAX_BYTES, payloads
// over their size, chat webhooks and SMTP hosts at loopback, private and metadata addresses (and a
// listener of ours there, which must get nothing), integration updates that send the mask with a new
// server, inbox sessions without a valid HMAC rewriting a subscriber, and triggers past the quotas.
import { createHmac, randomBytes } from "node:crypto";
import net from "node:net";
import fc from "fast-check";
import type { InjectOptions, LightMyRequestResponse } from "fastify";
import { sql } from "kysely";
import type { App } from "../src/http/types.ts";
import { SecretBox } from "../src/store/secret-box.ts";
import type { Store } from "../src/store/store.ts";
import { errorBodyProblem, leaksInternals } from "./error-body.ts";
import { createWorkflow, uniqueName } from "./factories.ts";
import { TEST_SECRET_KEY, type TestContext, type TestTenant } from "./harness.ts";

/** The limits the fuzzed app runs with (its configuration, as the process would read it). */
export const LIMITS = {
  perTrigger: 20,
  perMinute: 60,
  pendingJobs: 400,
  sessionsPerMinute: 5,
  renderMaxBytes: 256 * 1024,
} as const;

export const LIMITS_ENV: Record<string, string> = {
  RATE_LIMIT_RPS: "0",
  QUOTA_RECIPIENTS_PER_TRIGGER: String(LIMITS.perTrigger),
  QUOTA_RECIPIENTS_PER_MINUTE: String(LIMITS.perMinute),
  QUOTA_PENDING_JOBS: String(LIMITS.pendingJobs),
  SESSION_NEW_SUBSCRIBERS_PER_MINUTE: String(LIMITS.sessionsPerMinute),
  // No TIDINGS_OUTBOUND_ALLOW: loopback, private and metadata addresses are refused, as shipped.
  SMTP_TIMEOUT_MS: "500",
  WEBHOOK_TIMEOUT_MS: "500",
};

const FIXTURE_PASSWORD = `fixture-password-${randomBytes(6).toString("hex")}`;
const ORIGINAL_SMTP = { host: "smtp.fixture.invalid", port: "587", user: "mailer" };
/** The path of the public webhooks the fuzzer saves: a secret, which no answer or log may show. */
const WEBHOOK_TOKEN = `hook-token-${randomBytes(6).toString("hex")}`;
const VICTIM = {
  firstName: "Victim",
  lastName: "Person",
  email: "victim@example.com",
  phone: "+15555550100",
};
/** Subscribers that inbox sessions may create carry this prefix. */
const SESSION_PREFIX = "fz-session-";
const MASK = "********";

/** A listener on loopback (IPv4 and, where there is one, IPv6) that counts whatever connects. */
export interface InternalListener {
  port: number;
  /** What it sends every connection: no answer or log may ever hold it. */
  secret: string;
  connections(): number;
  close(): Promise<void>;
}

export async function startInternalListener(): Promise<InternalListener> {
  const secret = `internal-listener-${randomBytes(6).toString("hex")}`;
  let connections = 0;
  const onConnection = (socket: net.Socket) => {
    connections++;
    socket.on("error", () => {});
    socket.end(`220 ${secret}\r\nHTTP/1.1 200 OK\r\n\r\n${secret}`);
  };
  const v4 = net.createServer(onConnection);
  const servers = [v4];
  await new Promise<void>((resolve) => v4.listen(0, "127.0.0.1", resolve));
  const port = (v4.address() as net.AddressInfo).port;
  const v6 = net.createServer(onConnection);
  await new Promise<void>((resolve) => {
    v6.once("error", () => resolve());
    v6.listen(port, "::1", () => {
      servers.push(v6);
      resolve();
    });
  });
  return {
    port,
    secret,
    connections: () => connections,
    close: async () => {
      await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
    },
  };
}

/** What the generated attacks run against: a tenant, its public identifier, what it holds. */
export interface LimitFixtures {
  tenant: TestTenant;
  devIdentifier: string;
  prodIdentifier: string;
  victimId: string;
  /** An active in-app workflow and an active chat workflow (the environment has Slack on). */
  inAppName: string;
  chatName: string;
  /** A topic with more members than one trigger may reach, and a small one. */
  crowdKey: string;
  smallKey: string;
  /** Subscribers of the environment to send triggers to. */
  subscriberIds: string[];
  /** The nodemailer integration, with its password, whose mask the fuzzer sends with new servers. */
  integrationId: string;
}

const hexId = () => randomBytes(12).toString("hex");

export async function makeLimitFixtures(ctx: TestContext, app: App): Promise<LimitFixtures> {
  const tenant = await ctx.tenant();
  const send = async (apiKey: string, method: InjectOptions["method"], url: string, payload?: object) => {
    const res = await app.inject({
      method,
      url,
      headers: { authorization: `ApiKey ${apiKey}` },
      ...(payload ? { payload } : {}),
    });
    if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
    return res.json().data;
  };
  const key = tenant.dev.apiKey;
  const victimId = `victim-${hexId()}`;
  await send(key, "POST", "/v1/subscribers", { subscriberId: victimId, ...VICTIM });
  await send(key, "PUT", `/v1/subscribers/${victimId}/credentials`, {
    providerId: "slack",
    credentials: { webhookUrl: `https://hooks.fixture.invalid/${WEBHOOK_TOKEN}` },
  });
  const subscriberIds = Array.from({ length: LIMITS.perTrigger + 5 }, hexId);
  await send(key, "POST", "/v1/subscribers/bulk", {
    subscribers: subscriberIds.map((subscriberId) => ({ subscriberId })),
  });
  const crowdKey = `crowd-${hexId()}`;
  await send(key, "POST", `/v1/topics/${crowdKey}/subscribers`, { subscribers: subscriberIds });
  const smallKey = `small-${hexId()}`;
  await send(key, "POST", `/v1/topics/${smallKey}/subscribers`, { subscribers: subscriberIds.slice(0, 5) });
  const inApp = await createWorkflow(ctx, key, tenant.dev.generalGroupId, {
    name: uniqueName("Limits in-app"),
    active: true,
    steps: [{ template: { type: "in_app", content: "Hello {{subscriber.firstName}}" } }],
  });
  const chat = await createWorkflow(ctx, key, tenant.dev.generalGroupId, {
    name: uniqueName("Limits chat"),
    active: true,
    steps: [{ template: { type: "chat", content: "Hello {{subscriber.firstName}}" } }],
  });
  await send(key, "POST", "/v1/integrations", { providerId: "slack", channel: "chat", active: true });
  // Inactive: email steps are skipped, and nothing is sent to a server of the fuzzer's.
  const integration = await send(key, "POST", "/v1/integrations", {
    providerId: "nodemailer",
    channel: "email",
    active: false,
    credentials: { ...ORIGINAL_SMTP, password: FIXTURE_PASSWORD, from: "team@example.com" },
  });
  const identifier = async (apiKey: string) => (await send(apiKey, "GET", "/v1/environments/me")).identifier;
  return {
    tenant,
    devIdentifier: await identifier(key),
    prodIdentifier: await identifier(tenant.prod.apiKey),
    victimId,
    inAppName: inApp.triggers[0].identifier,
    chatName: chat.triggers[0].identifier,
    crowdKey,
    smallKey,
    subscriberIds,
    integrationId: integration._id,
  };
}

// ---------------------------------------------------------------- generators

/** Hosts that are loopback, private, link-local (the metadata address), unspecified or multicast. */
const INTERNAL_HOSTS = [
  "127.0.0.1",
  "127.1",
  "127.0.0.2",
  "2130706433",
  "0x7f000001",
  "0177.0.0.1",
  "0.0.0.0",
  "localhost",
  "LOCALHOST",
  "localhost.",
  "[::1]",
  "[::]",
  "[::ffff:127.0.0.1]",
  "[::ffff:7f00:1]",
  "[0:0:0:0:0:0:0:1]",
  "169.254.169.254",
  "[fe80::1]",
  "[fd00::1]",
  "10.0.0.1",
  "172.16.0.1",
  "192.168.1.1",
  "100.64.0.1",
  "224.0.0.1",
];

/** An internal address as a URL, often at our listener's port, sometimes disguised. */
const internalUrl = (port: number) =>
  fc
    .record({
      scheme: fc.constantFrom("http", "https"),
      host: fc.constantFrom(...INTERNAL_HOSTS),
      port: fc.constantFrom(port, port, port, 22, 6379, 80),
      path: fc.constantFrom("/", "/hook", "/latest/meta-data/", "/_search", "/api/webhooks/1/x"),
      disguise: fc.constantFrom("none", "none", "userinfo", "fragment", "backslash"),
    })
    .map(({ scheme, host, port: p, path, disguise }) => {
      const authority = `${host}:${p}`;
      if (disguise === "userinfo") return `${scheme}://hooks.example.com@${authority}${path}`;
      if (disguise === "fragment") return `${scheme}://${authority}${path}#@hooks.example.com/`;
      if (disguise === "backslash") return `${scheme}://${authority}\\@hooks.example.com${path}`;
      return `${scheme}://${authority}${path}`;
    });

const internalHost = fc.constantFrom(
  ...INTERNAL_HOSTS.map((host) => host.replace(/^\[(.*)\]$/, "$1")).filter((host) => host !== "localhost."),
);

/** Loops over the payload's list that reach it from any depth (through @root). */
const EACH_FORMS = [
  (inner: string) => `{{#each @root.a}}${inner}{{/each}}`,
  (inner: string) => `{{#each (sortBy @root.a "i")}}${inner}{{/each}}`,
  (inner: string) => `{{#with @root}}{{#each a}}${inner}{{/each}}{{/with}}`,
  (inner: string) => `{{#each (groupBy @root.a "k")}}{{#each @root.a}}${inner}{{/each}}{{/each}}`,
];

/** A template: nested loops over the payload's list (a runaway at depth 3 or more over 100), big output, or a plain one. */
const template: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc
      .record({
        forms: fc.array(fc.nat({ max: EACH_FORMS.length - 1 }), { minLength: 2, maxLength: 5 }),
        inner: fc.constantFrom("x", "{{this}}", "{{@index}}", "{{json @root.a}}", "{{{@root.big}}}"),
      })
      .map(({ forms, inner }) =>
        forms.reduce<string>((body, form) => (EACH_FORMS[form] as (s: string) => string)(body), inner),
      ),
  },
  {
    weight: 2,
    arbitrary: fc
      .integer({ min: 1, max: 8 })
      .map((n) => Array.from({ length: n }, () => "{{big}}").join(" and ")),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      "{{json this}}{{json this}}{{json this}}{{json this}}",
      "{{#each (groupBy a 'k')}}{{#each items}}{{json @root}}{{/each}}{{/each}}",
      "{{#each (unique a)}}{{#each @root.a}}{{#each @root.a}}.{{/each}}{{/each}}{{/each}}",
      "Hello {{subscriber.firstName}}, {{a.length}} items",
    ),
  },
);

/** What the attacks send: one or two requests, and what to check of the answers. */
export type Attack =
  | {
      kind: "runaway";
      steps: { type: "in_app" | "email" | "chat"; content: string }[];
      size: number;
      big: number;
    }
  | { kind: "oversized"; bytes: number; where: "payload" | "overrides"; route: "trigger" | "bulk" }
  | { kind: "webhook-saved"; url: string; how: "put" | "patch" | "create" | "update" | "bulk" }
  | { kind: "webhook-inline"; url: string; providerId: string }
  | { kind: "smtp-host"; host: string; port: number; check: boolean; how: "create" | "update" }
  | {
      kind: "mask";
      change: Record<string, unknown>;
      password: "mask" | "omitted" | "new";
      check: boolean;
    }
  | {
      kind: "session";
      route: "inbox" | "widget";
      who: "victim" | "new";
      hash: "none" | "garbage" | "other-subscriber";
      env: "dev" | "prod";
    }
  | { kind: "hmac-off" }
  | {
      kind: "quota";
      route: "trigger" | "bulk" | "broadcast";
      targets: ("crowd" | "small" | number)[];
    }
  | { kind: "minute" };

export const attack = (port: number): fc.Arbitrary<Attack> =>
  fc.oneof(
    {
      weight: 3,
      arbitrary: fc.record({
        kind: fc.constant("runaway" as const),
        steps: fc.array(
          fc.record({
            type: fc.constantFrom("in_app" as const, "email" as const, "chat" as const),
            content: template,
          }),
          { minLength: 1, maxLength: 2 },
        ),
        size: fc.constantFrom(3, 10, 100, 100, 200),
        big: fc.constantFrom(0, 1_000, 60_000, 300_000),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant("oversized" as const),
        // Past a document's 512 KiB (a 400), or past the whole body's 1 MiB (BODY_LIMIT: a 413).
        bytes: fc.oneof(
          fc.integer({ min: 513 * 1024, max: 960 * 1024 }),
          fc.integer({ min: 1100 * 1024, max: 1500 * 1024 }),
        ),
        where: fc.constantFrom("payload" as const, "overrides" as const),
        route: fc.constantFrom("trigger" as const, "bulk" as const),
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant("webhook-saved" as const),
        url: internalUrl(port),
        how: fc.constantFrom(
          "put" as const,
          "patch" as const,
          "create" as const,
          "update" as const,
          "bulk" as const,
        ),
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant("webhook-inline" as const),
        url: internalUrl(port),
        providerId: fc.constantFrom("slack", "discord", "msteams", "mattermost"),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant("smtp-host" as const),
        host: internalHost,
        port: fc.constantFrom(port, 25, 587),
        check: fc.boolean(),
        how: fc.constantFrom("create" as const, "update" as const),
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant("mask" as const),
        change: fc.constantFrom<Record<string, unknown>>(
          { host: "smtp.elsewhere.invalid" },
          { host: "SMTP.FIXTURE.INVALID" },
          { host: "smtp.fixture.invalid." },
          { port: "2525" },
          { port: 587 },
          { user: "someone-else" },
          { secure: true },
          { requireTls: true },
          { ignoreTls: true },
          { tlsOptions: { rejectUnauthorized: false } },
          { host: "smtp.elsewhere.invalid", port: "465", secure: true },
          { from: "other@example.com" },
          { senderName: "Renamed" },
        ),
        password: fc.constantFrom("mask" as const, "mask" as const, "omitted" as const, "new" as const),
        check: fc.boolean(),
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant("session" as const),
        route: fc.constantFrom("inbox" as const, "widget" as const),
        who: fc.constantFrom("victim" as const, "victim" as const, "new" as const),
        hash: fc.constantFrom("none" as const, "garbage" as const, "other-subscriber" as const),
        env: fc.constantFrom("dev" as const, "dev" as const, "dev" as const, "prod" as const),
      }),
    },
    { weight: 1, arbitrary: fc.constant({ kind: "hmac-off" as const }) },
    {
      weight: 4,
      arbitrary: fc.record({
        kind: fc.constant("quota" as const),
        route: fc.constantFrom(
          "trigger" as const,
          "trigger" as const,
          "bulk" as const,
          "bulk" as const,
          "broadcast" as const,
        ),
        targets: fc.array(
          fc.oneof(fc.constantFrom("crowd" as const, "small" as const), fc.integer({ min: 1, max: 8 })),
          {
            minLength: 1,
            maxLength: 12,
          },
        ),
      }),
    },
    { weight: 1, arbitrary: fc.constant({ kind: "minute" as const }) },
  );

// ---------------------------------------------------------------- running an attack

const MINUTE_QUOTAS = /\((QUOTA_RECIPIENTS_PER_MINUTE|QUOTA_PENDING_JOBS)\)/;

/** A request sent for an attack, its answer, and what the answer must be (undefined: any proper answer). */
interface Exchange {
  request: InjectOptions;
  res: LightMyRequestResponse;
  expect?: { status: number | number[]; why: string };
}

export interface AttackRun {
  exchanges: Exchange[];
  /** Problems found in what an answer said (beyond its status). */
  notes: string[];
  /** Transactions triggered, whose jobs are checked once the worker has run them. */
  transactions: string[];
}

export async function runAttack(
  app: App,
  store: Store,
  f: LimitFixtures,
  a: Attack,
  listener: InternalListener,
  advanceMinute: () => void,
): Promise<AttackRun> {
  const exchanges: Exchange[] = [];
  const notes: string[] = [];
  const transactions: string[] = [];
  const send = async (request: InjectOptions, expect?: Exchange["expect"]) => {
    const res = await app.inject(request);
    exchanges.push({ request, res, ...(expect ? { expect } : {}) });
    return res;
  };
  const auth = (apiKey = f.tenant.dev.apiKey) => ({ authorization: `ApiKey ${apiKey}` });
  const api = (method: InjectOptions["method"], url: string, payload?: object, expect?: Exchange["expect"]) =>
    send({ method, url, headers: auth(), ...(payload ? { payload } : {}) }, expect);
  const trigger = async (body: Record<string, unknown>, expect?: Exchange["expect"]) => {
    const transactionId = hexId();
    const res = await api("POST", "/v1/events/trigger", { transactionId, ...body }, expect);
    if (res.statusCode === 201) transactions.push(transactionId);
    return res;
  };
  const internal = { status: 400, why: "an internal address is refused when it is saved" };

  switch (a.kind) {
    case "runaway": {
      const created = await api("POST", "/v1/workflows", {
        name: uniqueName("Runaway"),
        notificationGroupId: f.tenant.dev.generalGroupId,
        active: true,
        steps: a.steps.map((step) => ({
          template:
            step.type === "email"
              ? {
                  type: "email",
                  subject: step.content.length < 300 ? step.content : "Runaway",
                  content: step.content,
                }
              : { type: step.type, content: step.content },
        })),
      });
      if (created.statusCode !== 201) break;
      await trigger({
        name: created.json().data.triggers[0].identifier,
        to: a.steps.some((s) => s.type === "chat")
          ? {
              subscriberId: hexId(),
              channels: [
                { providerId: "slack", credentials: { webhookUrl: `http://127.0.0.1:${listener.port}/` } },
              ],
            }
          : hexId(),
        payload: {
          a: Array.from({ length: a.size }, (_, i) => ({ k: i % 7, i })),
          big: "y".repeat(a.big),
        },
      });
      break;
    }
    case "oversized": {
      const heavy = { blob: "z".repeat(a.bytes) };
      const event = { name: f.inAppName, to: f.victimId, [a.where]: heavy };
      const wholeBody = a.bytes > 1024 * 1024;
      if (a.route === "trigger")
        await trigger(event, {
          status: wholeBody ? 413 : 400,
          why: "a payload or overrides over 512 KiB, or a body over BODY_LIMIT, is refused",
        });
      else {
        const res = await api(
          "POST",
          "/v1/events/trigger/bulk",
          { events: [event] },
          { status: wholeBody ? 413 : 201, why: "an oversized event is refused, alone or with its body" },
        );
        if (res.statusCode === 201 && res.json().data[0]?.acknowledged !== false)
          notes.push(`an oversized event was accepted: ${res.body.slice(0, 200)}`);
      }
      break;
    }
    case "webhook-saved": {
      const channels = [{ providerId: "slack", credentials: { webhookUrl: a.url } }];
      if (a.how === "put" || a.how === "patch")
        await api(
          a.how === "put" ? "PUT" : "PATCH",
          `/v1/subscribers/${f.victimId}/credentials`,
          {
            providerId: "slack",
            credentials: { webhookUrl: a.url },
          },
          internal,
        );
      else if (a.how === "create")
        await api("POST", "/v1/subscribers", { subscriberId: hexId(), channels }, internal);
      else if (a.how === "update") await api("PUT", `/v1/subscribers/${f.victimId}`, { channels }, internal);
      else {
        const res = await api("POST", "/v1/subscribers/bulk", {
          subscribers: [{ subscriberId: hexId(), channels }],
        });
        if (res.statusCode === 201 && res.json().data.failed?.length !== 1)
          notes.push(`a bulk entry with an internal webhook was saved: ${res.body.slice(0, 200)}`);
      }
      break;
    }
    case "webhook-inline":
      await trigger({
        name: f.chatName,
        to: {
          subscriberId: hexId(),
          channels: [{ providerId: a.providerId, credentials: { webhookUrl: a.url } }],
        },
      });
      break;
    case "smtp-host": {
      const credentials = { host: a.host, port: String(a.port), from: "team@example.com", password: "p" };
      if (a.how === "create")
        await api(
          "POST",
          "/v1/integrations",
          { providerId: "nodemailer", channel: "email", credentials, check: a.check },
          {
            status: 400,
            why: "an internal SMTP host is refused",
          },
        );
      else
        await api(
          "PUT",
          `/v1/integrations/${f.integrationId}`,
          { credentials: { ...ORIGINAL_SMTP, ...credentials }, check: a.check },
          {
            status: 400,
            why: "an internal SMTP host is refused",
          },
        );
      break;
    }
    case "mask": {
      const credentials: Record<string, unknown> = {
        ...ORIGINAL_SMTP,
        from: "team@example.com",
        ...a.change,
      };
      if (a.password === "mask") credentials.password = MASK;
      if (a.password === "new") credentials.password = `their-own-${hexId()}`;
      // A check would connect to the new server: only where the update is refused before it.
      const check = a.check && a.password !== "new";
      const before = await storedCredentials(store, f.integrationId);
      const res = await api("PUT", `/v1/integrations/${f.integrationId}`, { credentials, check });
      const after = await storedCredentials(store, f.integrationId);
      // A stored password only ever goes to the server it was given for.
      if (
        before.password &&
        after.password === before.password &&
        !sameServer(serverOf(after), serverOf(before))
      )
        notes.push(
          `the stored password now goes to ${JSON.stringify(serverOf(after))} ` +
            `(${res.statusCode}; it was given for ${JSON.stringify(serverOf(before))})`,
        );
      break;
    }
    case "session": {
      const identifier = a.env === "dev" ? f.devIdentifier : f.prodIdentifier;
      const subscriberId = a.who === "victim" && a.env === "dev" ? f.victimId : `${SESSION_PREFIX}${hexId()}`;
      const hash =
        a.hash === "none" ? undefined : a.hash === "garbage" ? "ab".repeat(32) : otherHash(f, subscriberId);
      const profile = {
        firstName: "Mallory",
        lastName: "Attacker",
        email: "mallory@attacker.example",
        phone: "+15555550199",
      };
      const expect =
        a.env === "prod" ? { status: 400, why: "Production needs the subscriber's HMAC" } : undefined;
      await send(
        a.route === "inbox"
          ? {
              method: "POST",
              url: "/v1/inbox/session",
              payload: {
                applicationIdentifier: identifier,
                subscriber: { subscriberId, ...profile },
                ...(hash ? { subscriberHash: hash } : {}),
              },
            }
          : {
              method: "POST",
              url: "/v1/widgets/session/initialize",
              payload: {
                applicationIdentifier: identifier,
                subscriberId,
                ...profile,
                ...(hash ? { hmacHash: hash } : {}),
              },
            },
        expect,
      );
      break;
    }
    case "hmac-off":
      await send(
        {
          method: "PUT",
          url: "/v1/environments/me",
          headers: auth(f.tenant.prod.apiKey),
          payload: { hmac: false },
        },
        { status: 403, why: "Production's HMAC cannot be switched off" },
      );
      break;
    case "quota": {
      const recipient = (target: "crowd" | "small" | number) =>
        target === "crowd" || target === "small"
          ? { type: "Topic", topicKey: target === "crowd" ? f.crowdKey : f.smallKey }
          : f.subscriberIds.slice(0, target);
      if (a.route === "broadcast") {
        const transactionId = hexId();
        const res = await api("POST", "/v1/events/trigger/broadcast", { name: f.inAppName, transactionId });
        if (res.statusCode === 201) transactions.push(transactionId);
      } else if (a.route === "trigger") {
        await trigger({ name: f.inAppName, to: a.targets.slice(0, 3).flatMap((t) => [recipient(t)].flat()) });
      } else {
        const events = a.targets.map((target) => ({
          name: f.inAppName,
          to: recipient(target),
          transactionId: hexId(),
        }));
        const res = await api("POST", "/v1/events/trigger/bulk", { events });
        if (res.statusCode === 201)
          for (const [i, result] of (res.json().data as { acknowledged: boolean }[]).entries())
            if (result.acknowledged) transactions.push(events[i]?.transactionId ?? "");
      }
      break;
    }
    case "minute":
      advanceMinute();
      break;
  }
  return { exchanges, notes, transactions };
}

/** An integration's credentials as stored, opened with the key the test apps seal them with. */
async function storedCredentials(store: Store, integrationId: string): Promise<Record<string, unknown>> {
  const row = await store.db
    .selectFrom("integrations")
    .select(["id", "credentials"])
    .where("id", "=", integrationId)
    .executeTakeFirstOrThrow();
  return JSON.parse(new SecretBox(TEST_SECRET_KEY).open(row.credentials, row.id)) as Record<string, unknown>;
}

const SERVER_FIELDS = ["host", "port", "user", "secure", "requireTls", "ignoreTls", "tlsOptions"] as const;

/** Where and how an SMTP integration's credentials connect: what its password is given for. */
function serverOf(credentials: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(SERVER_FIELDS.map((field) => [field, credentials[field]]));
}

/**
 * Whether two servers are one, read leniently (a host differing in case or its final dot, a port as
 * a number or a string, a flag left out or false): the fuzzer blames the service only for what is
 * surely another server.
 */
function sameServer(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  const norm = (c: Record<string, unknown>) =>
    JSON.stringify([
      String(c.host ?? "")
        .toLowerCase()
        .replace(/\.$/, ""),
      Number(c.port ?? 0),
      String(c.user ?? ""),
      Boolean(c.secure),
      Boolean(c.requireTls),
      Boolean(c.ignoreTls),
      c.tlsOptions && Object.keys(c.tlsOptions).length > 0 ? c.tlsOptions : null,
    ]);
  return norm(a) === norm(b);
}

/** A hash that is valid, but for another subscriber of the environment: it must open nothing of this one. */
const otherHash = (f: LimitFixtures, subscriberId: string) =>
  createHmac("sha256", f.tenant.dev.apiKey).update(`${subscriberId}-other`).digest("hex");

/** What is wrong with one answer of an attack (undefined when it keeps every invariant). */
export function exchangeProblem(e: Exchange, listener: InternalListener): string | undefined {
  const { res, request } = e;
  const method = String(request.method);
  if (res.statusCode >= 500) return `${res.statusCode}: ${res.body.slice(0, 300)}`;
  if (leaksInternals(res.body)) return `internals leaked: ${res.body.slice(0, 300)}`;
  if (res.statusCode >= 400) {
    const shape = errorBodyProblem(res.statusCode, res.headers["content-type"], res.body);
    if (shape) return `${res.statusCode} error body: ${shape}: ${res.body.slice(0, 200)}`;
  }
  for (const secret of [FIXTURE_PASSWORD, WEBHOOK_TOKEN, listener.secret])
    if (res.body.includes(secret)) return `a secret in the answer: ${res.body.slice(0, 200)}`;
  if (e.expect) {
    const allowed = [e.expect.status].flat();
    if (!allowed.includes(res.statusCode))
      return `${e.expect.why}: expected ${allowed.join(" or ")}, got ${res.statusCode} ${res.body.slice(0, 200)}`;
  }
  const retryAfter = res.headers["retry-after"];
  if (res.statusCode === 429 && !(Number(retryAfter) >= 1))
    return `429 without Retry-After: ${res.body.slice(0, 200)}`;
  if (res.statusCode === 422 && /quota_exceeded/.test(res.body) && retryAfter !== undefined)
    return `a 422 invites a retry (Retry-After ${String(retryAfter)})`;
  if (method === "POST" && String(request.url) === "/v1/events/trigger/bulk" && res.statusCode === 201) {
    if (retryAfter !== undefined) return "a bulk 201 with Retry-After: half-accepted";
    const results = res.json().data as { acknowledged: boolean; error?: string[] }[];
    for (const result of results)
      if (!result.acknowledged && MINUTE_QUOTAS.test(result.error?.join(" ") ?? ""))
        return `a bulk call half-accepted past a quota: ${JSON.stringify(result)}`;
  }
  return undefined;
}

// ---------------------------------------------------------------- invariants over the whole run

export interface LimitCounts {
  /** Minutes the fuzz ran in (the clock moved to a new one minutes - 1 times). */
  minutes: number;
  notificationsBefore: number;
}

export async function notificationsOf(store: Store, environmentId: string): Promise<number> {
  const row = await store.db
    .selectFrom("notifications")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("environment_id", "=", environmentId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The recipients counted in the environment's current minute row: never past the quota. */
export async function minuteCount(store: Store, environmentId: string): Promise<number> {
  const row = await store.db
    .selectFrom("quota_recipients")
    .select("recipients")
    .where("environment_id", "=", environmentId)
    .executeTakeFirst();
  return Number(row?.recipients ?? 0);
}

interface JobView {
  status: string;
  executionDetails: { detail: string; raw: string }[];
}

const LIMIT_DETAIL =
  /(loops more than \d+ times|takes longer than \d+ ms to render|renders more than \d+ bytes)/;

/** Everything the run must have kept, once the worker has run what is due; each problem a line. */
export async function runProblems(
  app: App,
  store: Store,
  f: LimitFixtures,
  listener: InternalListener,
  counts: LimitCounts,
  transactions: readonly string[],
  logLines: readonly string[],
): Promise<{ problems: string[]; seen: Record<string, number> }> {
  const problems: string[] = [];
  /** What the run made happen, for its summary line: a run that hits no limit proves little. */
  const seen = { renderLimits: 0, refusedAtSend: 0, notifications: 0 };
  const env = f.tenant.dev.environmentId;
  if (listener.connections() > 0)
    problems.push(`the internal listener got ${listener.connections()} connections`);
  const get = async (url: string, apiKey = f.tenant.dev.apiKey) =>
    (await app.inject({ method: "GET", url, headers: { authorization: `ApiKey ${apiKey}` } })).json().data;
  const victim = await get(`/v1/subscribers/${f.victimId}`);
  for (const [field, value] of Object.entries(VICTIM))
    if (victim[field] !== value)
      problems.push(`the victim's ${field} became ${JSON.stringify(victim[field])}`);
  if ((await get("/v1/environments/me", f.tenant.prod.apiKey)).hmac !== true)
    problems.push("Production's HMAC was switched off");
  const fromSessions = await store.db
    .selectFrom("subscribers")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("environment_id", "=", env)
    .where("subscriber_id", "like", `${SESSION_PREFIX}%`)
    .executeTakeFirstOrThrow();
  if (Number(fromSessions.n) > LIMITS.sessionsPerMinute * counts.minutes)
    problems.push(`inbox sessions created ${fromSessions.n} subscribers in ${counts.minutes} minutes`);
  // The fixture's password went nowhere but to the server it was given for.
  const rows = await store.db
    .selectFrom("integrations")
    .select("id")
    .where("environment_id", "=", env)
    .where("provider_id", "=", "nodemailer")
    .execute();
  for (const row of rows) {
    const credentials = await storedCredentials(store, row.id);
    if (
      credentials.password === FIXTURE_PASSWORD &&
      !sameServer(serverOf(credentials), serverOf(ORIGINAL_SMTP))
    )
      problems.push(`the fixture's password now goes to ${JSON.stringify(serverOf(credentials))}`);
  }
  // Nothing over the render cap is stored; a step that ran into a limit failed, and was not retried.
  const { rows: sizes } = await sql<{ content: number | string | null; subject: number | string | null }>`
    select max(length(content)) as content, max(length(subject)) as subject
    from messages where environment_id = ${env}`.execute(store.db);
  const largest = Math.max(Number(sizes[0]?.content ?? 0), Number(sizes[0]?.subject ?? 0));
  if (largest > LIMITS.renderMaxBytes) problems.push(`a message of ${largest} characters was stored`);
  const { rows: details } = await sql<{ n: number | string | null }>`
    select max(length(detail) + length(raw)) as n from execution_details where environment_id = ${env}`.execute(
    store.db,
  );
  if (Number(details[0]?.n ?? 0) > 4_000) problems.push(`an execution detail of ${details[0]?.n} characters`);
  for (const transactionId of transactions) {
    const jobs = (await get(`/v1/notifications?transactionId=${transactionId}`)).flatMap(
      (n: { jobs: { status: string; executionDetails: { detail: string; raw: string }[] }[] }) => n.jobs,
    );
    for (const job of jobs as JobView[]) {
      const limited = job.executionDetails.filter((d: { detail: string }) => LIMIT_DETAIL.test(d.detail));
      if (limited.length > 0) seen.renderLimits++;
      if (job.executionDetails.some((d) => /refused: /.test(d.raw))) seen.refusedAtSend++;
      if (limited.length > 0 && job.status !== "failed")
        problems.push(`a job past a render limit is ${job.status}: ${limited[0]?.detail}`);
      if (limited.length > 1)
        problems.push(`a job past a render limit was retried: ${limited.length} details`);
      for (const d of job.executionDetails)
        if (d.raw.includes(listener.secret) || d.detail.includes(listener.secret))
          problems.push("the listener's answer is in an execution detail");
    }
  }
  // The minute's quota, over the run: the notifications written, every recipient counted.
  const written = (await notificationsOf(store, env)) - counts.notificationsBefore;
  seen.notifications = written;
  if (written > LIMITS.perMinute * counts.minutes)
    problems.push(`${written} notifications in ${counts.minutes} minutes, past ${LIMITS.perMinute} a minute`);
  for (const line of logLines)
    for (const secret of [FIXTURE_PASSWORD, WEBHOOK_TOKEN, listener.secret])
      if (line.includes(secret)) problems.push(`a secret in a log line: ${line.slice(0, 300)}`);
  return { problems, seen };
}
