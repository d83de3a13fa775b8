import { type Kysely, sql } from "kysely";
import type { ColumnTypes } from "./column-types.ts";

// Frozen in time: imports nothing from the application.
//
// What Novu's current inbox sets besides channels (docs/engine.md, "Subscribers, topics and
// preferences"): a subscriber's weekly schedule (kept with its global preference) and the timezone
// it is read in; a topic membership becomes a subscription the subscriber manages itself (an
// identifier, a name, an id to answer with) with a preference per workflow; and a notification
// remembers the topic it was fanned out from, so its steps honour that subscription's preference.

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the database as it was.
export async function up(db: Kysely<any>, t: ColumnTypes): Promise<void> {
  // An IANA zone name, "" when unknown (the schedule is then read in UTC).
  await db.schema
    .alterTable("subscribers")
    .addColumn("timezone", "text", (c) => c.notNull().defaultTo(""))
    .execute();

  // JSON of {isEnabled, weeklySchedule?}, on the global row only; "" when none was set.
  await db.schema
    .alterTable("subscriber_preferences")
    .addColumn("schedule", "text", (c) => c.notNull().defaultTo(""))
    .execute();

  // One column per statement: SQLite's ALTER TABLE adds one at a time.
  const members = () => db.schema.alterTable("topic_subscribers");
  await members()
    .addColumn("id", "text", (c) => c.notNull().defaultTo(""))
    .execute();
  await members()
    .addColumn("identifier", "text", (c) => c.notNull().defaultTo(""))
    .execute();
  await members()
    .addColumn("name", "text", (c) => c.notNull().defaultTo(""))
    .execute();
  // Existing memberships get what new ones are born with: Novu's default identifier
  // (`tk_<topic key>:si_<subscriberId>`) and a random 24-hex id, in one statement whatever their number.
  const randomId =
    t.dialect === "sqlite"
      ? sql`lower(hex(randomblob(12)))`
      : sql`substr(md5(random()::text || clock_timestamp()::text || subscriber_ref), 1, 24)`;
  await sql`
    update topic_subscribers
    set identifier = 'tk_' || (select key from topics where topics.id = topic_subscribers.topic_id)
                     || ':si_' || subscriber_id,
        id = ${randomId}
  `.execute(db);
  // An identifier names one subscription of its topic.
  await db.schema
    .createIndex("topic_subscribers_identifier")
    .on("topic_subscribers")
    .columns(["topic_id", "identifier"])
    .unique()
    .execute();

  // A subscription's preference for one workflow: on or off (and, when set, a condition on the
  // trigger's payload) decides whether a trigger to the topic notifies the subscriber at all; the
  // channels set here can only turn steps off. It goes with its subscription.
  await db.schema
    .createTable("topic_subscription_preferences")
    .addColumn("topic_id", "text", (c) => c.notNull())
    .addColumn("subscriber_ref", "text", (c) => c.notNull())
    .addColumn("workflow_id", "text", (c) => c.notNull())
    .addColumn("environment_id", "text", (c) => c.notNull())
    .addColumn("enabled", t.boolean, (c) => c.notNull())
    .addColumn("channels", "text", (c) => c.notNull().defaultTo("{}"))
    // JSON Logic, "" when none.
    .addColumn("condition", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("created_at", t.timestamp, (c) => c.notNull())
    .addColumn("updated_at", t.timestamp, (c) => c.notNull())
    .addPrimaryKeyConstraint("topic_subscription_preferences_pk", [
      "topic_id",
      "subscriber_ref",
      "workflow_id",
    ])
    .addForeignKeyConstraint(
      "topic_subscription_preferences_subscription",
      ["topic_id", "subscriber_ref"],
      "topic_subscribers",
      ["topic_id", "subscriber_ref"],
      (c) => c.onDelete("cascade"),
    )
    .execute();
  // A fan-out reads one workflow's preferences for a page of the topic's members.
  await db.schema
    .createIndex("topic_subscription_preferences_workflow")
    .on("topic_subscription_preferences")
    .columns(["topic_id", "workflow_id", "subscriber_ref"])
    .execute();

  // The topic a notification was fanned out from; "" when the subscriber was addressed directly.
  await db.schema
    .alterTable("notifications")
    .addColumn("topic_id", "text", (c) => c.notNull().defaultTo(""))
    .execute();
}
