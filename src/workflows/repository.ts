import { type ExpressionBuilder, type Kysely, type Selectable, sql } from "kysely";
import { type KeyClaim, keyIsLive, whileKeyIsLive } from "../auth/key-guard.ts";
import { runPrepared, slot } from "../store/prepared.ts";
import { readTogether } from "../store/read-together.ts";
import type { Database, WorkflowsTable } from "../store/schema.ts";
import { countRows, dialectOf, readBool, readJson, readTimestamp, writeJson } from "../store/values.ts";
import {
  CHANNELS,
  type Channel,
  type PreferenceSettings,
  type RunnableWorkflow,
  SEVERITIES,
  type Severity,
  type Step,
  type Trigger,
  type Workflow,
} from "./domain.ts";

type Db = Kysely<Database>;

// Every read of a workflow returns its group too; as scalar subqueries so the same selection works
// in SELECT and in UPDATE ... RETURNING on both backends, and a status change stays one statement.
const groupColumns = [
  "name",
  "organization_id",
  "environment_id",
  "parent_id",
  "created_at",
  "updated_at",
] as const;
type GroupColumn = (typeof groupColumns)[number];

function withGroup(eb: ExpressionBuilder<Database, "workflows">) {
  return groupColumns.map((column) =>
    eb
      .selectFrom("notification_groups as g")
      .select(`g.${column}` as `g.${GroupColumn}`)
      .whereRef("g.id", "=", "workflows.notification_group_id")
      .as(`group_${column}`),
  );
}

type Row = Selectable<WorkflowsTable> & { [K in GroupColumn as `group_${K}`]: unknown };

/** The stored severity; anything else (none is written) reads as none. */
const severityOf = (value: string): Severity =>
  (SEVERITIES as readonly string[]).includes(value) ? (value as Severity) : "none";

/** The workflow a path names: by _id, or by trigger identifier. */
function byRef(ref: WorkflowRef) {
  return (eb: ExpressionBuilder<Database, "workflows">) =>
    "id" in ref ? eb("workflows.id", "=", ref.id) : eb("workflows.identifier", "=", ref.identifier);
}

/** The live-workflow predicate, as a literal so the partial indexes (WHERE deleted = false) apply. */
const live = sql<boolean>`workflows.deleted = false`;

/** A JSON object column that may be empty (""): the object, or null. */
const schemaOf = (value: string | undefined): Record<string, unknown> | null =>
  value === undefined || value === "" ? null : readJson<Record<string, unknown>>(value);

function toWorkflow(row: Row): Workflow {
  const deletedAt = readTimestamp(row.deleted_at);
  return {
    id: row.id,
    organizationId: row.organization_id,
    environmentId: row.environment_id,
    creatorId: row.creator_id,
    name: row.name,
    description: row.description,
    identifier: row.identifier,
    active: readBool(row.active),
    draft: readBool(row.draft),
    critical: readBool(row.critical),
    severity: severityOf(row.severity),
    tags: readJson<string[]>(row.tags),
    steps: readJson<Step[]>(row.steps),
    triggers: readJson<Trigger[]>(row.triggers),
    preferenceSettings: readJson<PreferenceSettings>(row.preference_settings),
    data: readJson<Record<string, unknown>>(row.data),
    workflowIntegrationStatus: readJson<Record<string, unknown>>(row.workflow_integration_status),
    origin: row.origin === "external" ? "external" : "",
    payloadSchema: schemaOf(row.payload_schema),
    codeDefinition: schemaOf(row.code_definition),
    notificationGroupId: row.notification_group_id,
    parentId: row.parent_id,
    deleted: readBool(row.deleted),
    deletedAt: deletedAt === "" ? null : deletedAt,
    deletedBy: row.deleted_by,
    notificationGroup: {
      id: row.notification_group_id,
      name: String(row.group_name ?? ""),
      environmentId: String(row.group_environment_id ?? ""),
      organizationId: String(row.group_organization_id ?? ""),
      parentId: String(row.group_parent_id ?? ""),
      createdAt: readTimestamp(row.group_created_at as string | Date | null),
      updatedAt: readTimestamp(row.group_updated_at as string | Date | null),
    },
    createdAt: readTimestamp(row.created_at),
    updatedAt: readTimestamp(row.updated_at),
  };
}

