import { type Kysely, type Selectable, sql, type Updateable } from "kysely";
import { type CursorRequest, cursorPage } from "../store/cursor-page.ts";
import { listSlots, runPrepared, runPreparedList, runPreparedRows, slot } from "../store/prepared.ts";
import type { Database, SubscriberPreferencesTable, SubscribersTable } from "../store/schema.ts";
import {
  countRows,
  countUpTo,
  dialectOf,
  readBool,
  readJson,
  readTimestamp,
  writeJson,
} from "../store/values.ts";
import {
  type ChannelCredentials,
  type ChannelPreferences,
  maskedCredentials,
  type Preference,
  type ProfileField,
  type Schedule,
  type Subscriber,
  type SubscriberChannel,
  type SubscriberProfile,
} from "./domain.ts";

type Db = Kysely<Database>;
type Row = Selectable<SubscribersTable>;

function toSubscriber(row: Row): Subscriber {
  return {
    id: row.id,
    organizationId: row.organization_id,
    environmentId: row.environment_id,
    subscriberId: row.subscriber_id,
    firstName: row.first_name,
    lastName: row.last_name,
    email: row.email,
    phone: row.phone,
    avatar: row.avatar,
    locale: row.locale,
    timezone: row.timezone,
    data: readJson<Record<string, unknown>>(row.data),
    channels: readJson<StoredChannel[]>(row.channels).map(storedChannel),
    isOnline: readBool(row.is_online),
    lastOnlineAt: readTimestamp(row.last_online_at),
    createdAt: readTimestamp(row.created_at),
    updatedAt: readTimestamp(row.updated_at),
  };
}

type StoredChannel = Omit<SubscriberChannel, "sealed" | "credentials"> & {
  sealed?: string;
  credentials?: Partial<ChannelCredentials>;
};

/**
 * A channel as stored. One still in the clear (written by an older version after migration 0014
 * sealed the others) is shown masked like any other, and cannot be opened until it is set again.
 */
function storedChannel(channel: StoredChannel): SubscriberChannel {
  if (typeof channel.sealed === "string" && channel.credentials) return channel as SubscriberChannel;
  return {
    providerId: channel.providerId,
    integrationIdentifier: channel.integrationIdentifier ?? "",
    credentials: maskedCredentials({
      webhookUrl: channel.credentials?.webhookUrl ?? "",
      deviceTokens: channel.credentials?.deviceTokens ?? [],
    }),
    sealed: "",
  };
}

const COLUMN: Record<ProfileField, keyof SubscribersTable> = {
  firstName: "first_name",
  lastName: "last_name",
  email: "email",
  phone: "phone",
  avatar: "avatar",
  locale: "locale",
  timezone: "timezone",
  data: "data",
};

/** The columns of the profile fields that are present (set) in `profile`. */
function profileColumns(profile: SubscriberProfile): Updateable<SubscribersTable> {
  const set: Record<string, string> = {};
  for (const [field, column] of Object.entries(COLUMN) as [ProfileField, string][]) {
    const value = profile[field];
    if (value === undefined) continue;
    set[column] = field === "data" ? writeJson(value) : (value as string);
  }
  return set;
}

export interface NewSubscriber {
  /** The id the row gets if it is created; an existing row keeps its own. */
  id: string;
  subscriberId: string;
  profile: SubscriberProfile;
}

export interface Upserted {
  subscriber: Subscriber;
  created: boolean;
}

/**
 * Creates or updates subscribers by subscriberId in one statement: a new one gets every field (the
 * unset ones empty), an existing one only the fields its entry sets, and keeps its id. Every entry
 * must set the same fields (the statement names them once) and name a different subscriberId (a
 * statement may not touch a row twice). Whether a row was created shows in its id: the one proposed
 * for it, or the one it already had. Concurrent upserts of one subscriberId are safe on both
 * backends: the unique index arbitrates, and the loser updates the winner's row. Entries that set
 * no field at all are read rather than rewritten (ensureSubscribers).
 */
