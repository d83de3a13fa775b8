import { type Kysely, sql } from "kysely";
import type { ColumnTypes } from "./column-types.ts";

// Frozen in time: imports nothing from the application.
//
// Digest windows (docs/engine.md, "Delays and digests"). One row per window: the events of one environment,
// workflow, digest step, subscriber and digestKey value that arrive while it is open. `window_key` is a hash
// of that tuple; while a window is `open` it is the only open one for its key (the partial unique index), and
// its timer, a queue task, closes it in one conditional update. An arriving event joins only an open window,
// else opens a new one, so it lands in exactly one window.
//
// digest_events: the events of a window, in the order they joined (`seq`), one row per digest job.

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the database as it was.
export async function up(db: Kysely<any>, t: ColumnTypes): Promise<void> {
  await db.schema
    .createTable("digest_windows")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) => c.notNull())
    .addColumn("environment_id", "text", (c) => c.notNull())
    .addColumn("window_key", "text", (c) => c.notNull())
    .addColumn("workflow_id", "text", (c) => c.notNull())
    .addColumn("step_id", "text", (c) => c.notNull())
    .addColumn("subscriber_ref", "text", (c) => c.notNull())
    .addColumn("digest_key", "text", (c) => c.notNull())
    // The value at digestKey as JSON, cut to a readable length (the key hash holds all of it).
    .addColumn("digest_value", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("opened_at", t.timestamp, (c) => c.notNull())
    .addColumn("closes_at", t.timestamp, (c) => c.notNull())
    .addColumn("last_event_at", t.timestamp, (c) => c.notNull())
    // Events that joined so far: the next one's seq.
    .addColumn("event_count", "integer", (c) => c.notNull())
    .addColumn("lead_job_id", "text", (c) => c.notNull())
    // Set when the window closes: the job whose following steps carry the digest, and its size.
    .addColumn("carrier_job_id", "text")
    .addColumn("total_count", "integer")
    .addColumn("created_at", t.timestamp, (c) => c.notNull())
    .addColumn("updated_at", t.timestamp, (c) => c.notNull())
    .execute();
  await sql`create unique index digest_windows_open on digest_windows (window_key) where status = 'open'`.execute(
    db,
  );
  // Backoff asks when the key last saw an event.
  await db.schema
    .createIndex("digest_windows_recent")
    .on("digest_windows")
    .columns(["window_key", "last_event_at"])
    .execute();

  // A cancel asks whether a run carried a digest of other events (those are delivered, not canceled).
  await db.schema
    .createIndex("digest_windows_carrier")
    .on("digest_windows")
    .column("carrier_job_id")
    .execute();

  await db.schema
    .createTable("digest_events")
    .addColumn("window_id", "text", (c) => c.notNull().references("digest_windows.id"))
    .addColumn("seq", "integer", (c) => c.notNull())
    .addColumn("job_id", "text", (c) => c.notNull().unique())
    .addColumn("notification_id", "text", (c) => c.notNull())
    .addColumn("created_at", t.timestamp, (c) => c.notNull())
    .addPrimaryKeyConstraint("digest_events_pkey", ["window_id", "seq"])
    .execute();
  // A cancel asks whether a run's event waits in a window.
  await db.schema
    .createIndex("digest_events_notification")
    .on("digest_events")
    .column("notification_id")
    .execute();
}
