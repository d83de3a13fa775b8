// The API key's mirror of the inbox (/v2/subscribers/:subscriberId/notifications, docs/engine.md,
// "The inbox") on both backends, called as @novu/api 3.19 calls it: its paths, methods, query
// encoding (arrays exploded, booleans as words) and bodies, every answer checked against the models
// the SDK parses it with (test/novu-api-models.ts). Each change is checked through another call, the
// subscriber's inbox (through @novu/js) hears of it, and a key of another environment changes nothing.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";
import { assertErrorBody } from "../../test/error-body.ts";
import { createWorkflow, uniqueName } from "../../test/factories.ts";
import { type Client, forEachBackend, type TestContext } from "../../test/harness.ts";
import { applicationIdentifierOf, openInbox, subscriberHash } from "../../test/inbox-client.ts";
import { asNovuApiReads } from "../../test/novu-api-models.ts";
import { poll } from "../../test/poll.ts";
import { ManualClock } from "../clock.ts";

const START = Date.UTC(2026, 6, 1, 9);
const HOUR_MS = 3_600_000;
const hexId = () => randomBytes(12).toString("hex");

/** A notification as @novu/api hands it out (the fields the tests read). */
interface Notification {
  id: string;
  transactionId: string;
  body: string;
  subject?: string;
  isRead: boolean;
  isSeen: boolean;
  isArchived: boolean;
  isSnoozed: boolean;
  snoozedUntil?: string | null;
  deliveredAt?: string[];
  createdAt: string;
  readAt?: string | null;
  firstSeenAt?: string | null;
  archivedAt?: string | null;
  tags?: string[];
  data?: Record<string, unknown>;
  severity: string;
  redirect?: { url: string; target?: string };
  primaryAction?: { label: string; isCompleted: boolean; redirect?: { url: string } };
  secondaryAction?: { label: string; isCompleted: boolean };
  workflow?: { id: string; identifier: string; name: string; critical: boolean; severity: string };
  to: { id: string; subscriberId: string; firstName?: string };
  channelType: string;
}

/** A query string as @novu/api encodes it (its `encodeFormQuery`): arrays exploded, undefined left out. */
function sdkQuery(values: Record<string, string | number | boolean | string[] | undefined>): string {
  const pairs: string[] = [];
  for (const [key, value] of Object.entries(values)) {
    if (value === undefined) continue;
    for (const item of [value].flat()) pairs.push(`${key}=${encodeURIComponent(String(item))}`);
  }
  return pairs.length > 0 ? `?${pairs.join("&")}` : "";
}