export async function upsertSubscribers(
  db: Db,
  tenant: { organizationId: string; environmentId: string },
  entries: NewSubscriber[],
  fields: ProfileField[],
  now: string,
): Promise<Upserted[]> {
  if (entries.length === 0) return [];
  if (fields.length === 0) return ensureSubscribers(db, tenant, entries, now);
  const rows = entries.map((entry) => ({
    id: entry.id,
    organization_id: tenant.organizationId,
    environment_id: tenant.environmentId,
    subscriber_id: entry.subscriberId,
    ...profileColumns(entry.profile),
    created_at: now,
    updated_at: now,
  }));
  const returned = await runPreparedRows(
    db,
    // The SQL changes with the rows and their columns (runPreparedRows adds those to the name), and
    // with the fields an update changes.
    `upsert subscribers ${fields.join(",")}`,
    rows,
    (placeholders) =>
      db
        .insertInto("subscribers")
        .values(placeholders as never)
        .onConflict((conflict) =>
          conflict.columns(["environment_id", "subscriber_id"]).doUpdateSet((eb) => {
            const set: Record<string, unknown> = { updated_at: eb.ref("excluded.updated_at") };
            for (const field of fields) set[COLUMN[field]] = eb.ref(`excluded.${COLUMN[field]}` as never);
            return set;
          }),
        )
        .returningAll(),
  );
  const proposed = new Set(entries.map((entry) => entry.id));
  return returned.map((row) => ({ subscriber: toSubscriber(row), created: proposed.has(row.id) }));
}

/**
 * upsertSubscribers for entries that set no field (a trigger's `to: "subscriberId"`): nothing of
 * an existing subscriber changes, so it is read, not rewritten (an update on every trigger rewrote
 * the row, and on PostgreSQL left a dead row version each time). On PostgreSQL the rows read are
 * held FOR KEY SHARE until the transaction ends, as the update held them: a delete of the
 * subscriber waits for the caller's commit and then sees what it wrote. Those missing are inserted;
 * one a concurrent upsert inserted first (the insert does nothing) is read again after it.
 */
async function ensureSubscribers(
  db: Db,
  tenant: { organizationId: string; environmentId: string },
  entries: NewSubscriber[],
  now: string,
): Promise<Upserted[]> {
  const byId = new Map<string, Row>();
  const read = async (subscriberIds: string[]) => {
    const found = await runPreparedList<Row>(
      db,
      "hold subscribers",
      subscriberIds,
      (list) => {
        const query = db
          .selectFrom("subscribers")
          .selectAll()
          .where("environment_id", "=", slot("environmentId"))
          .where("subscriber_id", "in", list);
        return dialectOf(db) === "postgres" ? query.forKeyShare() : query;
      },
      { environmentId: tenant.environmentId },
    );
    for (const row of found) byId.set(row.subscriber_id, row);
  };
  await read(entries.map((entry) => entry.subscriberId));
  const missing = entries.filter((entry) => !byId.has(entry.subscriberId));
  if (missing.length > 0) {
    const inserted = await runPreparedRows(
      db,
      "insert missing subscribers",
      missing.map((entry) => ({
        id: entry.id,
        organization_id: tenant.organizationId,
        environment_id: tenant.environmentId,
        subscriber_id: entry.subscriberId,
        created_at: now,
        updated_at: now,
      })),
      (placeholders) =>
        db
          .insertInto("subscribers")
          // The profile's columns take their defaults, as in upsertSubscribers.
          .values(placeholders as never)
          .onConflict((conflict) => conflict.columns(["environment_id", "subscriber_id"]).doNothing())
          .returningAll(),
    );
    for (const row of inserted) byId.set(row.subscriber_id, row);
    const lost = missing.filter((entry) => !byId.has(entry.subscriberId));
    if (lost.length > 0) await read(lost.map((entry) => entry.subscriberId));
  }
  const proposed = new Set(entries.map((entry) => entry.id));
  const upserted: Upserted[] = [];
  for (const entry of entries) {
    const row = byId.get(entry.subscriberId);
    if (row) upserted.push({ subscriber: toSubscriber(row), created: proposed.has(row.id) });
  }
  return upserted;
}

/**
 * The subscriber, or undefined. With `forUpdate` (inside a transaction) PostgreSQL locks its row
 * until the transaction ends, so a read-modify-write of its channels or preferences cannot lose a
 * concurrent one; SQLite's transaction already has the only connection.
 */