/** What a create or an update writes: the workflow's own fields, without ids, ownership or dates. */
export type WorkflowDocument = Pick<
  Workflow,
  | "name"
  | "description"
  | "identifier"
  | "active"
  | "draft"
  | "critical"
  | "severity"
  | "tags"
  | "steps"
  | "triggers"
  | "preferenceSettings"
  | "data"
  | "notificationGroupId"
>;

function documentColumns(doc: WorkflowDocument) {
  return {
    name: doc.name,
    description: doc.description,
    identifier: doc.identifier,
    active: doc.active,
    draft: doc.draft,
    critical: doc.critical,
    severity: doc.severity,
    tags: writeJson(doc.tags),
    steps: writeJson(doc.steps),
    triggers: writeJson(doc.triggers),
    preference_settings: writeJson(doc.preferenceSettings),
    data: writeJson(doc.data),
    notification_group_id: doc.notificationGroupId,
  };
}

/** Inserts the workflow; undefined when its identifier is taken by a live workflow. */
export async function insertWorkflow(
  db: Db,
  workflow: WorkflowDocument & {
    id: string;
    organizationId: string;
    environmentId: string;
    creatorId: string;
    now: string;
    /** The workflow this one is the published copy of; "" (the default) for none. */
    parentId?: string;
  },
): Promise<Workflow | undefined> {
  const row = await db
    .insertInto("workflows")
    .values({
      id: workflow.id,
      organization_id: workflow.organizationId,
      environment_id: workflow.environmentId,
      ...documentColumns(workflow),
      workflow_integration_status: writeJson({}),
      parent_id: workflow.parentId ?? "",
      creator_id: workflow.creatorId,
      deleted: false,
      deleted_at: null,
      deleted_by: "",
      created_at: workflow.now,
      updated_at: workflow.now,
    })
    .onConflict((conflict) => conflict.doNothing())
    .returningAll()
    .returning(withGroup)
    .executeTakeFirst();
  return row ? toWorkflow(row as Row) : undefined;
}

/** How a path's `{workflowId}` names a workflow: by id, or by trigger identifier. */
export type WorkflowRef = { id: string } | { identifier: string };

/**
 * The live workflow, or undefined. With `forUpdate` (inside a transaction) PostgreSQL locks its row
 * until the transaction ends; on SQLite the transaction already has the only connection to itself.
 */
export async function findWorkflow(
  db: Db,
  environmentId: string,
  ref: WorkflowRef,
  options: { forUpdate?: boolean } = {},
) {
  const byId = "id" in ref;
  const forUpdate = options.forUpdate === true && dialectOf(db) === "postgres";
  // Built and compiled once per shape (src/store/prepared.ts).
  const [row] = await runPrepared<Row>(
    db,
    `find workflow ${byId} ${forUpdate}`,
    () => {
      const query = db
        .selectFrom("workflows")
        .selectAll("workflows")
        .select(withGroup)
        .where("workflows.environment_id", "=", slot("environmentId"))
        .where(live)
        .where(byRef(byId ? { id: slot("ref") } : { identifier: slot("ref") }));
      return forUpdate ? query.forUpdate("workflows") : query;
    },
    { environmentId, ref: "id" in ref ? ref.id : ref.identifier },
  );
  return row ? toWorkflow(row) : undefined;
}

/** What a trigger reads of its workflow (RunnableWorkflow's columns). */
const RUNNABLE_COLUMNS = [
  "id",
  "name",
  "identifier",
  "active",
  "critical",
  "severity",
  "tags",
  "steps",
  "triggers",
  "preference_settings",
  "payload_schema",
] as const;

/**
 * The live workflow as a trigger runs it, or undefined; read on every trigger, so it reads only
 * RUNNABLE_COLUMNS (no group lookups, no data to parse; the tags go to the inbox's messages).
 */
