// Novu's current inbox (docs/engine.md, "The inbox") on both backends, driven by @novu/js itself: the
// notifications the engine writes, the feed and its filters (judged by the client's own matcher),
// counts, every operation, snoozes that come back when the clock says so, and the sockets.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";
import { checkNotificationMatchesFilter } from "@novu/js";
import { createWorkflow, uniqueName } from "../../test/factories.ts";
import { forEachBackend, type TestContext } from "../../test/harness.ts";
import {
  applicationIdentifierOf,
  type OpenedInbox,
  openInbox,
  subscriberHash,
} from "../../test/inbox-client.ts";
import { poll } from "../../test/poll.ts";
import { drain } from "../../test/queue-helpers.ts";
import { ManualClock } from "../clock.ts";

const START = Date.UTC(2026, 5, 1, 9);
const HOUR_MS = 3_600_000;
const hexId = () => randomBytes(12).toString("hex");

/** A notification as @novu/js hands it out (the fields the tests read). */
interface Seen {
  id: string;
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
  avatar?: string;
  tags?: string[];
  data?: Record<string, unknown>;
  severity?: string;
  redirect?: { url: string; target?: string };
  primaryAction?: { label: string; isCompleted: boolean; redirect?: { url: string; target?: string } };
  secondaryAction?: { label: string; isCompleted: boolean; redirect?: { url: string; target?: string } };
  workflow?: {
    id: string;
    identifier: string;
    name: string;
    critical: boolean;
    tags?: string[];
    severity: string;
  };
  to: { id: string; subscriberId: string; firstName?: string };
  channelType: string;
}

/** A call's failure as the client reports it: its own message, and the server's answer in `originalError`. */
type ClientError = { message: string; originalError?: { status?: number; body?: { message?: string } } };
type Outcome<T> = { data?: T; error?: ClientError };

/** The result of one of the client's calls, which reports a failure instead of throwing. */
function ok<T>(result: Outcome<T>): T {
  assert.equal(
    result.error,
    undefined,
    `the call failed: ${result.error?.message} ${result.error?.originalError?.status} ${JSON.stringify(result.error?.originalError?.body)}`,
  );
  return result.data as T;
}

/** The failure of one of the client's calls: the server's status and message. */
function failed(result: Outcome<unknown>): { status: number | undefined; message: string } {
  assert.ok(result.error, "the call was expected to fail");
  const answer = result.error.originalError;
  return { status: answer?.status, message: String(answer?.body?.message ?? "") };
}

/** How long a test waits for what the engine, the worker or the sockets do. */
const WAIT_MS = 10_000;

/** The client's notification calls, through an untyped surface (the tests pass filters as the client does). */
type Client = {
  list(
    args: Record<string, unknown>,
  ): Promise<Outcome<{ notifications: Seen[]; hasMore: boolean; filter: unknown }>>;
  count(
    args: Record<string, unknown>,
  ): Promise<Outcome<{ counts?: { count: number; filter: unknown }[]; count?: number }>>;
} & Record<
  | "read"
  | "unread"
  | "seen"
  | "archive"
  | "unarchive"
  | "delete"
  | "snooze"
  | "unsnooze"
  | "completePrimary"
  | "completeSecondary"
  | "revertPrimary"
  | "revertSecondary"
  | "readAll"
  | "seenAll"
  | "archiveAll"
  | "archiveAllRead"
  | "deleteAll",
  (args: Record<string, unknown>) => Promise<Outcome<unknown>>
>;
const notificationsOf = (inbox: OpenedInbox) => inbox.novu.notifications as unknown as Client;