export async function findSubscriber(db: Db, environmentId: string, subscriberId: string, forUpdate = false) {
  let query = db
    .selectFrom("subscribers")
    .selectAll()
    .where("environment_id", "=", environmentId)
    .where("subscriber_id", "=", subscriberId);
  if (forUpdate && dialectOf(db) === "postgres") query = query.forUpdate();
  const row = await query.executeTakeFirst();
  return row ? toSubscriber(row) : undefined;
}

/**
 * Whether the environment's subscriber with our id `id` exists; on PostgreSQL its row is held
 * (FOR KEY SHARE) until the transaction ends: a delete (which locks the row FOR UPDATE first)
 * waits, and updates of its fields do not.
 */
export async function holdSubscriberRow(db: Db, environmentId: string, id: string): Promise<boolean> {
  const rows = await runPrepared(
    db,
    "hold subscriber",
    () => {
      const query = db
        .selectFrom("subscribers")
        .select("id")
        .where("environment_id", "=", slot("environmentId"))
        .where("id", "=", slot("id"));
      return dialectOf(db) === "postgres" ? query.forKeyShare() : query;
    },
    { environmentId, id },
  );
  return rows.length > 0;
}

/** The environment's subscriber with our id `id` (its `_id`). */
export async function findSubscriberById(db: Db, environmentId: string, id: string) {
  const [row] = await runPrepared<Row>(
    db,
    "find subscriber by id",
    () =>
      db
        .selectFrom("subscribers")
        .selectAll()
        .where("environment_id", "=", slot("environmentId"))
        .where("id", "=", slot("id")),
    { environmentId, id },
  );
  return row ? toSubscriber(row) : undefined;
}

/**
 * The environment's subscribers among our ids `ids` (those that exist), by id. With `hold`, on
 * PostgreSQL the rows are held FOR KEY SHARE until the transaction ends (see holdSubscriberRow).
 */
export async function findSubscribersByIds(
  db: Db,
  environmentId: string,
  ids: readonly string[],
  options: { hold?: boolean } = {},
) {
  const found = new Map<string, Subscriber>();
  const CHUNK = 500;
  const unique = [...new Set(ids)];
  for (let i = 0; i < unique.length; i += CHUNK) {
    // By id alone, the environment checked on each row: with `environment_id = ?` beside the list,
    // SQLite's planner (no statistics) walked the environment's whole subscriber index on every
    // call, 71 ms a fan-out page of 500 in a topic of 100,000.
    const hold = options.hold && dialectOf(db) === "postgres";
    const rows = await runPreparedList<Row>(
      db,
      `find subscribers by ids${hold ? " held" : ""}`,
      unique.slice(i, i + CHUNK),
      (list) => {
        const query = db.selectFrom("subscribers").selectAll().where("id", "in", list);
        return hold ? query.forKeyShare() : query;
      },
    );
    for (const row of rows) if (row.environment_id === environmentId) found.set(row.id, toSubscriber(row));
  }
  return found;
}

/** Up to `limit` of the environment's subscriber ids after `after`, in id order (keyset pages). */
export async function pageSubscriberIds(db: Db, environmentId: string, after: string, limit: number) {
  const rows = await db
    .selectFrom("subscribers")
    .select("id")
    .where("environment_id", "=", environmentId)
    .where("id", ">", after)
    .orderBy("id")
    .limit(limit)
    .execute();
  return rows.map((row) => row.id);
}

/**
 * Our ids of the environment's subscribers among `subscriberIds` (those that exist). With
 * `forShare` (inside a transaction, PostgreSQL) their rows stay until the transaction ends: a row
 * that is about to reference them cannot lose them to a concurrent delete.
 */
/** The _ids of the environment's subscribers whose email is one of these, exactly (index subscribers_email). */
export async function findSubscriberRefsByEmail(db: Db, environmentId: string, emails: readonly string[]) {
  const wanted = emails.filter((email) => email !== "");
  if (wanted.length === 0) return [];
  const rows = await db
    .selectFrom("subscribers")
    .select("id")
    .where("environment_id", "=", environmentId)
    .where("email", "in", wanted)
    .execute();
  return rows.map((row) => row.id);
}

/**
 * The _ids of the subscribers (at most `limit`) whose e-mail address contains `text` (any case) or
 * whose subscriberId is `text`: Novu's activity `search`.
 */