export function findRunnableWorkflow(
  db: Db,
  environmentId: string,
  ref: WorkflowRef,
): Promise<RunnableWorkflow | undefined> {
  return selectRunnableWorkflow(db, environmentId, ref);
}

/**
 * findRunnableWorkflow for a key's claim: found only while the key is live, and then with the
 * claim's tenant confirmed (the statement is the key's check: a trigger pays no other).
 */
export function findRunnableWorkflowForClaim(db: Db, claim: KeyClaim, ref: WorkflowRef) {
  return whileKeyIsLive(claim, ({ environmentId, keyId }) =>
    selectRunnableWorkflow(db, environmentId, ref, keyId),
  );
}

async function selectRunnableWorkflow(
  db: Db,
  environmentId: string,
  ref: WorkflowRef,
  liveKeyId?: string,
): Promise<RunnableWorkflow | undefined> {
  const byId = "id" in ref;
  const keyGuarded = liveKeyId !== undefined;
  const value = byId ? ref.id : ref.identifier;
  // Each caller reads the row's JSON into objects of its own (a run may build on them).
  const [row] = await readTogether(
    db,
    `runnable workflow ${byId} ${environmentId} ${liveKeyId} ${value}`,
    () =>
      runPrepared<Pick<Selectable<WorkflowsTable>, (typeof RUNNABLE_COLUMNS)[number]>>(
        db,
        `find runnable workflow ${byId} ${keyGuarded}`,
        () => {
          const query = db
            .selectFrom("workflows")
            .select(RUNNABLE_COLUMNS)
            .where("workflows.environment_id", "=", slot("environmentId"))
            .where(live)
            .where(byRef(byId ? { id: slot("ref") } : { identifier: slot("ref") }));
          return keyGuarded ? query.where(keyIsLive(slot("keyId"))) : query;
        },
        { environmentId, ref: value, keyId: liveKeyId },
      ),
  );
  if (!row) return undefined;
  return {
    id: row.id,
    name: row.name,
    identifier: row.identifier,
    active: readBool(row.active),
    critical: readBool(row.critical),
    severity: severityOf(row.severity),
    tags: readJson<string[]>(row.tags),
    steps: readJson<Step[]>(row.steps),
    triggers: readJson<Trigger[]>(row.triggers),
    preferenceSettings: readJson<PreferenceSettings>(row.preference_settings),
    payloadSchema: schemaOf(row.payload_schema),
  };
}

/** True when a live workflow of the environment other than `exceptId` holds the identifier. */
export async function identifierTaken(db: Db, environmentId: string, identifier: string, exceptId = "") {
  const row = await db
    .selectFrom("workflows")
    .select("id")
    .where("environment_id", "=", environmentId)
    .where(live)
    .where("identifier", "=", identifier)
    .where("id", "<>", exceptId)
    .executeTakeFirst();
  return row !== undefined;
}

export interface WorkflowStatus {
  active: boolean;
  draft: boolean;
}

/**
 * Writes the status the service decided, in one statement. updatedAt moves only when the stored
 * status changes, so a write of the state the row already has leaves the row as it was: the row
 * answers for itself, atomically, whatever other writes race it. The statement also checks that
 * the acting API key is still live (`keyIsLive`), so the route can skip its own key lookup: a
 * revoked key's statement matches nothing (src/auth/key-verifier.ts).
 */
export function setStatusQuery(
  db: Db,
  environmentId: string,
  ref: WorkflowRef,
  status: WorkflowStatus,
  now: string,
  keyId: string,
) {
  const { active, draft } = status;
  return db
    .updateTable("workflows")
    .set({
      active,
      draft,
      updated_at: sql<string>`case when active = ${active} and draft = ${draft} then updated_at else ${now} end`,
    })
    .where("workflows.environment_id", "=", environmentId)
    .where(live)
    .where(keyIsLive(keyId))
    .where(byRef(ref))
    .returningAll()
    .returning(withGroup);
}

/**
 * Writes the status (see setStatusQuery) for a key's claim; undefined when no live workflow matched
 * or the key is no longer live. The hot path: its statement is built and compiled once per shape
 * (by id or identifier, on or off; src/store/prepared.ts), and each request only fills in its values.
 */
