import assert from "node:assert/strict";
import { test } from "node:test";
import { sql } from "kysely";
import { createWorkflow, uniqueName } from "../../test/factories.ts";
import { forEachBackend, type TestContext } from "../../test/harness.ts";
import { poll } from "../../test/poll.ts";
import { gate } from "../../test/queue-helpers.ts";
import { ManualClock } from "../clock.ts";
import type { Deps } from "../deps.ts";
import {
  deleteSubscriber,
  getSubscriberByRef,
  holdSubscriber,
  upsertSubscriber,
} from "../subscribers/service.ts";
import type { Tenant } from "../tenancy/tenant.ts";
import { insertMessage } from "./message-repository.ts";
import { newMessage } from "./records.ts";
import { findJobWithNotification } from "./repository.ts";
import { runJob } from "./run-job.ts";
import { engineSubscriberErasure } from "./service.ts";

const SQLITE_SKIP =
  "SQLite runs one write transaction at a time: a worker's message and a delete cannot interleave";

interface JobView {
  _id: string;
  type: string;
  status: string;
  executionDetails: { detail: string }[];
}

/**
 * A subscriber deleted while a worker delivers to it (PostgreSQL, where the two run side by side):
 * whichever takes the subscriber's row first, no message of it is left behind.
 */
forEachBackend<ManualClock>(
  "deleting a subscriber while a job delivers to it",
  (ctx) => {
    const skip = ctx.backend === "sqlite" ? SQLITE_SKIP : false;

    /** A subscriber with a run of [delay, in_app] waiting in its delay; its in-app job's id. */
    async function setup() {
      const tenant = await ctx.tenant();
      const api = ctx.client(tenant.dev.apiKey);
      const workflow = await createWorkflow(ctx, tenant.dev.apiKey, tenant.dev.generalGroupId, {
        name: uniqueName("Race"),
        active: true,
        steps: [
          { template: { type: "delay" }, metadata: { type: "regular", amount: 5, unit: "minutes" } },
          { template: { type: "in_app", content: "Hello" } },
        ],
      });
      const transactionId = uniqueName("race").replace(/ /g, "-");
      const res = await api.post("/v1/events/trigger", {
        name: workflow.triggers[0].identifier,
        to: "racer",
        transactionId,
      });
      assert.equal(res.statusCode, 201, res.body);
      const jobs = await poll(
        async () =>
          ((await api.get(`/v1/notifications?transactionId=${transactionId}`)).json().data[0]?.jobs ??
            []) as JobView[],
        (found) => found[0]?.status === "delayed",
        { what: "the run to wait in its delay" },
      );
      const inApp = jobs[1];
      assert.ok(inApp);
      const me: Tenant = {
        organizationId: tenant.organizationId,
        environmentId: tenant.dev.environmentId,
        actorId: "",
      };
      return { api, tenant: me, transactionId, jobId: inApp._id };
    }

    /** Runs `work` in a transaction held open until the returned release() is called. */
    function held(work: (deps: Deps, pid: number) => Promise<void>) {
      const done = gate();
      const release = gate();
      let pid = 0;
      const finished = ctx.store.db.transaction().execute(async (trx) => {
        const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx);
        pid = Number(rows[0]?.pid);
        await work({ db: trx, clock: ctx.clock }, pid);
        done.open();
        await release.opened;
      });
      return { done: done.opened, release: release.open, finished, pid: () => pid };
    }

    /** Whether some session waits for a lock the session `pid` holds. */
    async function blocks(c: TestContext, pid: number) {
      const { rows } = await sql<{ n: number }>`
        select count(*)::int as n from pg_stat_activity where ${pid} = any(pg_blocking_pids(pid))`.execute(
        c.store.db,
      );
      return Number(rows[0]?.n) > 0;
    }

    test("the delete first: a job already running writes no message once it commits", { skip }, async () => {
      const { api, tenant, transactionId, jobId } = await setup();
      // A worker claimed the in-app job just before the delete (the delete cancels only jobs that
      // have not started).
      await ctx.store.db.updateTable("jobs").set({ status: "running" }).where("id", "=", jobId).execute();

      const deleting = held((deps) => deleteSubscriber(deps, tenant, "racer", engineSubscriberErasure));
      await deleting.done;
      let ran = false;
      const running = runJob({ db: ctx.store.db, clock: ctx.clock, queue: ctx.app.queue }, jobId, {
        attempt: 1,
      }).finally(() => {
        ran = true;
      });
      // The job reads the subscriber (the delete is not committed yet), then waits at its row.
      await poll(async () => ran || (await blocks(ctx, deleting.pid())), Boolean, {
        what: "the job to wait for the delete",
      });
      deleting.release();
      await deleting.finished;
      await running;

      assert.equal((await api.get(`/v1/messages?transactionId=${transactionId}`)).json().totalCount, 0);
      const messages = await ctx.store.db
        .selectFrom("messages")
        .select("id")
        .where("job_id", "=", jobId)
        .execute();
      assert.deepEqual(messages, []);
      const found = await api.get(`/v1/notifications?transactionId=${transactionId}`);
      const job = (found.json().data[0].jobs as JobView[]).find((j) => j._id === jobId);
      assert.equal(job?.status, "skipped");
      assert.ok(job?.executionDetails.some((d) => d.detail === "The subscriber no longer exists"));
    });

    test("the worker first: the delete waits for its message, then removes it", { skip }, async () => {
      const { api, tenant, transactionId, jobId } = await setup();
      const subscriber = (await api.get("/v1/subscribers/racer")).json().data;
      const found = await findJobWithNotification(ctx.store.db, jobId);
      assert.ok(found);
      const { job, notification } = found;
      // What the in-app step does: hold the subscriber's row, write the message, commit.
      const writing = held(async (deps) => {
        assert.equal(await holdSubscriber(deps, tenant, subscriber._id), true);
        const row = await getSubscriberByRef(deps, tenant, subscriber._id);
        assert.ok(row);
        const now = new Date(ctx.clock.now()).toISOString();
        await insertMessage(
          deps.db,
          newMessage(job, notification, row, now, { channel: "in_app", content: "Hello" }),
        );
      });
      await writing.done;
      let deleted = false;
      const deleting = api.delete("/v1/subscribers/racer").finally(() => {
        deleted = true;
      });
      await poll(async () => deleted || (await blocks(ctx, writing.pid())), Boolean, {
        what: "the delete to wait for the worker",
      });
      assert.equal(deleted, false, "the delete waited for the subscriber's row");
      writing.release();
      await writing.finished;
      const res = await deleting;
      assert.equal(res.statusCode, 200, res.body);
      assert.equal((await api.get(`/v1/messages?transactionId=${transactionId}`)).json().totalCount, 0);
      const messages = await ctx.store.db
        .selectFrom("messages")
        .select("id")
        .where("job_id", "=", jobId)
        .execute();
      assert.deepEqual(messages, []);
    });

    test("a trigger naming the subscriber first: the delete waits for the trigger's commit", {
      skip,
    }, async () => {
      const { api, tenant } = await setup();
      const before = (await api.get("/v1/subscribers/racer")).json().data;
      // What a trigger's transaction does for `to: "racer"`: find the subscriber (it exists, so it is
      // read, not rewritten) before writing the run's rows.
      const triggering = held(async (deps) => {
        const subscriber = await upsertSubscriber(deps, tenant, { subscriberId: "racer" });
        assert.equal(subscriber.id, before._id);
      });
      await triggering.done;
      let deleted = false;
      const deleting = api.delete("/v1/subscribers/racer").finally(() => {
        deleted = true;
      });
      await poll(async () => deleted || (await blocks(ctx, triggering.pid())), Boolean, {
        what: "the delete to wait for the trigger",
      });
      assert.equal(deleted, false, "the delete waited for the subscriber's row");
      triggering.release();
      await triggering.finished;
      assert.equal((await deleting).statusCode, 200);
      assert.equal((await api.get("/v1/subscribers/racer")).statusCode, 404);
    });
  },
  { clock: () => new ManualClock(Date.UTC(2026, 5, 1, 12)) },
);