export async function findSubscriberRefsBySearch(db: Db, environmentId: string, text: string, limit = 1000) {
  const pattern = `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  const like = dialectOf(db) === "sqlite" ? sql`like` : sql`ilike`;
  const rows = await db
    .selectFrom("subscribers")
    .select("id")
    .where("environment_id", "=", environmentId)
    .where(sql<boolean>`(email ${like} ${pattern} escape '\\' or subscriber_id = ${text})`)
    .limit(limit)
    .execute();
  return rows.map((row) => row.id);
}

export async function findSubscriberRefs(
  db: Db,
  environmentId: string,
  subscriberIds: readonly string[],
  forShare = false,
) {
  const refs = new Map<string, string>();
  const CHUNK = 500;
  const lock = forShare && dialectOf(db) === "postgres";
  for (let i = 0; i < subscriberIds.length; i += CHUNK) {
    const chunk = subscriberIds.slice(i, i + CHUNK);
    let query = db
      .selectFrom("subscribers")
      .select(["id", "subscriber_id"])
      .where("environment_id", "=", environmentId)
      .where("subscriber_id", "in", chunk);
    if (lock) query = query.orderBy("id").forShare();
    const rows = await query.execute();
    for (const row of rows) refs.set(row.subscriber_id, row.id);
  }
  return refs;
}

/**
 * One page of the environment's subscribers, oldest first; with `search`, only those whose
 * subscriberId, first or last name, email or phone contains it, in any case (accented letters too:
 * SQLite folds through the store's `unicode_lower`). The text is matched literally: `%`, `_` and
 * `\\` are escaped.
 */
export async function listSubscribers(
  db: Db,
  environmentId: string,
  offset: number,
  limit: number,
  search?: string,
) {
  let base = db.selectFrom("subscribers").where("environment_id", "=", environmentId);
  if (search !== undefined && search !== "") {
    const pattern = `%${search.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    const lower = sql.raw(dialectOf(db) === "sqlite" ? "unicode_lower" : "lower");
    base = base.where((eb) =>
      eb.or(
        (["subscriber_id", "first_name", "last_name", "email", "phone"] as const).map(
          (column) => sql<boolean>`${lower}(${sql.ref(column)}) like ${pattern} escape '\\'`,
        ),
      ),
    );
  }
  const [rows, totalCount] = await Promise.all([
    base.selectAll().orderBy("created_at").orderBy("id").limit(limit).offset(offset).execute(),
    countRows(base),
  ]);
  return { totalCount, subscribers: rows.map(toSubscriber) };
}

/** What a /v2 search keeps: each filter set narrows (Novu's ListSubscribers). */
export interface SubscriberFilters {
  /** Contained in the email, in any case. */
  email?: string | undefined;
  /** Contained in the phone number. */
  phone?: string | undefined;
  /** The subscriberId, exactly. */
  subscriberId?: string | undefined;
  /** Contained in "firstName lastName", in any case. */
  name?: string | undefined;
}

export type SubscriberOrder = "_id" | "createdAt" | "updatedAt";

// `_id` is creation order, as Novu's ObjectIds are: ours are random within their second, so the
// creation time orders them (then the id, within a millisecond).
const ORDER_COLUMN: Record<SubscriberOrder, "created_at" | "updated_at"> = {
  _id: "created_at",
  createdAt: "created_at",
  updatedAt: "updated_at",
};