export async function setStatus(
  db: Db,
  claim: KeyClaim,
  ref: WorkflowRef,
  status: WorkflowStatus,
  now: string,
): Promise<Workflow | undefined> {
  const byId = "id" in ref;
  const value = byId ? ref.id : ref.identifier;
  const written = await whileKeyIsLive(claim, async ({ environmentId, keyId }) => {
    const [row] = await runPrepared<Row>(
      db,
      `set workflow status ${byId} ${status.active} ${status.draft}`,
      () =>
        setStatusQuery(
          db,
          slot("environmentId"),
          byId ? { id: slot("ref") } : { identifier: slot("ref") },
          status,
          slot("now"),
          slot("keyId"),
        ),
      { environmentId, ref: value, now, keyId },
    );
    return row ? toWorkflow(row) : undefined;
  });
  return written?.found;
}

/** `%`, `_` and the escape character itself, escaped for a LIKE pattern with ESCAPE '\'. */
function likePattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

// The trigram index answers substrings of at least three characters; shorter ones are a scan of the
// environment's live workflows (on SQLite, whose LIKE folds ASCII case only, so do they).
const TRIGRAM = 3;

/**
 * The live workflows of the environment whose name or trigger identifier contains `query`
 * (case-insensitively), as a predicate on `workflows`. Each backend uses its trigram index
 * (migration 0002): pg_trgm GIN indexes answer ILIKE; on SQLite the FTS5 trigram table answers MATCH.
 */
function matching(db: Db, environmentId: string, query: string) {
  if (dialectOf(db) === "sqlite" && [...query].length >= TRIGRAM) {
    const phrase = `"${query.replace(/"/g, '""')}"`;
    return sql<boolean>`workflows.id in (
      select s.workflow_id from workflow_search s
      where s.environment_id = ${environmentId}
        and s.doc_id in (select rowid from workflow_search_fts where workflow_search_fts match ${phrase}))`;
  }
  const pattern = likePattern(query);
  const like = dialectOf(db) === "sqlite" ? sql`like` : sql`ilike`;
  return sql<boolean>`(workflows.name ${like} ${pattern} escape '\\' or workflows.identifier ${like} ${pattern} escape '\\')`;
}

export interface ListQuery {
  offset: number;
  limit: number;
  /** A substring of the name or trigger identifier; empty for all. */
  query: string;
}

/**
 * The two statements of a list: one page of the environment's live workflows, newest first, and
 * how many there are in all. Separate from their execution so scripts/explain-list.ts can show the
 * plans of exactly these statements.
 *
 * The page is a deferred join: the inner query picks the page's ids from the indexes alone (newest
 * first, skipping `offset`), and only those rows are read whole and joined to their group. Skipped
 * and sorted rows never have their documents read or their group looked up.
 */
export function listWorkflowQueries(db: Db, environmentId: string, list: ListQuery) {
  let ids = db
    .selectFrom("workflows")
    .select("workflows.id")
    .where("workflows.environment_id", "=", environmentId)
    .where(live);
  let count = db
    .selectFrom("workflows")
    .select((eb) => eb.fn.countAll<number | string | bigint>().as("total"))
    .where("workflows.environment_id", "=", environmentId)
    .where(live);
  if (list.query !== "") {
    ids = ids.where(matching(db, environmentId, list.query));
    count = count.where(matching(db, environmentId, list.query));
  }
  const newestFirst = ids
    .orderBy("workflows.created_at", "desc")
    .orderBy("workflows.id", "desc")
    .limit(list.limit)
    .offset(list.offset);
  const page = db
    .selectFrom("workflows")
    .selectAll("workflows")
    .select(withGroup)
    .where("workflows.id", "in", newestFirst)
    .orderBy("workflows.created_at", "desc")
    .orderBy("workflows.id", "desc");
  return { page, count };
}

