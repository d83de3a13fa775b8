import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";
import type { Kysely } from "kysely";
import { dailyCountsQuery, sentCountsQuery } from "../src/activity/repository.ts";
import { ManualClock } from "../src/clock.ts";
import type { Database } from "../src/store/schema.ts";
import { assertErrorBody } from "./error-body.ts";
import { createWorkflow } from "./factories.ts";
import { forEachBackend } from "./harness.ts";
import { planOf } from "./query-plan.ts";
import { drain } from "./queue-helpers.ts";

// The activity's numbers (Novu's `/v1/notifications/stats` and `/graph/stats`): notifications
// counted by when they were accepted, on the app's ManualClock, which the test moves from a year
// and a half back to "now".

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 2, 15, 12); // 2026-03-15T12:00Z
const hexId = () => randomBytes(12).toString("hex");

forEachBackend<ManualClock>(
  "activity stats",
  (ctx) => {
    test("counts the week's and the month's notifications, and each day's per channel, of the key's environment only", async () => {
      const tenant = await ctx.tenant();
      const api = ctx.client(tenant.dev.apiKey);
      // Two channels: each notification counts twice in a day's count, as Novu counts.
      const both = await createWorkflow(ctx, tenant.dev.apiKey, tenant.dev.generalGroupId, {
        active: true,
        steps: [
          { template: { type: "in_app", content: "Hi" } },
          { template: { type: "email", subject: "Hi", content: "Hi" } },
        ],
      });
      const inApp = await createWorkflow(ctx, tenant.dev.apiKey, tenant.dev.generalGroupId, {
        active: true,
        steps: [{ template: { type: "in_app", content: "Hi" } }],
      });
      const trigger = async (workflow: { triggers: { identifier: string }[] }, recipients: number) => {
        const to = Array.from({ length: recipients }, () => ({ subscriberId: hexId() }));
        const res = await api.post("/v1/events/trigger", { name: workflow.triggers[0]?.identifier, to });
        assert.equal(res.statusCode, 201, res.body);
      };
      const at = async (ms: number, run: () => Promise<void>) => {
        ctx.clock.set(ms);
        await run();
      };

      await at(NOW - 500 * DAY, () => trigger(both, 3)); // older than a year
      await at(NOW - 60 * DAY, () => trigger(both, 2)); // older than a month
      // 2026-02-15T12:00Z is a calendar month back: in the month, not the week.
      await at(Date.UTC(2026, 1, 15, 12) - 1, () => trigger(inApp, 1)); // a moment too early
      await at(Date.UTC(2026, 1, 15, 12), () => trigger(inApp, 1));
      await at(NOW - 20 * DAY, () => trigger(both, 1));
      await at(NOW - 7 * DAY - 1, () => trigger(both, 1)); // just outside the week
      await at(NOW - 7 * DAY, () => trigger(both, 2)); // the week's first moment
      await at(NOW - 3 * DAY, async () => {
        await trigger(both, 1);
        await trigger(inApp, 2);
      });
      await at(NOW - 1000, () => trigger(both, 1));
      ctx.clock.set(NOW);
      await drain(ctx);

      const stats = await api.get("/v1/notifications/stats");
      assert.equal(stats.statusCode, 200, stats.body);
      // week: 2 + 1 + 2 + 1; month: that, the one just outside the week, 20 days back and a month back.
      assert.deepEqual(stats.json(), { data: { weeklySent: 6, monthlySent: 6 + 1 + 1 + 1 } });

      const graph = await api.get("/v1/notifications/graph/stats");
      assert.equal(graph.statusCode, 200, graph.body);
      const channels2 = ["email", "in_app"];
      const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
      // The last 32 days, newest first: 2026-02-12T12:00Z on; the month-back triggers are in it.
      assert.deepEqual(graph.json().data, [
        { _id: day(NOW), count: 2, templates: [both._id], channels: channels2 },
        {
          _id: day(NOW - 3 * DAY),
          count: 2 + 2,
          templates: [both._id, inApp._id].sort(),
          channels: channels2,
        },
        // Just outside the week and the week's first moment: the same UTC day.
        { _id: day(NOW - 7 * DAY), count: (1 + 2) * 2, templates: [both._id], channels: channels2 },
        { _id: day(NOW - 20 * DAY), count: 2, templates: [both._id], channels: channels2 },
        { _id: "2026-02-15", count: 2, templates: [inApp._id], channels: ["in_app"] },
      ]);

      const lastFew = await api.get("/v1/notifications/graph/stats?days=3");
      assert.deepEqual(
        lastFew.json().data.map((d: { _id: string; count: number }) => [d._id, d.count]),
        [
          [day(NOW), 2],
          [day(NOW - 3 * DAY), 4],
        ],
      );

      // Another organization, and the same organization's Production, have had none of it.
      for (const key of [(await ctx.tenant()).dev.apiKey, tenant.prod.apiKey]) {
        const other = ctx.client(key);
        assert.deepEqual((await other.get("/v1/notifications/stats")).json(), {
          data: { weeklySent: 0, monthlySent: 0 },
        });
        assert.deepEqual((await other.get("/v1/notifications/graph/stats")).json(), { data: [] });
      }
    });

    test("days must be a whole number from 1 to 366", async () => {
      const api = ctx.client((await ctx.tenant()).dev.apiKey);
      for (const days of ["0", "367", "1.5", "seven", ""]) {
        const res = await api.get(`/v1/notifications/graph/stats?days=${days}`);
        assertErrorBody(res, 400, {
          message: /days/,
          path: "/v1/notifications/graph/stats",
          fields: ["days"],
        });
      }
      assert.equal((await api.get("/v1/notifications/graph/stats?days=366")).statusCode, 200);
    });

    test("both counts read a range of the index on (environment_id, created_at), not the table", async () => {
      const since = new Date(NOW - 30 * DAY).toISOString();
      const week = new Date(NOW - 7 * DAY).toISOString();
      const queries = {
        stats: (db: Kysely<Database>) => sentCountsQuery(db, hexId(), since, week).compile(),
        graph: (db: Kysely<Database>) => dailyCountsQuery(db, hexId(), since).compile(),
      };
      for (const [name, compile] of Object.entries(queries)) {
        const plan = await planOf(ctx, compile);
        if (ctx.backend === "sqlite") {
          // SEARCH notifications USING [COVERING] INDEX notifications_newest (environment_id=? AND created_at>?)
          assert.match(
            plan,
            /SEARCH notifications USING (COVERING )?INDEX notifications_newest \(environment_id=\? AND created_at>\?\)/,
            `${name}: ${plan}`,
          );
          assert.doesNotMatch(plan, /SCAN notifications/, `${name}: ${plan}`);
        } else {
          // The planner may pick either index that leads with environment_id and holds created_at.
          assert.match(plan, /Index Cond: .*environment_id = .*created_at >= /, `${name}: ${plan}`);
          assert.doesNotMatch(plan, /Seq Scan/, `${name}: ${plan}`);
        }
      }
    });
  },
  { clock: () => new ManualClock(NOW - 600 * DAY) },
);