forEachBackend(
  "the inbox's notifications (/v1/inbox/notifications)",
  (ctx: TestContext<ManualClock>) => {
    /**
     * A Development tenant, its workflows (one with severity, tags, buttons and data, one plain),
     * and a session for a new subscriber through @novu/js (no cache: every call asks the server).
     */
    async function setup(
      options: { subscriberId?: string; tenant?: Awaited<ReturnType<TestContext["tenant"]>> } = {},
    ) {
      const tenant = options.tenant ?? (await ctx.tenant());
      const api = ctx.client(tenant.dev.apiKey);
      const rich = await createWorkflow(ctx, tenant.dev.apiKey, tenant.dev.generalGroupId, {
        name: uniqueName("Billing"),
        active: true,
        severity: "high",
        tags: ["billing", "alerts"],
        steps: [
          {
            template: {
              type: "in_app",
              content: "Invoice {{n}} is due, {{subscriber.firstName}}",
              subject: "Invoice {{n}}",
              avatar: "https://cdn.example/{{n}}.png",
              data: {
                invoice: "{{n}}",
                kind: "{{kind}}",
                labels: ["x", "{{label}}"],
                meta: { region: "{{region}}" },
              },
              cta: {
                type: "redirect",
                data: { url: "/invoices/{{n}}", target: "_blank" },
                action: {
                  buttons: [
                    { type: "primary", content: "Pay {{n}}", url: "/pay/{{n}}" },
                    { type: "secondary", content: "Later" },
                  ],
                },
              },
            },
          },
        ],
      });
      const plain = await createWorkflow(ctx, tenant.dev.apiKey, tenant.dev.generalGroupId, {
        name: uniqueName("Digest"),
        active: true,
        tags: ["news"],
        steps: [{ template: { type: "in_app", content: "News {{n}}" } }],
      });
      const applicationIdentifier = await applicationIdentifierOf(api);
      const subscriberId = options.subscriberId ?? hexId();
      const inbox = await openInbox(ctx, {
        applicationIdentifier,
        subscriber: { subscriberId, firstName: "Ada" },
        subscriberHash: subscriberHash(tenant.dev.apiKey, subscriberId),
        useCache: false,
      });
      assert.ok(inbox.session, JSON.stringify(inbox.error));
      const feedSize = async () => {
        const res = await api.get(`/v1/subscribers/${subscriberId}/notifications/feed?limit=1`);
        return res.json().totalCount as number;
      };
      /**
       * Triggers one notification per payload, in order, each delivered before the next and a
       * millisecond apart (the feed is newest first).
       */
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
          await poll(feedSize, (n) => n === before + 1, { what: "the notification", limitMs: WAIT_MS });
          ctx.clock.advance(1);
        }
      };
      return { tenant, api, rich, plain, applicationIdentifier, subscriberId, inbox, deliver };
    }

    test("the engine writes what the inbox shows: subject, body, avatar, data, actions, redirect, tags, severity, workflow", async () => {
      const { inbox, rich, plain, deliver, subscriberId, applicationIdentifier } = await setup();
      try {
        await deliver(rich, [{ n: 7, kind: "monthly", label: "y", region: "eu" }]);
        const { notifications, hasMore } = ok(await notificationsOf(inbox).list({ limit: 10 }));
        assert.equal(hasMore, false);
        assert.equal(notifications.length, 1);
        const [n] = notifications as [Seen];
        assert.equal(n.body, "Invoice 7 is due, Ada");
        assert.equal(n.subject, "Invoice 7");
        assert.equal(n.avatar, "https://cdn.example/7.png");
        assert.deepEqual(n.data, {
          invoice: "7",
          kind: "monthly",
          labels: ["x", "y"],
          meta: { region: "eu" },
        });
        assert.deepEqual(n.primaryAction, {
          label: "Pay 7",
          isCompleted: false,
          redirect: { url: "/pay/7" },
        });
        assert.deepEqual(n.secondaryAction, { label: "Later", isCompleted: false });
        assert.deepEqual(n.redirect, { url: "/invoices/7", target: "_blank" });
        assert.deepEqual(n.tags, ["billing", "alerts"]);
        assert.equal(n.severity, "high");
        assert.equal(n.channelType, "in_app");
        assert.deepEqual(n.workflow, {
          id: rich._id,
          identifier: rich.triggers[0].identifier,
          name: rich.name,
          critical: false,
          tags: ["billing", "alerts"],
          severity: "high",
        });
        assert.equal(n.to.subscriberId, subscriberId);
        assert.equal(n.to.firstName, "Ada");
        assert.deepEqual([n.isRead, n.isSeen, n.isArchived, n.isSnoozed], [false, false, false, false]);
        assert.deepEqual(n.deliveredAt, [n.createdAt]);
        assert.equal(n.createdAt, new Date(ctx.clock.now() - 1).toISOString());
        assert.equal(n.readAt, undefined);
        // A session started now counts it under its workflow's severity.
        await deliver(plain, [{ n: 8 }]);
        const again = await openInbox(ctx, { applicationIdentifier, subscriber: { subscriberId } });
        assert.deepEqual(again.session?.unreadCount, {
          total: 2,
          severity: { high: 1, medium: 0, low: 0, none: 1 },
        });
      } finally {
        await inbox.close();
      }
    });

    test("pages: newest first, by the `after` cursor and by offset, hasMore read not counted", async () => {
      const { inbox, plain, deliver } = await setup();
      try {
        await deliver(
          plain,
          Array.from({ length: 12 }, (_, n) => ({ n })),
        );
        const client = notificationsOf(inbox);
        const first = ok(await client.list({ limit: 5 }));
        assert.equal(first.hasMore, true);
        assert.deepEqual(
          first.notifications.map((n) => n.body),
          ["News 11", "News 10", "News 9", "News 8", "News 7"],
        );
        const second = ok(await client.list({ limit: 5, after: first.notifications.at(-1)?.id }));
        assert.deepEqual(
          second.notifications.map((n) => n.body),
          ["News 6", "News 5", "News 4", "News 3", "News 2"],
        );
        const last = ok(await client.list({ limit: 5, after: second.notifications.at(-1)?.id }));
        assert.deepEqual(
          last.notifications.map((n) => n.body),
          ["News 1", "News 0"],
        );
        assert.equal(last.hasMore, false);
        const byOffset = ok(await client.list({ limit: 3, offset: 10 }));
        assert.deepEqual(
          byOffset.notifications.map((n) => n.body),
          ["News 1", "News 0"],
        );
        const exact = ok(await client.list({ limit: 12 }));
        assert.equal(exact.hasMore, false, "exactly a page: nothing more");
        // An unknown cursor is a 400, not an empty page.
        const unknown = failed(await client.list({ limit: 5, after: hexId() }));
        assert.equal(unknown.status, 400);
        assert.match(unknown.message, /^after /);
      } finally {
        await inbox.close();
      }
    });

    test("filters and counts agree with the client's own matcher: tags (OR, AND of ORs), flags, data, severity, time", async () => {
      const { inbox, rich, plain, deliver } = await setup();
      try {
        const t0 = ctx.clock.now();
        await deliver(rich, [
          { n: 1, kind: "monthly", label: "red", region: "eu" },
          { n: 2, kind: "yearly", label: "blue", region: "us" },
        ]);
        ctx.clock.advance(HOUR_MS);
        const t1 = ctx.clock.now();
        await deliver(rich, [{ n: 3, kind: "monthly", label: "blue", region: "eu" }]);
        await deliver(plain, [{ n: 4 }, { n: 5 }]);
        const client = notificationsOf(inbox);
        const all = ok(await client.list({ limit: 100 })).notifications;
        assert.equal(all.length, 5);
        // Some state to filter on: read, seen, archived, snoozed.
        const byBody = (text: string) => all.find((n) => n.body.startsWith(text)) as Seen;
        ok(await client.read({ notificationId: byBody("Invoice 1").id }));
        ok(await client.seenAll({ notificationIds: [byBody("News 4").id] }));
        ok(await client.archive({ notificationId: byBody("Invoice 2").id }));
        ok(
          await client.snooze({
            notificationId: byBody("News 5").id,
            snoozeUntil: new Date(ctx.clock.now() + HOUR_MS).toISOString(),
          }),
        );
        const everything = [
          ...ok(await client.list({ limit: 100 })).notifications,
          ...ok(await client.list({ limit: 100, snoozed: true })).notifications,
        ];
        assert.equal(everything.length, 5);

        const filters: Record<string, unknown>[] = [
          {},
          { tags: ["billing"] },
          { tags: ["news", "alerts"] },
          { tags: { or: ["nope", "news"] } },
          { tags: { and: [{ or: ["billing"] }, { or: ["alerts", "x"] }] } },
          { tags: { and: [{ or: ["billing"] }, { or: ["news"] }] } },
          { read: true },
          { read: false },
          { seen: true },
          { seen: false },
          { archived: true },
          { archived: false },
          { snoozed: true },
          { snoozed: false },
          { read: false, archived: false, snoozed: false },
          { data: { kind: "monthly" } },
          { data: { kind: ["yearly", "weekly"] } },
          { data: { kind: { or: ["monthly"] } } },
          { data: { labels: "blue" } },
          { data: { labels: { and: [{ or: ["x"] }, { or: ["red", "green"] }] } } },
          { data: { meta: { region: "eu" } } },
          { data: { invoice: 1 } },
          { data: { invoice: "1" } },
          { data: { missing: "x" } },
          { severity: "high" },
          { severity: ["none", "low"] },
          { createdGte: t1 },
          { createdLte: t1 - 1 },
          { createdGte: t0, createdLte: t0 },
          { tags: ["billing"], data: { kind: "monthly" }, read: false },
        ];
        const expected = (filter: Record<string, unknown>) =>
          everything
            .filter(
              (n) =>
                checkNotificationMatchesFilter(n as never, filter as never) &&
                (filter.snoozed === true || !n.isSnoozed) &&
                (filter.severity === undefined || [filter.severity].flat().includes(n.severity ?? "")),
            )
            .map((n) => n.id)
            .sort();
        for (const filter of filters) {
          const listed = ok(await client.list({ limit: 100, ...filter }))
            .notifications.map((n) => n.id)
            .sort();
          assert.deepEqual(listed, expected(filter), `list ${JSON.stringify(filter)}`);
        }
        // Counts: every filter in one call, one count each, in order; the filter comes back as sent.
        const sent = filters
          .slice(0, 30)
          .map((f) => JSON.parse(JSON.stringify(f)) as Record<string, unknown>);
        const { counts } = ok(await client.count({ filters: sent }));
        assert.deepEqual(
          counts?.map((c) => c.count),
          sent.map((f) => expected(f).length),
        );
        assert.deepEqual(
          counts?.map((c) => c.filter),
          sent,
        );
        // One filter alone: the client reads the first count.
        assert.equal(
          ok(await client.count({ read: false, archived: false })).count,
          expected({ read: false, archived: false }).length,
        );
      } finally {
        await inbox.close();
      }
    });

    test("each operation as the client calls it: read, unread, seen, archive, unarchive, actions, delete", async () => {
      const { inbox, rich, deliver } = await setup();
      try {
        await deliver(rich, [{ n: 1 }, { n: 2 }]);
        const client = notificationsOf(inbox);
        const [second, first] = ok(await client.list({ limit: 10 })).notifications as [Seen, Seen];
        const now = new Date(ctx.clock.now()).toISOString();

        const read = ok(await client.read({ notificationId: first.id })) as Seen;
        assert.deepEqual([read.isRead, read.isSeen, read.isArchived], [true, true, false]);
        assert.equal(read.readAt, now);
        assert.equal(read.firstSeenAt, now);
        ctx.clock.advance(60_000);
        const later = new Date(ctx.clock.now()).toISOString();
        const unread = ok(await client.unread({ notificationId: first.id })) as Seen;
        assert.deepEqual([unread.isRead, unread.isSeen], [false, true]);
        assert.equal(unread.readAt, undefined);
        assert.equal(unread.firstSeenAt, now, "first seen stays when it was");

        const archived = ok(await client.archive({ notificationId: first.id })) as Seen;
        assert.deepEqual([archived.isArchived, archived.isRead], [true, true]);
        assert.equal(archived.archivedAt, later);
        const unarchived = ok(await client.unarchive({ notificationId: first.id })) as Seen;
        assert.deepEqual([unarchived.isArchived, unarchived.isRead], [false, true]);
        assert.equal(unarchived.archivedAt, undefined);

        // Seen through the notification itself (POST /seen with its id).
        ok(await client.seen({ notification: second }));
        const seen = ok(await client.list({ limit: 10, seen: true }))
          .notifications.map((n) => n.id)
          .sort();
        assert.deepEqual(seen, [first.id, second.id].sort());

        const done = ok(await client.completePrimary({ notificationId: first.id })) as Seen;
        assert.equal(done.primaryAction?.isCompleted, true);
        assert.equal(done.secondaryAction?.isCompleted, false);
        const other = ok(await client.completeSecondary({ notificationId: first.id })) as Seen;
        assert.deepEqual(
          [other.primaryAction?.isCompleted, other.secondaryAction?.isCompleted],
          [false, true],
        );
        const reverted = ok(await client.revertSecondary({ notificationId: first.id })) as Seen;
        assert.deepEqual(
          [reverted.primaryAction?.isCompleted, reverted.secondaryAction?.isCompleted],
          [false, false],
        );
        assert.equal(reverted.primaryAction?.label, "Pay 1", "the buttons stay");

        ok(await client.delete({ notificationId: first.id }));
        assert.deepEqual(
          ok(await client.list({ limit: 10 })).notifications.map((n) => n.id),
          [second.id],
        );
        const gone = failed(await client.read({ notificationId: first.id }));
        assert.equal(gone.status, 404);
        assert.equal(failed(await client.delete({ notificationId: first.id })).status, 404);
      } finally {
        await inbox.close();
      }
    });

    test("the bulk operations, each limited by tags and data when given: seen, read all, archive all, archive all read, delete all", async () => {
      const { inbox, rich, plain, deliver } = await setup();
      try {
        await deliver(rich, [
          { n: 1, kind: "a" },
          { n: 2, kind: "b" },
        ]);
        await deliver(plain, [{ n: 3 }, { n: 4 }]);
        const client = notificationsOf(inbox);
        const ids = async (filter: Record<string, unknown>) =>
          ok(await client.list({ limit: 100, ...filter }))
            .notifications.map((n) => n.body)
            .sort();

        ok(await client.seenAll({ tags: ["news"] }));
        assert.deepEqual(await ids({ seen: true }), ["News 3", "News 4"]);
        const invoice1 = (await client.list({ limit: 100, data: { kind: "a" } })) as Outcome<{
          notifications: Seen[];
        }>;
        ok(await client.seenAll({ notificationIds: [ok(invoice1).notifications[0]?.id] }));
        assert.deepEqual(await ids({ seen: false }), ["Invoice 2 is due, Ada"]);

        ok(await client.readAll({ data: { kind: "b" } }));
        assert.deepEqual(await ids({ read: true }), ["Invoice 2 is due, Ada"]);
        ok(await client.readAll({ tags: ["news"] }));
        assert.deepEqual(await ids({ read: false }), ["Invoice 1 is due, Ada"]);

        ok(await client.archiveAllRead({ tags: ["billing"] }));
        assert.deepEqual(await ids({ archived: true }), ["Invoice 2 is due, Ada"]);
        ok(await client.archiveAll({ tags: { or: ["news"] } }));
        assert.deepEqual(await ids({ archived: true }), ["Invoice 2 is due, Ada", "News 3", "News 4"]);
        assert.deepEqual(await ids({ archived: false }), ["Invoice 1 is due, Ada"]);
        ok(await client.archiveAll({}));
        assert.deepEqual(await ids({ archived: false }), []);

        ok(await client.deleteAll({ tags: ["news"] }));
        assert.deepEqual(await ids({}), ["Invoice 1 is due, Ada", "Invoice 2 is due, Ada"]);
        ok(await client.deleteAll({}));
        assert.deepEqual(await ids({}), []);
      } finally {
        await inbox.close();
      }
    });

    test("snooze: hidden until its moment, refused in the past or beyond the limit, back unread when the clock gets there; unsnooze ends it now", async () => {
      const { inbox, rich, plain, deliver } = await setup();
      try {
        await deliver(rich, [{ n: 1 }]);
        await deliver(plain, [{ n: 2 }]);
        const client = notificationsOf(inbox);
        const [news, invoice] = ok(await client.list({ limit: 10 })).notifications as [Seen, Seen];
        ok(await client.read({ notificationId: invoice.id }));
        const wakeAt = new Date(ctx.clock.now() + 2 * HOUR_MS).toISOString();
        const snoozed = ok(await client.snooze({ notificationId: invoice.id, snoozeUntil: wakeAt })) as Seen;
        assert.equal(snoozed.isSnoozed, true);
        assert.equal(snoozed.snoozedUntil, wakeAt);
        assert.deepEqual(
          ok(await client.list({ limit: 10 })).notifications.map((n) => n.id),
          [news.id],
        );
        assert.deepEqual(
          ok(await client.list({ limit: 10, snoozed: true })).notifications.map((n) => n.id),
          [invoice.id],
        );

        for (const [snoozeUntil, message] of [
          [new Date(ctx.clock.now() - 1000).toISOString(), /must be in the future/],
          [new Date(ctx.clock.now()).toISOString(), /must be in the future/],
          [new Date(ctx.clock.now() + 2161 * HOUR_MS).toISOString(), /at most 2160 hours/],
          ["tomorrow", /date-time/],
        ] as const) {
          const refused = failed(await client.snooze({ notificationId: news.id, snoozeUntil }));
          assert.equal(refused.status, 400, snoozeUntil);
          assert.match(refused.message, message);
        }
        assert.equal(ok(await client.list({ limit: 10, snoozed: true })).notifications.length, 1);

        // A minute before: still snoozed. At the moment: back, unread and unseen, delivered again.
        ctx.clock.advance(2 * HOUR_MS - 60_000);
        await drain(ctx);
        assert.equal(ok(await client.list({ limit: 10, snoozed: true })).notifications.length, 1);
        ctx.clock.advance(60_000);
        const back = await poll(
          async () => ok(await client.list({ limit: 10 })).notifications,
          (list) => list.length === 2,
          { what: "the snoozed notification back", limitMs: WAIT_MS },
        );
        const woken = back[0] as Seen;
        assert.equal(woken.id, invoice.id, "delivered again: the newest");
        assert.deepEqual([woken.isSnoozed, woken.isRead, woken.isSeen], [false, false, false]);
        assert.equal(woken.createdAt, wakeAt);
        assert.deepEqual(woken.deliveredAt, [invoice.createdAt, wakeAt]);

        // Unsnooze: now, read state as it was; a notification not snoozed is answered as it is.
        ok(await client.read({ notificationId: news.id }));
        ok(
          await client.snooze({
            notificationId: news.id,
            snoozeUntil: new Date(ctx.clock.now() + HOUR_MS).toISOString(),
          }),
        );
        const unsnoozed = ok(await client.unsnooze({ notificationId: news.id })) as Seen;
        assert.deepEqual([unsnoozed.isSnoozed, unsnoozed.isRead], [false, true]);
        assert.equal(unsnoozed.deliveredAt?.length, 2);
        assert.equal((ok(await client.unsnooze({ notificationId: news.id })) as Seen).isSnoozed, false);
        // Its timer, when it comes, finds it awake and changes nothing.
        ctx.clock.advance(HOUR_MS);
        await drain(ctx);
        const after = ok(await client.list({ limit: 10 })).notifications.find(
          (n) => n.id === news.id,
        ) as Seen;
        assert.deepEqual([after.isRead, after.deliveredAt?.length], [true, 2]);
      } finally {
        await inbox.close();
      }
    });

    test("real time through the client: a new notification, and both counts after every change, to that subscriber only", async () => {
      const { inbox, rich, plain, deliver, tenant } = await setup();
      const other = await setup({ tenant });
      type Counts = { total: number; severity: Record<string, number> };
      const received: Seen[] = [];
      const unread: Counts[] = [];
      const unseen: number[] = [];
      const heardByOther: string[] = [];
      inbox.novu.on("notifications.notification_received", ({ result }) =>
        received.push(result as unknown as Seen),
      );
      inbox.novu.on("notifications.unread_count_changed", ({ result }: { result: Counts }) =>
        unread.push(result),
      );
      inbox.novu.on("notifications.unseen_count_changed", ({ result }: { result: number }) =>
        unseen.push(result),
      );
      for (const name of [
        "notifications.notification_received",
        "notifications.unread_count_changed",
      ] as const) {
        other.inbox.novu.on(name, () => heardByOther.push(name));
      }
      try {
        // The sockets connect on the first listener; wait until the server holds both.
        await poll(
          () => ctx.app.inboxSockets?.() ?? 0,
          (n) => n >= 2,
          { what: "the sockets", limitMs: WAIT_MS },
        );
        await deliver(rich, [{ n: 1 }]);
        const message = (await poll(
          () => received[0],
          (m) => m !== undefined,
          { what: "notification_received", limitMs: WAIT_MS },
        )) as Seen;
        assert.equal(message.body, "Invoice 1 is due, Ada");
        assert.equal(message.severity, "high");
        assert.deepEqual(message.tags, ["billing", "alerts"]);
        assert.equal(message.primaryAction?.label, "Pay 1");
        assert.deepEqual(message.redirect, { url: "/invoices/1", target: "_blank" });
        assert.equal(message.workflow?.severity, "high");
        assert.equal(message.isSnoozed, false);
        await poll(
          () => unread.at(-1),
          (c) => c?.total === 1 && c.severity.high === 1,
          { what: "unread 1 (high)", limitMs: WAIT_MS },
        );
        await poll(
          () => unseen.at(-1),
          (n) => n === 1,
          { what: "unseen 1", limitMs: WAIT_MS },
        );

        await deliver(plain, [{ n: 2 }]);
        await poll(
          () => unread.at(-1),
          (c) => c?.total === 2 && c.severity.none === 1,
          { what: "unread 2", limitMs: WAIT_MS },
        );
        const client = notificationsOf(inbox);
        ok(await client.read({ notificationId: message.id }));
        await poll(
          () => unread.at(-1),
          (c) => c?.total === 1 && c.severity.high === 0,
          { what: "unread 1 after a read", limitMs: WAIT_MS },
        );
        ok(await client.seenAll({}));
        await poll(
          () => unseen.at(-1),
          (n) => n === 0,
          { what: "unseen 0", limitMs: WAIT_MS },
        );

        // A snooze takes it out of the count; its end brings it back as a new notification.
        const news = ok(await client.list({ limit: 10, read: false })).notifications[0] as Seen;
        ok(
          await client.snooze({
            notificationId: news.id,
            snoozeUntil: new Date(ctx.clock.now() + HOUR_MS).toISOString(),
          }),
        );
        await poll(
          () => unread.at(-1),
          (c) => c?.total === 0,
          { what: "unread 0 while snoozed", limitMs: WAIT_MS },
        );
        const before = received.length;
        ctx.clock.advance(HOUR_MS);
        const again = (await poll(
          () => received[before],
          (m) => m !== undefined,
          { what: "the woken notification", limitMs: WAIT_MS },
        )) as Seen;
        assert.equal(again.id, news.id);
        assert.equal(again.isRead, false);
        await poll(
          () => unread.at(-1),
          (c) => c?.total === 1 && c.severity.none === 1,
          { what: "unread 1 after the wake", limitMs: WAIT_MS },
        );
        ok(await client.deleteAll({}));
        await poll(
          () => unread.at(-1),
          (c) => c?.total === 0,
          { what: "unread 0 after delete all", limitMs: WAIT_MS },
        );
        assert.deepEqual(heardByOther, [], "the other subscriber's inbox heard nothing");
      } finally {
        await inbox.close();
        await other.inbox.close();
      }
    });
  },
  { clock: () => new ManualClock(START) },
);