/** One page of the environment's live workflows, newest first, and how many there are in all. */
export async function listWorkflows(db: Db, environmentId: string, list: ListQuery) {
  const { page, count } = listWorkflowQueries(db, environmentId, list);
  const [rows, total] = await Promise.all([page.execute(), count.executeTakeFirstOrThrow()]);
  return { totalCount: Number(total.total), workflows: rows.map((row) => toWorkflow(row as Row)) };
}

export interface SearchQuery {
  offset: number;
  limit: number;
  query: string;
  orderBy: "createdAt" | "updatedAt" | "name";
  descending: boolean;
  /** The statuses kept (true: active); undefined for all. */
  active?: boolean[] | undefined;
  /** Workflows with any of these tags; undefined for all. */
  tags?: string[] | undefined;
}

const SORT_COLUMNS = { createdAt: "created_at", updatedAt: "updated_at", name: "name" } as const;

/** Whether the workflow's tags (a JSON array) hold any of these. */
function hasAnyTag(db: Db, tags: string[]) {
  if (dialectOf(db) === "sqlite") {
    return sql<boolean>`exists (select 1 from json_each(workflows.tags) t where t.value in (${sql.join(tags)}))`;
  }
  return sql<boolean>`(workflows.tags::jsonb ?| array[${sql.join(tags)}]::text[])`;
}

/** Novu's v2 search of the environment's live workflows: filtered, sorted, one page, and the total. */
export async function searchWorkflows(db: Db, environmentId: string, search: SearchQuery) {
  let filtered = db.selectFrom("workflows").where("workflows.environment_id", "=", environmentId).where(live);
  if (search.query !== "") filtered = filtered.where(matching(db, environmentId, search.query));
  if (search.active !== undefined) {
    const kept = search.active;
    filtered =
      kept.length === 0
        ? filtered.where(sql<boolean>`1 = 0`)
        : filtered.where("workflows.active", "in", kept);
  }
  if (search.tags !== undefined && search.tags.length > 0)
    filtered = filtered.where(hasAnyTag(db, search.tags));
  const direction = search.descending ? "desc" : "asc";
  const column = SORT_COLUMNS[search.orderBy];
  const [rows, total] = await Promise.all([
    filtered
      .selectAll("workflows")
      .select(withGroup)
      .orderBy(`workflows.${column}`, direction)
      .orderBy("workflows.id", direction)
      .limit(search.limit)
      .offset(search.offset)
      .execute(),
    filtered.select((eb) => eb.fn.countAll<number | string | bigint>().as("total")).executeTakeFirstOrThrow(),
  ]);
  return { totalCount: Number(total.total), workflows: rows.map((row) => toWorkflow(row as Row)) };
}

/** Writes a new version of the workflow (read and locked by the caller in the same transaction). */
export async function updateWorkflow(
  db: Db,
  environmentId: string,
  id: string,
  doc: WorkflowDocument,
  now: string,
) {
  const row = await db
    .updateTable("workflows")
    .set({ ...documentColumns(doc), updated_at: now })
    .where("workflows.environment_id", "=", environmentId)
    .where(live)
    .where("workflows.id", "=", id)
    .returningAll()
    .returning(withGroup)
    .executeTakeFirst();
  return row ? toWorkflow(row as Row) : undefined;
}