forEachBackend(
  "the API key's mirror of the inbox (/v2/subscribers/:subscriberId/notifications)",
  (ctx: TestContext<ManualClock>) => {
    /**
     * A Development tenant, a workflow with severity, tags, buttons and data and a plain one, and a
     * subscriber (made by the API) to deliver to.
     */
    async function setup(options: { tenant?: Awaited<ReturnType<TestContext["tenant"]>> } = {}) {
      const tenant = options.tenant ?? (await ctx.tenant());
      const api = ctx.client(tenant.dev.apiKey);
      const rich = await createWorkflow(ctx, tenant.dev.apiKey, tenant.dev.generalGroupId, {
        name: uniqueName("Billing"),
        active: true,
        severity: "high",
        tags: ["billing"],
        steps: [
          {
            template: {
              type: "in_app",
              content: "Invoice {{n}}",
              subject: "Invoice {{n}}",
              data: { kind: "{{kind}}" },
              cta: {
                type: "redirect",
                data: { url: "/invoices/{{n}}" },
                action: {
                  buttons: [
                    { type: "primary", content: "Pay", url: "/pay/{{n}}" },
                    { type: "secondary", content: "Later" },
                  ],
                },
              },
            },
          },
        ],
      });
      const plain = await createWorkflow(ctx, tenant.dev.apiKey, tenant.dev.generalGroupId, {
        name: uniqueName("News"),
        active: true,
        tags: ["news"],
        steps: [{ template: { type: "in_app", content: "News {{n}}" } }],
      });
      const subscriberId = hexId();
      const made = await api.post("/v1/subscribers", { subscriberId, firstName: "Ada" });
      assert.equal(made.statusCode, 201, made.body);
      const base = `/v2/subscribers/${subscriberId}/notifications`;
      const feedSize = async () =>
        (await api.get(`/v1/subscribers/${subscriberId}/notifications/feed?limit=1`)).json()
          .totalCount as number;
      /** One notification per payload, in order, each delivered a millisecond after the last. */
      const deliver = async (
        workflow: { triggers: { identifier: string }[] },
        payloads: Record<string, unknown>[],
      ) => {
        for (const payload of payloads) {
          const before = await feedSize();
          const res = await api.post("/v1/events/trigger", {
            name: workflow.triggers[0]?.identifier,
            to: subscriberId,
            payload,
          });
          assert.equal(res.statusCode, 201, res.body);
          await poll(feedSize, (n) => n === before + 1, { what: "the notification" });
          ctx.clock.advance(1);
        }
      };
      const list = async (query: Parameters<typeof sdkQuery>[0] = {}, as: Client = api) => {
        const res = await as.get(`${base}${sdkQuery({ limit: 100, ...query })}`);
        assert.equal(res.statusCode, 200, res.body);
        return asNovuApiReads<{ data: Notification[]; hasMore: boolean; filter: Record<string, unknown> }>(
          "list",
          res.json(),
        );
      };
      const ids = async (query: Parameters<typeof sdkQuery>[0] = {}) =>
        (await list(query)).data.map((n) => n.id);
      /** A PATCH of one notification, as the SDK sends it, answered with the notification. */
      const patch = async (suffix: string, body?: Record<string, unknown>) => {
        const res = await api.patch(`${base}/${suffix}`, body);
        assert.equal(res.statusCode, 200, res.body);
        assert.deepEqual(Object.keys(res.json()), ["data"], "one key, which the SDK unwraps");
        return asNovuApiReads<Notification>("notification", res.json());
      };
      /** A bulk POST, as the SDK sends it (always with a body), answered 204. */
      const bulk = async (path: string, body: Record<string, unknown>) => {
        const res = await api.post(`${base}/${path}`, body);
        assert.equal(res.statusCode, 204, res.body);
        assert.equal(res.body, "");
      };
      return { tenant, api, rich, plain, subscriberId, base, deliver, list, ids, patch, bulk };
    }

    test("the list and the count answer what @novu/api parses, with the inbox's filters and pages", async () => {
      const { tenant, rich, plain, subscriberId, base, api, deliver, list, ids } = await setup();
      const t0 = ctx.clock.now();
      await deliver(rich, [
        { n: 1, kind: "monthly" },
        { n: 2, kind: "yearly" },
      ]);
      ctx.clock.advance(HOUR_MS);
      const t1 = ctx.clock.now();
      await deliver(plain, [{ n: 3 }, { n: 4 }]);

      const page = await list();
      assert.deepEqual(
        page.data.map((n) => n.body),
        ["News 4", "News 3", "Invoice 2", "Invoice 1"],
      );
      assert.equal(page.hasMore, false);
      const invoice = page.data[3] as Notification;
      assert.equal(invoice.subject, "Invoice 1");
      assert.deepEqual(invoice.data, { kind: "monthly" });
      assert.deepEqual(invoice.primaryAction, {
        label: "Pay",
        isCompleted: false,
        redirect: { url: "/pay/1" },
      });
      assert.deepEqual(invoice.secondaryAction, { label: "Later", isCompleted: false });
      assert.deepEqual(invoice.redirect, { url: "/invoices/1" });
      assert.deepEqual(invoice.tags, ["billing"]);
      assert.equal(invoice.severity, "high");
      assert.equal(invoice.channelType, "in_app");
      assert.equal(invoice.workflow?.id, rich._id);
      assert.equal(invoice.to.subscriberId, subscriberId);
      assert.equal(invoice.to.firstName, "Ada");
      assert.deepEqual(
        [invoice.isRead, invoice.isSeen, invoice.isArchived, invoice.isSnoozed],
        [false, false, false, false],
      );

      // The same notifications, in the same order and shape, as the subscriber's own inbox lists them.
      const applicationIdentifier = await applicationIdentifierOf(api);
      const inbox = await openInbox(ctx, {
        applicationIdentifier,
        subscriber: { subscriberId },
        subscriberHash: subscriberHash(tenant.dev.apiKey, subscriberId),
        useCache: false,
      });
      try {
        assert.ok(inbox.session, JSON.stringify(inbox.error));
        const seenByInbox = await inbox.novu.notifications.list({ limit: 100 });
        assert.equal(seenByInbox.error, undefined);
        assert.deepEqual(
          seenByInbox.data?.notifications.map((n) => n.id),
          page.data.map((n) => n.id),
        );
      } finally {
        await inbox.close();
      }

      // Pages: the SDK's default limit, a cursor, an offset.
      const first = await list({ limit: 3 });
      assert.equal(first.hasMore, true);
      const next = await list({ limit: 3, after: first.data.at(-1)?.id });
      assert.deepEqual(
        next.data.map((n) => n.body),
        ["Invoice 1"],
      );
      assert.deepEqual(
        (await list({ limit: 2, offset: 2 })).data.map((n) => n.body),
        ["Invoice 2", "Invoice 1"],
      );
      // Filters as the SDK encodes them: severity exploded, flags as words, data as JSON, moments in ms.
      assert.deepEqual(
        (await list({ severity: ["high", "low"] })).data.map((n) => n.body),
        ["Invoice 2", "Invoice 1"],
      );
      assert.deepEqual(
        (await list({ severity: ["none"] })).data.map((n) => n.body),
        ["News 4", "News 3"],
      );
      const byData = await list({ data: JSON.stringify({ kind: "yearly" }), read: false });
      assert.deepEqual(
        byData.data.map((n) => n.body),
        ["Invoice 2"],
      );
      assert.deepEqual(byData.filter, { read: false, data: { kind: "yearly" } });
      assert.deepEqual(
        (await list({ createdGte: t1 })).data.map((n) => n.body),
        ["News 4", "News 3"],
      );
      assert.deepEqual(
        (await list({ createdGte: t0, createdLte: t1 - 1 })).data.map((n) => n.body),
        ["Invoice 2", "Invoice 1"],
      );
      // Contexts are accepted and narrow nothing (Tidings has none); the inbox's tags work too.
      assert.equal((await list({ contextKeys: ["tenant:acme", "team:x"] })).data.length, 4);
      assert.deepEqual(
        (await api.get(`${base}?tags[]=news`)).json().data.map((n: Notification) => n.body),
        ["News 4", "News 3"],
      );
      assert.deepEqual(await ids({ archived: true }), []);

      // The count: a JSON array of filters, answered as `{data: [...]}`, which the SDK unwraps.
      const filters = [
        {},
        { read: false },
        { severity: ["high"] },
        { data: { kind: "monthly" } },
        { tags: ["news"] },
      ];
      const counted = await api.get(`${base}/count${sdkQuery({ filters: JSON.stringify(filters) })}`);
      assert.equal(counted.statusCode, 200, counted.body);
      const counts = asNovuApiReads<{ count: number; filter: Record<string, unknown> }[]>(
        "counts",
        counted.json(),
      );
      assert.deepEqual(
        counts.map((c) => c.count),
        [4, 4, 2, 1, 2],
      );
      assert.deepEqual(
        counts.map((c) => c.filter),
        filters,
      );

      // Bad input is a 400 in the error body the SDK reads, naming the field.
      for (const [url, field] of [
        [`${base}${sdkQuery({ after: hexId() })}`, "after"],
        [`${base}${sdkQuery({ severity: ["urgent"] })}`, "severity"],
        [`${base}${sdkQuery({ data: "{not json" })}`, "data"],
        [`${base}${sdkQuery({ limit: 0 })}`, "limit"],
        [`${base}/count${sdkQuery({ filters: "[]" })}`, "filters"],
        [`${base}/count`, "filters"],
      ] as const) {
        const res = await api.get(url);
        assertErrorBody(res, 400, { path: url.split("?")[0] as string, fields: [field] });
        asNovuApiReads("error", res.json());
      }
    });

    test("each change answers the notification, and shows through the list", async () => {
      const { rich, plain, base, api, deliver, patch, ids, list } = await setup();
      await deliver(rich, [{ n: 1, kind: "monthly" }]);
      await deliver(plain, [{ n: 2 }]);
      const [news, invoice] = (await list()).data as [Notification, Notification];

      const read = await patch(`${invoice.id}/read`);
      assert.deepEqual([read.isRead, read.isSeen], [true, true]);
      assert.equal(read.readAt, new Date(ctx.clock.now()).toISOString());
      assert.deepEqual(await ids({ read: true }), [invoice.id]);
      assert.deepEqual(await ids({ seen: false }), [news.id]);

      const unread = await patch(`${invoice.id}/unread`);
      assert.equal(unread.isRead, false);
      assert.deepEqual(await ids({ read: true }), []);

      const archived = await patch(`${news.id}/archive`);
      assert.deepEqual([archived.isArchived, archived.isRead], [true, true]);
      assert.deepEqual(await ids({ archived: true }), [news.id]);
      assert.deepEqual(await ids({ archived: false }), [invoice.id]);
      const unarchived = await patch(`${news.id}/unarchive`);
      assert.deepEqual([unarchived.isArchived, unarchived.isRead], [false, true]);
      assert.deepEqual(await ids({ archived: true }), []);

      // Complete and revert an action: the action in the path, no body (as the SDK sends it).
      const completed = await patch(`${invoice.id}/actions/primary/complete`);
      assert.equal(completed.primaryAction?.isCompleted, true);
      assert.equal(completed.secondaryAction?.isCompleted, false);
      const listed = (await list()).data.find((n) => n.id === invoice.id);
      assert.equal(listed?.primaryAction?.isCompleted, true);
      const reverted = await patch(`${invoice.id}/actions/primary/revert`);
      assert.equal(reverted.primaryAction?.isCompleted, false);
      assert.equal((await list()).data.find((n) => n.id === invoice.id)?.primaryAction?.isCompleted, false);
      const secondary = await patch(`${invoice.id}/actions/secondary/complete`);
      assert.deepEqual(
        [secondary.primaryAction?.isCompleted, secondary.secondaryAction?.isCompleted],
        [false, true],
      );
      const badAction = await api.patch(`${base}/${invoice.id}/actions/tertiary/complete`);
      assertErrorBody(badAction, 400, {
        path: `${base}/${invoice.id}/actions/tertiary/complete`,
        fields: ["actionType"],
      });

      // Snooze (the SDK sends a Date as ISO text): hidden until its moment, then back unread.
      const wakeAt = new Date(ctx.clock.now() + 2 * HOUR_MS).toISOString();
      const snoozed = await patch(`${invoice.id}/snooze`, { snoozeUntil: wakeAt });
      assert.deepEqual([snoozed.isSnoozed, snoozed.snoozedUntil], [true, wakeAt]);
      assert.deepEqual(await ids(), [news.id]);
      assert.deepEqual(await ids({ snoozed: true }), [invoice.id]);
      for (const snoozeUntil of [new Date(ctx.clock.now() - 1).toISOString(), "tomorrow"]) {
        const refused = await api.patch(`${base}/${news.id}/snooze`, { snoozeUntil });
        assertErrorBody(refused, 400, { path: `${base}/${news.id}/snooze`, fields: ["snoozeUntil"] });
        asNovuApiReads("error", refused.json());
      }
      ctx.clock.advance(2 * HOUR_MS);
      const back = await poll(
        () => ids(),
        (list) => list.length === 2,
        { what: "the snoozed notification back" },
      );
      assert.deepEqual(back, [invoice.id, news.id], "delivered again: the newest");
      // Unsnooze ends one now.
      await patch(`${news.id}/snooze`, { snoozeUntil: new Date(ctx.clock.now() + HOUR_MS).toISOString() });
      assert.deepEqual(await ids({ snoozed: true }), [news.id]);
      const awake = await patch(`${news.id}/unsnooze`);
      assert.equal(awake.isSnoozed, false);
      assert.deepEqual(await ids({ snoozed: true }), []);

      // Delete: 204, gone from the list and the counts.
      const deleted = await api.delete(`${base}/${news.id}`);
      assert.equal(deleted.statusCode, 204, deleted.body);
      assert.equal(deleted.body, "");
      assert.deepEqual(await ids(), [invoice.id]);
      const again = await api.delete(`${base}/${news.id}`);
      assertErrorBody(again, 404, { path: `${base}/${news.id}`, message: /^Notification .* was not found$/ });
      asNovuApiReads("error", again.json());
    });

    test("the bulk changes: seen by ids, read, archive, archive the read, delete, limited by data", async () => {
      const { rich, plain, deliver, bulk, ids, list } = await setup();
      await deliver(rich, [
        { n: 1, kind: "monthly" },
        { n: 2, kind: "yearly" },
      ]);
      await deliver(plain, [{ n: 3 }]);
      const [news, yearly, monthly] = (await list()).data as [Notification, Notification, Notification];

      await bulk("seen", { notificationIds: [news.id, monthly.id] });
      assert.deepEqual(await ids({ seen: true }), [news.id, monthly.id]);
      // The SDK strips every tag from the object it sends: `{}` is no filter.
      await bulk("read", { data: JSON.stringify({ kind: "monthly" }), tags: {} });
      assert.deepEqual(await ids({ read: true }), [monthly.id]);
      await bulk("read-archive", {});
      assert.deepEqual(await ids({ archived: true }), [monthly.id]);
      await bulk("archive", { data: JSON.stringify({ kind: "yearly" }), contextKeys: ["tenant:acme"] });
      assert.deepEqual(await ids({ archived: true }), [yearly.id, monthly.id]);
      assert.deepEqual(await ids({ archived: false }), [news.id]);
      await bulk("read", {});
      assert.deepEqual(await ids({ read: false }), []);
      await bulk("delete", { data: JSON.stringify({ kind: "yearly" }) });
      assert.deepEqual(await ids(), [news.id, monthly.id]);
      await bulk("delete", {});
      assert.deepEqual(await ids(), []);
    });

    test("another environment's key, another subscriber's notification or an unknown one: 404, and nothing changes", async () => {
      const { tenant, rich, subscriberId, base, deliver, list, api } = await setup();
      await deliver(rich, [{ n: 1, kind: "monthly" }]);
      const [notification] = (await list()).data as [Notification];
      // A second subscriber of the same environment, with a notification of its own.
      const other = await setup({ tenant });
      await other.deliver(rich, [{ n: 2, kind: "monthly" }]);
      const [othersNotification] = (await other.list()).data as [Notification];
      const snapshot = async () => [
        await list(),
        await list({ snoozed: true }),
        await other.list(),
        await other.list({ snoozed: true }),
      ];
      const before = await snapshot();

      const snoozeUntil = new Date(ctx.clock.now() + HOUR_MS).toISOString();
      const changes = (id: string): [string, string, Record<string, unknown>?][] => [
        ...["read", "unread", "archive", "unarchive", "unsnooze"].map((mark): [string, string] => [
          "PATCH",
          `${id}/${mark}`,
        ]),
        ["PATCH", `${id}/snooze`, { snoozeUntil }],
        ["PATCH", `${id}/actions/primary/complete`],
        ["PATCH", `${id}/actions/primary/revert`],
        ["DELETE", id],
      ];
      const bulks: [string, string, Record<string, unknown>?][] = [
        ["POST", "seen", { notificationIds: [notification.id] }],
        ...["read", "archive", "read-archive", "delete"].map(
          (path): [string, string, Record<string, unknown>] => ["POST", path, {}],
        ),
        ["GET", ""],
        ["GET", `count?filters=${encodeURIComponent("[{}]")}`],
      ];
      const send = (client: Client, method: string, url: string, body?: Record<string, unknown>) =>
        client.request({
          method: method as "GET",
          url,
          ...(body ? { payload: JSON.stringify(body), headers: { "content-type": "application/json" } } : {}),
        });

      // Keys of the organization's other environment and of another organization: the subscriber is not theirs.
      const stranger = await ctx.tenant();
      for (const key of [tenant.prod.apiKey, stranger.dev.apiKey]) {
        const foreign = ctx.client(key);
        for (const [method, suffix, body] of [...changes(notification.id), ...bulks]) {
          const url = `${base}/${suffix}`.replace(/\/$/, "");
          const res = await send(foreign, method, url, body);
          assertErrorBody(res, 404, {
            path: url.split("?")[0] as string,
            message: new RegExp(`^Subscriber ${subscriberId} was not found$`),
          });
          asNovuApiReads("error", res.json());
        }
      }
      // The right key, but another subscriber's notification, or none at all.
      for (const id of [othersNotification.id, hexId()]) {
        for (const [method, suffix, body] of changes(id)) {
          const url = `${base}/${suffix}`;
          const res = await send(api, method, url, body);
          assertErrorBody(res, 404, { path: url, message: new RegExp(`^Notification ${id} was not found$`) });
        }
      }
      // Seen by ids leaves another subscriber's ids alone.
      const seen = await send(api, "POST", `${base}/seen`, { notificationIds: [othersNotification.id] });
      assert.equal(seen.statusCode, 204, seen.body);
      // An unknown subscriber.
      const nobody = `/v2/subscribers/${hexId()}/notifications`;
      assertErrorBody(await api.get(nobody), 404, { path: nobody, message: /^Subscriber .* was not found$/ });
      assert.deepEqual(await snapshot(), before);
    });

    test("the subscriber's inbox hears of every change through its socket", async () => {
      const { tenant, api, rich, plain, subscriberId, deliver, patch, bulk, list } = await setup();
      await deliver(rich, [{ n: 1, kind: "monthly" }]);
      await deliver(plain, [{ n: 2 }]);
      const inbox = await openInbox(ctx, {
        applicationIdentifier: await applicationIdentifierOf(api),
        subscriber: { subscriberId },
        subscriberHash: subscriberHash(tenant.dev.apiKey, subscriberId),
        useCache: false,
      });
      type Counts = { total: number; severity: Record<string, number> };
      const unread: Counts[] = [];
      const unseen: number[] = [];
      inbox.novu.on("notifications.unread_count_changed", ({ result }: { result: Counts }) =>
        unread.push(result),
      );
      inbox.novu.on("notifications.unseen_count_changed", ({ result }: { result: number }) =>
        unseen.push(result),
      );
      try {
        assert.ok(inbox.session, JSON.stringify(inbox.error));
        await poll(
          () => ctx.app.inboxSockets?.() ?? 0,
          (n) => n >= 1,
          { what: "the socket" },
        );
        const [news, invoice] = (await list()).data as [Notification, Notification];
        await patch(`${invoice.id}/read`);
        await poll(
          () => unread.at(-1),
          (c) => c?.total === 1 && c.severity.high === 0,
          { what: "unread 1 after a read" },
        );
        await bulk("seen", { notificationIds: [news.id] });
        await poll(
          () => unseen.at(-1),
          (n) => n === 0,
          { what: "unseen 0 after seen" },
        );
        await patch(`${news.id}/snooze`, { snoozeUntil: new Date(ctx.clock.now() + HOUR_MS).toISOString() });
        await poll(
          () => unread.at(-1),
          (c) => c?.total === 0,
          { what: "unread 0 after a snooze" },
        );
        await patch(`${news.id}/unsnooze`);
        await poll(
          () => unread.at(-1),
          (c) => c?.total === 1 && c.severity.none === 1,
          { what: "unread 1 after the unsnooze" },
        );
        await bulk("delete", {});
        await poll(
          () => unread.at(-1),
          (c) => c?.total === 0 && c.severity.none === 0,
          { what: "unread 0 after delete all" },
        );
      } finally {
        await inbox.close();
      }
    });
  },
  { clock: () => new ManualClock(START) },
);
