import assert from "node:assert/strict";
import { test } from "node:test";
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs } from "kysely";
import { findJobWithNotification } from "../src/engine/repository.ts";
import { createWorkflow } from "./factories.ts";
import { forEachBackend } from "./harness.ts";

/**
 * Counts the statements that read jobs with their notifications (rows that carry the notification's
 * `n_id`), as they run. Not as Kysely compiles them: a prepared statement is compiled once a process,
 * so another test's read of the same shape would leave nothing to count.
 */
class JobReads implements KyselyPlugin {
  count = 0;
  transformQuery(args: PluginTransformQueryArgs) {
    return args.node;
  }
  async transformResult(args: PluginTransformResultArgs) {
    const [row] = args.result.rows as Record<string, unknown>[];
    if (row !== undefined && "n_id" in row) this.count++;
    return args.result;
  }
}

forEachBackend("a job's first read", (ctx) => {
  test("the jobs read in one turn go out as one statement, and each read gets its own job and notification", async () => {
    const tenant = await ctx.tenant();
    const workflow = await createWorkflow(ctx, tenant.dev.apiKey, tenant.dev.generalGroupId, {
      active: true,
      steps: [
        { template: { type: "delay" }, metadata: { type: "regular", amount: 1, unit: "hours" } },
        { template: { type: "in_app", content: "Later" } },
      ],
    });
    const api = ctx.client(tenant.dev.apiKey);
    const res = await api.post("/v1/events/trigger", {
      name: workflow.triggers[0].identifier,
      to: ["r-1", "r-2", "r-3", "r-4", "r-5"],
    });
    assert.equal(res.statusCode, 201, res.body);
    const jobs = await ctx.store.db
      .selectFrom("jobs")
      .select(["id", "notification_id", "subscriber_ref"])
      .where("environment_id", "=", tenant.dev.environmentId)
      .where("step_index", "=", 0)
      .execute();
    assert.equal(jobs.length, 5);

    const reads = new JobReads();
    const db = ctx.store.db.withPlugin(reads);
    const found = await Promise.all([
      ...jobs.map((job) => findJobWithNotification(db, job.id)),
      findJobWithNotification(db, "no-such-job"),
    ]);
    assert.equal(reads.count, 1, "six reads in one turn, one statement");
    jobs.forEach((job, i) => {
      assert.equal(found[i]?.job.id, job.id);
      assert.equal(found[i]?.job.subscriberRef, job.subscriber_ref);
      assert.equal(found[i]?.notification.id, job.notification_id);
    });
    assert.equal(found[5], undefined, "a job that does not exist reads as nothing");

    // A read asked after the others were answered makes a statement of its own, answered afresh.
    const again = await findJobWithNotification(db, jobs[0]?.id as string);
    assert.equal(again?.job.id, jobs[0]?.id);
    assert.equal(reads.count, 2);
  });
});