/** Marks the workflow deleted (by whom, when); false when there is no such live workflow. */
export async function softDeleteWorkflow(
  db: Db,
  environmentId: string,
  ref: WorkflowRef,
  deletedBy: string,
  now: string,
): Promise<boolean> {
  const result = await db
    .updateTable("workflows")
    .set({ deleted: true, deleted_at: now, deleted_by: deletedBy, updated_at: now })
    .where("workflows.environment_id", "=", environmentId)
    .where(live)
    .where(byRef(ref))
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** How many live workflows of the environment belong to the group. */
export async function countWorkflowsInGroup(db: Db, environmentId: string, groupId: string) {
  return countRows(
    db
      .selectFrom("workflows")
      .where("workflows.environment_id", "=", environmentId)
      .where("workflows.notification_group_id", "=", groupId)
      .where(live),
  );
}

/**
 * The live workflows of the environment with a step that names one of these layouts (its
 * `_layoutId` or `layoutId`), read from the steps' JSON text: their names and trigger identifiers.
 */
export async function workflowsUsingLayout(db: Db, environmentId: string, layoutIds: readonly string[]) {
  return workflowsNaming(db, environmentId, "layoutId", layoutIds);
}

/** The live workflows with a step whose template names one of these ids in `_<field>` or `<field>`. */
export async function workflowsNaming(
  db: Db,
  environmentId: string,
  field: "layoutId" | "feedId",
  targetIds: readonly string[],
) {
  const ids = targetIds.filter((id) => /^[0-9a-f]{24}$/.test(id));
  if (ids.length === 0) return [];
  return db
    .selectFrom("workflows")
    .select(["workflows.name", "workflows.identifier"])
    .where("workflows.environment_id", "=", environmentId)
    .where(live)
    .where((eb) =>
      eb.or(
        ids.flatMap((id) => [
          eb("workflows.steps", "like", `%"_${field}":"${id}"%`),
          eb("workflows.steps", "like", `%"${field}":"${id}"%`),
        ]),
      ),
    )
    .orderBy("workflows.created_at", "asc")
    .limit(1000)
    .execute();
}

/**
 * Removes the deleted workflows of a group for good: they only ever point at it, and the group
 * cannot go while anything (even a deleted workflow) references it.
 */
export async function purgeDeletedWorkflowsOfGroup(db: Db, environmentId: string, groupId: string) {
  await db
    .deleteFrom("workflows")
    .where("environment_id", "=", environmentId)
    .where("notification_group_id", "=", groupId)
    .where("deleted", "=", true)
    .execute();
}

/** What subscriber preferences need of a workflow. */
export interface WorkflowSummary {
  id: string;
  name: string;
  /** The trigger identifier. */
  identifier: string;
  active: boolean;
  critical: boolean;
  severity: Severity;
  tags: string[];
  triggers: Trigger[];
  preferenceSettings: PreferenceSettings;
  /** The channels its active steps deliver on, each once, in step order: what a preference can turn off. */
  channels: Channel[];
}

function summaryQuery(db: Db, environmentId: string, liveOnly = true) {
  const query = db
    .selectFrom("workflows")
    .select([
      "id",
      "name",
      "identifier",
      "active",
      "critical",
      "severity",
      "tags",
      "triggers",
      "preference_settings",
      "steps",
      "created_at",
    ])
    .where("workflows.environment_id", "=", environmentId);
  return liveOnly ? query.where(live) : query;
}

function toSummary(row: {
  id: string;
  name: string;
  identifier: string;
  active: boolean | number;
  critical: boolean | number;
  severity: string;
  tags: string;
  triggers: string;
  preference_settings: string;
  steps: string;
}): WorkflowSummary {
  const channels = new Set<Channel>();
  for (const step of readJson<Step[]>(row.steps)) {
    const type = step.template?.type as string;
    if (step.active && (CHANNELS as readonly string[]).includes(type)) channels.add(type as Channel);
  }
  return {
    id: row.id,
    name: row.name,
    identifier: row.identifier,
    active: readBool(row.active),
    critical: readBool(row.critical),
    severity: severityOf(row.severity),
    tags: readJson<string[]>(row.tags),
    triggers: readJson<Trigger[]>(row.triggers),
    preferenceSettings: readJson<PreferenceSettings>(row.preference_settings),
    channels: [...channels],
  };
}

/** The environment's live, active workflows, oldest first. */
export async function listActiveWorkflowSummaries(db: Db, environmentId: string): Promise<WorkflowSummary[]> {
  const rows = await summaryQuery(db, environmentId)
    .where("workflows.active", "=", true)
    .orderBy("workflows.created_at")
    .orderBy("workflows.id")
    .execute();
  return rows.map(toSummary);
}

/** One live workflow (active or not), by _id or trigger identifier. */
export async function findWorkflowSummary(db: Db, environmentId: string, ref: WorkflowRef) {
  const row = await summaryQuery(db, environmentId).where(byRef(ref)).executeTakeFirst();
  return row ? toSummary(row) : undefined;
}

/** The live workflows (active or not) among these _ids and trigger identifiers, oldest first. */
export async function findWorkflowSummaries(
  db: Db,
  environmentId: string,
  ids: readonly string[],
  identifiers: readonly string[],
): Promise<WorkflowSummary[]> {
  if (ids.length === 0 && identifiers.length === 0) return [];
  const rows = await summaryQuery(db, environmentId)
    .where((eb) =>
      eb.or([
        ...(ids.length > 0 ? [eb("workflows.id", "in", ids)] : []),
        ...(identifiers.length > 0 ? [eb("workflows.identifier", "in", identifiers)] : []),
      ]),
    )
    .orderBy("workflows.created_at")
    .orderBy("workflows.id")
    .execute();
  return rows.map(toSummary);
}

/**
 * The workflows of these ids, deleted ones too (what a message names keeps its name and tags after
 * its workflow is deleted, until the workflow is purged with its group).
 */
export async function findWorkflowSummariesByIds(
  db: Db,
  environmentId: string,
  ids: readonly string[],
): Promise<WorkflowSummary[]> {
  if (ids.length === 0) return [];
  const rows = await summaryQuery(db, environmentId, false)
    .where("workflows.id", "in", [...ids])
    .execute();
  return rows.map(toSummary);
}

/** Every live workflow of the environment, oldest first: what promotion compares. */
export async function listLiveWorkflows(db: Db, environmentId: string): Promise<Workflow[]> {
  const rows = await db
    .selectFrom("workflows")
    .selectAll("workflows")
    .select(withGroup)
    .where("workflows.environment_id", "=", environmentId)
    .where(live)
    .orderBy("workflows.created_at")
    .orderBy("workflows.id")
    .execute();
  return rows.map((row) => toWorkflow(row as Row));
}

/** The environment each of these workflows (deleted ones too) is in, by id; ids of none are left out. */
export async function findWorkflowEnvironments(db: Db, ids: readonly string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom("workflows")
    .select(["id", "environment_id"])
    .where("id", "in", [...ids])
    .execute();
  return new Map(rows.map((row) => [row.id, row.environment_id]));
}

/** The tags of the environment's live workflows, each once, sorted. */
export async function listEnvironmentTags(db: Db, environmentId: string): Promise<string[]> {
  const rows = await db
    .selectFrom("workflows")
    .select("tags")
    .where("workflows.environment_id", "=", environmentId)
    .where(live)
    .execute();
  return [...new Set(rows.flatMap((row) => readJson<string[]>(row.tags)))].sort();
}

/** Removes the environment's deleted workflows for good (they hold its groups), before the environment goes. */
export async function purgeDeletedWorkflows(db: Db, environmentId: string) {
  await db
    .deleteFrom("workflows")
    .where("environment_id", "=", environmentId)
    .where("deleted", "=", true)
    .execute();
}

/** The environment's live workflows defined in code (origin "external"), oldest first. */
export async function listCodeWorkflows(db: Db, environmentId: string): Promise<Workflow[]> {
  const rows = await db
    .selectFrom("workflows")
    .selectAll("workflows")
    .select(withGroup)
    .where("workflows.environment_id", "=", environmentId)
    .where(live)
    .where("workflows.origin", "=", "external")
    .orderBy("workflows.created_at")
    .orderBy("workflows.id")
    .execute();
  return rows.map((row) => toWorkflow(row as Row));
}

/** Writes what a workflow defined in code carries besides its document (migration 0020). */
export async function setCodeColumns(
  db: Db,
  environmentId: string,
  id: string,
  code: {
    origin: "" | "external";
    payloadSchema: Record<string, unknown> | null;
    definition: Record<string, unknown> | null;
  },
): Promise<void> {
  await db
    .updateTable("workflows")
    .set({
      origin: code.origin,
      payload_schema: code.payloadSchema === null ? "" : JSON.stringify(code.payloadSchema),
      code_definition: code.definition === null ? "" : JSON.stringify(code.definition),
    })
    .where("workflows.environment_id", "=", environmentId)
    .where("workflows.id", "=", id)
    .execute();
}
