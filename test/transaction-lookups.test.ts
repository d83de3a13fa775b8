import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";
import type { Kysely } from "kysely";
import { notificationsMatching } from "../src/activity/repository.ts";
import { messagesMatching, messagesToDelete } from "../src/inbox/repository.ts";
import type { Database } from "../src/store/schema.ts";
import { createWorkflow } from "./factories.ts";
import { forEachBackend } from "./harness.ts";
import { planOf } from "./query-plan.ts";
import { drain } from "./queue-helpers.ts";

// A transaction's notifications and messages are found through its trigger, the one table that
// indexes transaction_id (src/engine/domain.ts). These are the plans of the lookups that
// could instead walk an environment's whole time index.

const hexId = () => randomBytes(12).toString("hex");

forEachBackend("a transaction's rows", (ctx) => {
  test("one transactionId in two environments: each environment's lookups, deletes and cancels reach its own rows only", async () => {
    const tenant = await ctx.tenant();
    const transactionId = `shared-${hexId()}`;
    const envs = await Promise.all(
      [tenant.dev, tenant.prod].map(async (keys) => {
        const api = ctx.client(keys.apiKey);
        const workflow = await createWorkflow(ctx, keys.apiKey, keys.generalGroupId, {
          active: true,
          steps: [
            { template: { type: "in_app", content: "Hi" } },
            { template: { type: "delay" }, metadata: { type: "regular", amount: 1, unit: "hours" } },
            { template: { type: "in_app", content: "Later" } },
          ],
        });
        const subscribers = [hexId(), hexId()];
        const res = await api.post("/v1/events/trigger", {
          name: workflow.triggers[0].identifier,
          to: subscribers,
          transactionId,
        });
        assert.equal(res.statusCode, 201, res.body);
        return { api, subscribers };
      }),
    );
    await drain(ctx);
    const notificationsOf = async (api: (typeof envs)[number]["api"]) => {
      const res = await api.get(`/v1/notifications?transactionId=${transactionId}`);
      assert.equal(res.statusCode, 200, res.body);
      return res.json().data as { subscriber: { subscriberId: string }; jobs: { status: string }[] }[];
    };
    const messagesOf = async (api: (typeof envs)[number]["api"]) => {
      const res = await api.get(`/v1/messages?transactionId=${transactionId}&limit=100`);
      assert.equal(res.statusCode, 200, res.body);
      return (res.json().data as unknown[]).length;
    };
    for (const { api, subscribers } of envs) {
      const found = await notificationsOf(api);
      assert.deepEqual(found.map((n) => n.subscriber.subscriberId).sort(), [...subscribers].sort());
      assert.equal(await messagesOf(api), 2, "each environment sees its own two first messages");
    }
    const [dev, prod] = envs as [(typeof envs)[number], (typeof envs)[number]];

    // Canceling in one environment leaves the other's delayed steps waiting.
    assert.equal((await dev.api.delete(`/v1/events/trigger/${transactionId}`)).statusCode, 200);
    const jobStatuses = async (api: typeof dev.api) =>
      (await notificationsOf(api)).flatMap((n) => n.jobs.map((j) => j.status)).sort();
    assert.ok((await jobStatuses(dev.api)).includes("canceled"), "the dev environment's run is canceled");
    assert.ok(!(await jobStatuses(prod.api)).includes("canceled"), "the prod environment's run is not");

    // Deleting the transaction's messages in one environment leaves the other's.
    assert.equal((await dev.api.delete(`/v1/messages/transaction/${transactionId}`)).statusCode, 204);
    assert.equal(await messagesOf(dev.api), 0);
    assert.equal(await messagesOf(prod.api), 2);
  });

  test("the notifications and messages of a transaction are found from its trigger, not by walking the environment", async () => {
    const env = hexId();
    const queries = {
      "activity by transaction": (db: Kysely<Database>) =>
        notificationsMatching(db, env, { transactionId: "t-1" })
          .selectAll()
          .orderBy("created_at", "desc")
          .orderBy("id", "desc")
          .limit(10)
          .compile(),
      "activity by transaction, workflow and subscriber": (db: Kysely<Database>) =>
        notificationsMatching(db, env, {
          transactionId: "t-1",
          workflowIds: [hexId()],
          subscriberRefs: [hexId()],
        })
          .select((eb) => eb.fn.countAll().as("n"))
          .compile(),
      "messages of transactions": (db: Kysely<Database>) =>
        messagesMatching(db, env, { transactionIds: ["t-1", "t-2"], channel: "in_app" })
          .selectAll()
          .orderBy("created_at", "desc")
          .orderBy("id", "desc")
          .limit(10)
          .compile(),
      "deleting a transaction's messages": (db: Kysely<Database>) =>
        messagesToDelete(db, env, { transactionId: "t-1", subscriberRef: hexId() }).compile(),
    };
    for (const [name, compile] of Object.entries(queries)) {
      const plan = await planOf(ctx, compile);
      // PostgreSQL plans from its statistics, and on these empty tables may as well start from a
      // subscriber's messages (as narrow); SQLite's planner is the one that walked the environment.
      if (ctx.backend === "sqlite") assert.match(plan, /triggers_transaction/, `${name}: ${plan}`);
      assert.doesNotMatch(plan, /notifications_newest|messages_environment/, `${name}: ${plan}`);
      if (ctx.backend === "sqlite")
        assert.doesNotMatch(plan, /SCAN (notifications|messages|triggers)\b/, `${name}: ${plan}`);
      else assert.doesNotMatch(plan, /Seq Scan/, `${name}: ${plan}`);
    }
  });
});
