// A snooze's timer is a queue task (docs/engine.md, "The inbox"), so it outlives the process that set
// it: snoozed through one app, which then stops, the notification comes back through another app's
// worker when that app's clock reaches the moment, and not a minute before.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";
import { sql } from "kysely";
import { createWorkflow, uniqueName } from "../../test/factories.ts";
import { forEachBackend, TEST_SECRET_KEY } from "../../test/harness.ts";
import { applicationIdentifierOf } from "../../test/inbox-client.ts";
import { poll } from "../../test/poll.ts";
import { drain } from "../../test/queue-helpers.ts";
import { buildApp } from "../app.ts";
import { ManualClock } from "../clock.ts";
import { workerSchemaFor } from "../engine/queue/index.ts";
import type { App } from "../http/types.ts";
import { INBOX_TASKS } from "./service.ts";

const START = Date.UTC(2026, 5, 1, 9);
const HOUR_MS = 3_600_000;
const hexId = () => randomBytes(12).toString("hex");
const WAIT_MS = 15_000;

forEachBackend(
  "a snooze's timer",
  (ctx) => {
    /** Another process's app on the same database: its own clock, its own worker. */
    async function processApp(clock: ManualClock): Promise<App> {
      const app = await buildApp({
        store: ctx.store,
        clock,
        secretKey: TEST_SECRET_KEY,
        realtimeCluster: false,
      });
      await app.ready();
      return app;
    }

    /** The queue's wake-up tasks, as the backend's queue keeps them. */
    async function wakeTasks(): Promise<number> {
      const { rows } =
        ctx.store.backend === "sqlite"
          ? await sql<{
              n: number;
            }>`select count(*) as n from queue_tasks where task = ${INBOX_TASKS.wakeSnoozed}`.execute(
              ctx.store.db,
            )
          : await sql<{
              n: number;
            }>`select count(*)::int as n from ${sql.id(workerSchemaFor(ctx.store.postgres?.schema), "jobs")}
              where task_identifier = ${INBOX_TASKS.wakeSnoozed}`.execute(ctx.store.db);
      return Number(rows[0]?.n);
    }

    test("survives the process that set it: another process's worker wakes it when its clock gets there", async () => {
      const tenant = await ctx.tenant();
      const api = ctx.client(tenant.dev.apiKey);
      const workflow = await createWorkflow(ctx, tenant.dev.apiKey, tenant.dev.generalGroupId, {
        name: uniqueName("Snoozed"),
        active: true,
        steps: [{ template: { type: "in_app", content: "Wake me" } }],
      });
      const subscriberId = hexId();
      const session = await ctx.app.inject({
        method: "POST",
        url: "/v1/inbox/session",
        payload: { applicationIdentifier: await applicationIdentifierOf(api), subscriber: { subscriberId } },
      });
      const token = session.json().data.token as string;
      const inbox = (method: "GET" | "PATCH", url: string, body?: unknown) =>
        ctx.app.inject({
          method,
          url: `/v1/inbox${url}`,
          headers: { authorization: `Bearer ${token}` },
          ...(body !== undefined ? { payload: body as Record<string, unknown> } : {}),
        });
      const list = async (snoozed: boolean) =>
        (await inbox("GET", `/notifications?snoozed=${snoozed}`)).json().data as {
          id: string;
          isRead: boolean;
          isSnoozed: boolean;
        }[];

      // The message, written by a first process (the suite's app runs no worker).
      const first = await processApp(new ManualClock(START));
      try {
        const res = await first.inject({
          method: "POST",
          url: "/v1/events/trigger",
          headers: { authorization: `ApiKey ${tenant.dev.apiKey}` },
          payload: { name: workflow.triggers[0].identifier, to: subscriberId },
        });
        assert.equal(res.statusCode, 201, res.body);
        await poll(
          () => list(false),
          (l) => l.length === 1,
          { what: "the message", limitMs: WAIT_MS },
        );
      } finally {
        await first.close();
      }
      const [message] = await list(false);
      assert.ok(message);
      await inbox("PATCH", `/notifications/${message.id}/read`);
      const wakeAt = new Date(START + 2 * HOUR_MS).toISOString();
      const snoozed = await inbox("PATCH", `/notifications/${message.id}/snooze`, { snoozeUntil: wakeAt });
      assert.equal(snoozed.statusCode, 200, snoozed.body);
      assert.equal(await wakeTasks(), 1, "the timer is a row of the queue");

      // Another process starts later; a minute before the moment, nothing.
      const clock = new ManualClock(START);
      const second = await processApp(clock);
      try {
        const schema = workerSchemaFor(ctx.store.postgres?.schema);
        if (ctx.store.backend === "postgres") {
          // graphile-worker keeps real time, which a test cannot move: the task is made due as time
          // passing would make it. The worker then finds it early by its clock and waits again.
          await sql`update ${sql.id(schema, "_private_jobs")} set run_at = now()
            where task_id = (select id from ${sql.id(schema, "_private_tasks")} where identifier = ${INBOX_TASKS.wakeSnoozed})`.execute(
            ctx.store.db,
          );
        }
        clock.advance(2 * HOUR_MS - 60_000);
        // Whatever that set off has run (on PostgreSQL, the early run that waits again).
        await drain({ app: second, store: ctx.store, clock });
        if (ctx.store.backend === "postgres") {
          // The early run has ended: the task it ran is gone, the one it added to wait again is there.
          const { rows } = await sql<{ key: string }>`select key from ${sql.id(schema, "jobs")}
            where task_identifier = ${INBOX_TASKS.wakeSnoozed}`.execute(ctx.store.db);
          assert.deepEqual(
            rows.map((row) => row.key.includes(":at:")),
            [true],
            JSON.stringify(rows),
          );
        }
        assert.deepEqual(
          (await list(true)).map((n) => n.id),
          [message.id],
          "still snoozed a minute before",
        );
        clock.advance(60_000);
        const back = await poll(
          () => list(false),
          (l) => l.length === 1,
          { what: "the notification back", limitMs: WAIT_MS },
        );
        assert.deepEqual(
          back.map((n) => [n.id, n.isRead, n.isSnoozed]),
          [[message.id, false, false]],
        );
        // On PostgreSQL the early run's real-time task is still waiting; it will find nothing to do.
        if (ctx.store.backend === "sqlite") {
          await drain({ app: second, store: ctx.store, clock });
          assert.equal(await wakeTasks(), 0, "the timer done");
        }
      } finally {
        await second.close();
      }
    });
  },
  // The suite's own app runs no worker: only the apps the test starts do.
  { clock: () => new ManualClock(START), app: () => ({ runWorker: false }) },
);