/** A LIKE pattern matching `text` anywhere, literally (`%`, `_` and `\\` escaped), lower-cased. */
const containing = (text: string) => `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** Whether an online subscriber of the environment has a subscriberId containing `fragment`, in any case. */
export async function hasOnlineSubscriberContaining(
  db: Db,
  environmentId: string,
  fragment: string,
): Promise<boolean> {
  const lower = sql.raw(dialectOf(db) === "sqlite" ? "unicode_lower" : "lower");
  const row = await db
    .selectFrom("subscribers")
    .select("id")
    .where("environment_id", "=", environmentId)
    .where("is_online", "=", true)
    .where(sql<boolean>`${lower}(subscriber_id) like ${containing(fragment)} escape '\\'`)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * One /v2 page of the environment's subscribers (src/store/cursor-page.ts), filtered. A cursor names
 * a subscriber by its `_id`; `cursorExists` says whether the environment has it.
 */
export async function searchSubscribers(
  db: Db,
  environmentId: string,
  filters: SubscriberFilters,
  order: SubscriberOrder,
  request: CursorRequest,
) {
  const lower = sql.raw(dialectOf(db) === "sqlite" ? "unicode_lower" : "lower");
  let query = db.selectFrom("subscribers").selectAll().where("environment_id", "=", environmentId);
  if (filters.subscriberId !== undefined) query = query.where("subscriber_id", "=", filters.subscriberId);
  if (filters.email !== undefined && filters.email !== "")
    query = query.where(sql<boolean>`${lower}(email) like ${containing(filters.email)} escape '\\'`);
  if (filters.phone !== undefined && filters.phone !== "")
    query = query.where(sql<boolean>`${lower}(phone) like ${containing(filters.phone)} escape '\\'`);
  if (filters.name !== undefined && filters.name.trim() !== "")
    query = query.where(
      sql<boolean>`${lower}(trim(first_name || ' ' || last_name)) like ${containing(filters.name.trim())} escape '\\'`,
    );
  const column = ORDER_COLUMN[order];
  const page = await cursorPage(
    db,
    query,
    { table: "subscribers", sort: column, id: "id", sortRef: column, idRef: "id" },
    request,
    (row) => row.id,
  );
  return { ...page, rows: page.rows.map(toSubscriber) };
}

/** Whether the environment has a subscriber with our id `id` (a /v2 page's cursor). */
export async function subscriberIdExists(db: Db, environmentId: string, id: string): Promise<boolean> {
  const row = await db
    .selectFrom("subscribers")
    .select("id")
    .where("environment_id", "=", environmentId)
    .where("id", "=", id)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Creates the subscriber unless the environment has one with its subscriberId: the new one, or
 * undefined (the unique index decides, so two concurrent creates make one).
 */
export async function insertSubscriber(
  db: Db,
  tenant: { organizationId: string; environmentId: string },
  entry: NewSubscriber,
  now: string,
): Promise<Subscriber | undefined> {
  const row = await db
    .insertInto("subscribers")
    .values({
      id: entry.id,
      organization_id: tenant.organizationId,
      environment_id: tenant.environmentId,
      subscriber_id: entry.subscriberId,
      ...profileColumns(entry.profile),
      created_at: now,
      updated_at: now,
    } as never)
    .onConflict((conflict) => conflict.columns(["environment_id", "subscriber_id"]).doNothing())
    .returningAll()
    .executeTakeFirst();
  return row ? toSubscriber(row as Row) : undefined;
}

/** Sets the profile fields present in `profile`; undefined when there is no such subscriber. */
export async function updateProfile(
  db: Db,
  environmentId: string,
  subscriberId: string,
  profile: SubscriberProfile,
  now: string,
) {
  const row = await db
    .updateTable("subscribers")
    .set({ ...profileColumns(profile), updated_at: now })
    .where("environment_id", "=", environmentId)
    .where("subscriber_id", "=", subscriberId)
    .returningAll()
    .executeTakeFirst();
  return row ? toSubscriber(row) : undefined;
}

/** The environment's subscribers, counted up to `limit` (a read of the subscriberId index bounded by it). */
export function countSubscribersUpTo(db: Db, environmentId: string, limit: number): Promise<number> {
  return countUpTo(db, db.selectFrom("subscribers").where("environment_id", "=", environmentId), limit);
}

export async function writeChannels(db: Db, id: string, channels: SubscriberChannel[], now: string) {
  const row = await db
    .updateTable("subscribers")
    .set({ channels: writeJson(channels), updated_at: now })
    .where("id", "=", id)
    .returningAll()
    .executeTakeFirstOrThrow();
  return toSubscriber(row);
}

export async function setOnline(
  db: Db,
  environmentId: string,
  subscriberId: string,
  isOnline: boolean,
  now: string,
) {
  const row = await db
    .updateTable("subscribers")
    .set({ is_online: isOnline, last_online_at: now, updated_at: now })
    .where("environment_id", "=", environmentId)
    .where("subscriber_id", "=", subscriberId)
    .returningAll()
    .executeTakeFirst();
  return row ? toSubscriber(row) : undefined;
}

/**
 * Removes the subscriber row and its preferences. Rows of higher features that name the subscriber
 * (topic memberships) go with it by their foreign keys (ON DELETE CASCADE), so this feature never
 * reaches into their tables.
 */
export async function deleteSubscriberRows(db: Db, id: string): Promise<void> {
  await db.deleteFrom("subscriber_preferences").where("subscriber_ref", "=", id).execute();
  await db.deleteFrom("subscribers").where("id", "=", id).execute();
}

// ---------------------------------------------------------------- preferences

type PreferenceRow = Selectable<SubscriberPreferencesTable>;

function toPreference(row: PreferenceRow): Preference {
  const preference: Preference = {
    enabled: readBool(row.enabled),
    channels: readJson<ChannelPreferences>(row.channels),
  };
  if (row.schedule !== "") preference.schedule = readJson<Schedule>(row.schedule);
  return preference;
}

/** The subscriber's preferences by workflow id ("" is the global one); all of them, or those of `workflowIds`. */
export async function findPreferences(
  db: Db,
  environmentId: string,
  subscriberRef: string,
  workflowIds?: readonly string[],
) {
  const workflowList = listSlots("workflow", workflowIds ?? []);
  const rows = await runPrepared<Selectable<Database["subscriber_preferences"]>>(
    db,
    `find preferences ${workflowIds?.length ?? "all"}`,
    () => {
      const query = db
        .selectFrom("subscriber_preferences")
        .selectAll()
        .where("environment_id", "=", slot("environmentId"))
        .where("subscriber_ref", "=", slot("subscriberRef"));
      return workflowIds ? query.where("workflow_id", "in", workflowList.placeholders) : query;
    },
    { environmentId, subscriberRef, ...workflowList.values },
  );
  return new Map(rows.map((row) => [row.workflow_id, toPreference(row)]));
}

/** findPreferences for many subscribers at once, by subscriber (those with none are left out). */
export async function findPreferencesOfMany(
  db: Db,
  environmentId: string,
  subscriberRefs: readonly string[],
  workflowIds: readonly string[],
) {
  const found = new Map<string, Map<string, Preference>>();
  const CHUNK = 500;
  const unique = [...new Set(subscriberRefs)];
  const workflowList = listSlots("workflow", workflowIds);
  for (let i = 0; i < unique.length; i += CHUNK) {
    // Prepared, as findPreferences is: a trigger's acknowledgement asks this for its few recipients.
    const rows = await runPreparedList<Selectable<Database["subscriber_preferences"]>>(
      db,
      `find preferences for ${workflowIds.length}`,
      unique.slice(i, i + CHUNK),
      (refs) =>
        db
          .selectFrom("subscriber_preferences")
          .selectAll()
          .where("environment_id", "=", slot("environmentId"))
          .where("subscriber_ref", "in", refs)
          .where("workflow_id", "in", workflowList.placeholders),
      { environmentId, ...workflowList.values },
    );
    for (const row of rows) {
      const own = found.get(row.subscriber_ref) ?? new Map<string, Preference>();
      own.set(row.workflow_id, toPreference(row));
      found.set(row.subscriber_ref, own);
    }
  }
  return found;
}

/** Writes the subscriber's preference for `workflowId` ("" for the global one), creating it if needed. */
export async function savePreference(
  db: Db,
  row: {
    id: string;
    organizationId: string;
    environmentId: string;
    subscriberRef: string;
    workflowId: string;
    preference: Preference;
    now: string;
  },
): Promise<void> {
  await db
    .insertInto("subscriber_preferences")
    .values({
      id: row.id,
      organization_id: row.organizationId,
      environment_id: row.environmentId,
      subscriber_ref: row.subscriberRef,
      level: row.workflowId === "" ? "global" : "template",
      workflow_id: row.workflowId,
      enabled: row.preference.enabled,
      channels: writeJson(row.preference.channels),
      schedule: row.preference.schedule ? writeJson(row.preference.schedule) : "",
      created_at: row.now,
      updated_at: row.now,
    })
    .onConflict((conflict) =>
      conflict.columns(["subscriber_ref", "workflow_id"]).doUpdateSet((eb) => ({
        enabled: eb.ref("excluded.enabled"),
        channels: eb.ref("excluded.channels"),
        schedule: eb.ref("excluded.schedule"),
        updated_at: eb.ref("excluded.updated_at"),
      })),
    )
    .execute();
}
