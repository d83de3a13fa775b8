import { type Kysely, sql } from "kysely";
import type { ColumnTypes } from "./column-types.ts";

// Frozen in time: imports nothing from the application.
//
// What a trigger leaves behind (docs/engine.md, "Records"): the acknowledged trigger itself (one per
// environment and transactionId), one notification per trigger and subscriber, one job per
// notification and step, the messages jobs deliver, and an execution detail per event of a job.
// Ids are ObjectIds; subscriber_ref is the subscriber's _id (not the customer's subscriberId).

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the database as it was.
export async function up(db: Kysely<any>, t: ColumnTypes): Promise<void> {
  await db.schema
    .createTable("triggers")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) => c.notNull())
    .addColumn("environment_id", "text", (c) => c.notNull().references("environments.id"))
    .addColumn("transaction_id", "text", (c) => c.notNull())
    .addColumn("workflow_id", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull())
    // What the fan-out job reads: the request's recipients, payload and options, as sent.
    .addColumn("request", "text", (c) => c.notNull())
    // How far a fan-out has gone (the last subscriber _id done), so a re-run resumes there.
    .addColumn("fanout_cursor", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("fanout_done", t.boolean, (c) => c.notNull().defaultTo(sql`false`))
    .addColumn("created_at", t.timestamp, (c) => c.notNull())
    .execute();
  // The arbiter of "one acknowledgement per transactionId", concurrent repeats included.
  await db.schema
    .createIndex("triggers_transaction")
    .on("triggers")
    .columns(["environment_id", "transaction_id"])
    .unique()
    .execute();

  await db.schema
    .createTable("notifications")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) => c.notNull())
    .addColumn("environment_id", "text", (c) => c.notNull())
    .addColumn("trigger_id", "text", (c) => c.notNull().references("triggers.id"))
    .addColumn("transaction_id", "text", (c) => c.notNull())
    .addColumn("workflow_id", "text", (c) => c.notNull())
    // The workflow as it was when triggered (name, identifier, critical, preferences, triggers).
    .addColumn("workflow", "text", (c) => c.notNull())
    .addColumn("subscriber_ref", "text", (c) => c.notNull())
    .addColumn("payload", "text", (c) => c.notNull())
    .addColumn("overrides", "text", (c) => c.notNull().defaultTo("{}"))
    .addColumn("actor", "text", (c) => c.notNull().defaultTo("{}"))
    .addColumn("tenant", "text", (c) => c.notNull().defaultTo("{}"))
    .addColumn("to", "text", (c) => c.notNull().defaultTo("{}"))
    .addColumn("channels", "text", (c) => c.notNull().defaultTo("[]"))
    .addColumn("created_at", t.timestamp, (c) => c.notNull())
    .addColumn("updated_at", t.timestamp, (c) => c.notNull())
    .execute();
  // One notification per trigger and subscriber, however often a fan-out batch is re-run.
  await db.schema
    .createIndex("notifications_recipient")
    .on("notifications")
    .columns(["trigger_id", "subscriber_ref"])
    .unique()
    .execute();
  await db.schema
    .createIndex("notifications_newest")
    .on("notifications")
    .columns(["environment_id", "created_at", "id"])
    .execute();
  await db.schema
    .createIndex("notifications_transaction")
    .on("notifications")
    .columns(["environment_id", "transaction_id"])
    .execute();
  await db.schema
    .createIndex("notifications_subscriber")
    .on("notifications")
    .columns(["environment_id", "subscriber_ref", "created_at"])
    .execute();

  await db.schema
    .createTable("jobs")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) => c.notNull())
    .addColumn("environment_id", "text", (c) => c.notNull())
    .addColumn("notification_id", "text", (c) => c.notNull().references("notifications.id"))
    .addColumn("transaction_id", "text", (c) => c.notNull())
    .addColumn("workflow_id", "text", (c) => c.notNull())
    .addColumn("subscriber_ref", "text", (c) => c.notNull())
    .addColumn("step_index", "integer", (c) => c.notNull())
    // The step as it was when triggered: a later edit of the workflow does not change a run.
    .addColumn("step", "text", (c) => c.notNull())
    .addColumn("type", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("run_at", t.timestamp)
    .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("digest", "text", (c) => c.notNull().defaultTo("{}"))
    .addColumn("created_at", t.timestamp, (c) => c.notNull())
    .addColumn("updated_at", t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("jobs_notification")
    .on("jobs")
    .columns(["notification_id", "step_index"])
    .unique()
    .execute();
  await db.schema
    .createIndex("jobs_transaction")
    .on("jobs")
    .columns(["environment_id", "transaction_id", "status"])
    .execute();

  await db.schema
    .createTable("messages")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) => c.notNull())
    .addColumn("environment_id", "text", (c) => c.notNull())
    .addColumn("notification_id", "text", (c) => c.notNull())
    // Exactly once where we control the effect: a job re-run after a crash finds its message there.
    .addColumn("job_id", "text", (c) => c.notNull().unique())
    .addColumn("workflow_id", "text", (c) => c.notNull())
    .addColumn("template_identifier", "text", (c) => c.notNull())
    .addColumn("subscriber_ref", "text", (c) => c.notNull())
    .addColumn("subscriber_id", "text", (c) => c.notNull())
    .addColumn("transaction_id", "text", (c) => c.notNull())
    .addColumn("channel", "text", (c) => c.notNull())
    .addColumn("content", "text", (c) => c.notNull())
    .addColumn("subject", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("cta", "text", (c) => c.notNull().defaultTo("{}"))
    .addColumn("payload", "text", (c) => c.notNull().defaultTo("{}"))
    .addColumn("provider_id", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("provider_message_id", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("seen", t.boolean, (c) => c.notNull().defaultTo(sql`false`))
    .addColumn("read", t.boolean, (c) => c.notNull().defaultTo(sql`false`))
    .addColumn("last_seen_at", t.timestamp)
    .addColumn("last_read_at", t.timestamp)
    .addColumn("created_at", t.timestamp, (c) => c.notNull())
    .addColumn("updated_at", t.timestamp, (c) => c.notNull())
    .execute();
  // The feed: a subscriber's messages of one channel, newest first.
  await db.schema
    .createIndex("messages_feed")
    .on("messages")
    .columns(["subscriber_ref", "channel", "created_at", "id"])
    .execute();
  await db.schema
    .createIndex("messages_environment")
    .on("messages")
    .columns(["environment_id", "created_at", "id"])
    .execute();
  await db.schema
    .createIndex("messages_transaction")
    .on("messages")
    .columns(["environment_id", "transaction_id"])
    .execute();

  await db.schema
    .createTable("execution_details")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) => c.notNull())
    .addColumn("environment_id", "text", (c) => c.notNull())
    .addColumn("job_id", "text", (c) => c.notNull())
    .addColumn("notification_id", "text", (c) => c.notNull())
    .addColumn("subscriber_ref", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("detail", "text", (c) => c.notNull())
    .addColumn("raw", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("is_retry", t.boolean, (c) => c.notNull().defaultTo(sql`false`))
    .addColumn("created_at", t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("execution_details_notification")
    .on("execution_details")
    .columns(["notification_id", "created_at"])
    .execute();
  await db.schema
    .createIndex("execution_details_job")
    .on("execution_details")
    .columns(["job_id", "created_at"])
    .execute();
}
