// Databases for the benchmark: a fresh one per run and backend, organizations made by the CLI,
// one template workflow made through the API, and clones of it inserted in bulk, in SQL.
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import SqliteDatabase from "better-sqlite3";
import postgres from "postgres";
import { SQLITE_FILE } from "../src/store/store.ts";
import { runNode } from "./proc.ts";

export type BackendName = "sqlite" | "postgres";

export interface BenchDatabase {
  readonly backend: BackendName;
  /** What the service and the CLI need to find it (DATA_DIR or DATABASE_URL). */
  readonly env: Record<string, string>;
  readonly sqliteFile?: string;
  readonly databaseUrl?: string;
  drop(): Promise<void>;
}

export async function createDatabase(
  backend: BackendName,
  workDir: string,
  adminUrl: string,
): Promise<BenchDatabase> {
  if (backend === "sqlite") {
    const dataDir = fs.mkdtempSync(path.join(workDir, "sqlite-"));
    return {
      backend,
      env: { DATA_DIR: dataDir },
      sqliteFile: path.join(dataDir, SQLITE_FILE),
      async drop() {
        fs.rmSync(dataDir, { recursive: true, force: true });
      },
    };
  }
  const name = `tidings_bench_${process.pid}_${randomBytes(3).toString("hex")}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {}, connect_timeout: 5 });
  try {
    await admin.unsafe(`create database ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const databaseUrl = url.toString();
  return {
    backend,
    // A PostgreSQL service refuses to start without the key that seals integration credentials.
    env: { DATABASE_URL: databaseUrl, TIDINGS_SECRET_KEY: randomBytes(32).toString("base64") },
    databaseUrl,
    async drop() {
      const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
      try {
        await admin.unsafe(`drop database if exists ${name} with (force)`);
      } finally {
        await admin.end();
      }
    },
  };
}

export interface Organization {
  organizationId: string;
  environments: { name: string; _id: string; apiKey: string }[];
}

/** A new organization through the CLI (`init --json`): its environments and their keys. */
export async function cliInit(db: BenchDatabase, name: string): Promise<Organization> {
  const out = await runNode(
    ["dist/cli.js", "init", "--json", "--name", name],
    { ...process.env, ...db.env },
    60_000,
  );
  return JSON.parse(out) as Organization;
}

export interface Environment {
  id: string;
  apiKey: string;
  /** The key's id: what the key guard in the status statement checks. */
  keyId: string;
}

/** Everything the API needs to call a workflow valid, copied from a template the API created. */
export async function cloneWorkflows(
  db: BenchDatabase,
  templateId: string,
  first: number,
  count: number,
): Promise<number> {
  const started = performance.now();
  const prefix = randomBytes(2).toString("hex");
  if (db.backend === "sqlite") {
    const raw = new SqliteDatabase(db.sqliteFile as string);
    try {
      raw.pragma("journal_mode = WAL");
      raw.pragma("cache_size = -262144");
      const columns = (
        raw.prepare("select name from pragma_table_info('workflows')").all() as { name: string }[]
      ).map((c) => c.name);
      const exprs = columns.map((c) => cloneExpression("sqlite", c));
      // One statement, so one transaction; rows come from a recursive counter.
      raw
        .prepare(
          `with recursive seq(n) as (select @first union all select n + 1 from seq where n < @last)
           insert into workflows (${columns.join(", ")})
           select ${exprs.join(", ")} from seq, workflows t where t.id = @template`,
        )
        .run({ first, last: first + count - 1, prefix, template: templateId });
      raw.pragma("wal_checkpoint(TRUNCATE)");
    } finally {
      raw.close();
    }
  } else {
    const sql = postgres(db.databaseUrl as string, { max: 1, onnotice: () => {} });
    try {
      const columns = (
        await sql<{ column_name: string }[]>`
          select column_name from information_schema.columns
          where table_schema = current_schema() and table_name = 'workflows' order by ordinal_position`
      ).map((c) => c.column_name);
      const exprs = columns.map((c) => cloneExpression("postgres", c));
      await sql.unsafe(
        `insert into workflows (${columns.join(", ")})
         select ${exprs.join(", ")} from generate_series($1::int, $2::int) as seq(n), workflows t where t.id = $4`,
        [first, first + count - 1, prefix, templateId],
      );
      await sql`analyze workflows`;
      await sql`checkpoint`;
    } finally {
      await sql.end();
    }
  }
  return (performance.now() - started) / 1000;
}

/**
 * A column of the n-th clone: a new ObjectId-shaped id (creation seconds, then a per-call prefix
 * and the counter), a name and trigger identifier of its own (in `triggers` too), the rest copied.
 * The prefix is a parameter: @prefix on SQLite, $3 on PostgreSQL.
 */
function cloneExpression(backend: BackendName, column: string): string {
  const sqlite = backend === "sqlite";
  const suffix = sqlite ? "'-' || n" : "'-' || seq.n";
  switch (column) {
    case "id":
      return sqlite
        ? "printf('%08x', cast(strftime('%s', 'now') as integer)) || @prefix || printf('%012x', n)"
        : "lpad(to_hex(extract(epoch from now())::int), 8, '0') || $3 || lpad(to_hex(seq.n), 12, '0')";
    case "name":
      return `t.name || ${suffix}`;
    case "identifier":
      return `t.identifier || ${suffix}`;
    case "triggers":
      return `replace(t.triggers, '"' || t.identifier || '"', '"' || t.identifier || ${suffix} || '"')`;
    default:
      return `t.${column}`;
  }
}

/**
 * Subscribers `bench-<first>` … `bench-<first+count-1>` in the environment, inserted in SQL in one
 * statement (as a bulk import would leave them): every profile field set, ids in ObjectId layout.
 * Returns the seconds it took.
 */
export async function seedSubscribers(
  db: BenchDatabase,
  environmentId: string,
  first: number,
  count: number,
): Promise<number> {
  const started = performance.now();
  const prefix = randomBytes(2).toString("hex");
  const now = new Date().toISOString();
  if (db.backend === "sqlite") {
    const raw = new SqliteDatabase(db.sqliteFile as string);
    try {
      raw.pragma("journal_mode = WAL");
      raw.pragma("cache_size = -262144");
      raw
        .prepare(
          `with recursive seq(n) as (select cast(@first as integer) union all select n + 1 from seq where n < @last)
           insert into subscribers (id, organization_id, environment_id, subscriber_id, first_name, last_name,
             email, locale, data, created_at, updated_at)
           select printf('%08x', cast(strftime('%s', 'now') as integer)) || @prefix || printf('%012x', n),
             e.organization_id, e.id, 'bench-' || n, 'First ' || n, 'Last', 'user' || n || '@example.com', 'en',
             '{"plan":"pro"}', @now, @now
           from seq, environments e where e.id = @env`,
        )
        .run({ first, last: first + count - 1, prefix, now, env: environmentId });
      raw.pragma("wal_checkpoint(TRUNCATE)");
    } finally {
      raw.close();
    }
  } else {
    const sql = postgres(db.databaseUrl as string, { max: 1, onnotice: () => {} });
    try {
      await sql.unsafe(
        `insert into subscribers (id, organization_id, environment_id, subscriber_id, first_name, last_name,
           email, locale, data, created_at, updated_at)
         select lpad(to_hex(extract(epoch from now())::int), 8, '0') || $3 || lpad(to_hex(seq.n), 12, '0'),
           e.organization_id, e.id, 'bench-' || seq.n, 'First ' || seq.n, 'Last', 'user' || seq.n || '@example.com',
           'en', '{"plan":"pro"}', $4::timestamptz, $4::timestamptz
         from generate_series($1::int, $2::int) as seq(n), environments e where e.id = $5`,
        [first, first + count - 1, prefix, now, environmentId],
      );
      await sql`analyze subscribers`;
      await sql`checkpoint`;
    } finally {
      await sql.end();
    }
  }
  return (performance.now() - started) / 1000;
}

/** Ids of live workflows in the environment: all of them, or every `step`-th in id order. */
export async function workflowIds(db: BenchDatabase, environmentId: string, step = 1): Promise<string[]> {
  const query = `select id from (
      select id, row_number() over (order by id) as rn from workflows
      where environment_id = ${db.backend === "sqlite" ? "?" : "$1"} and deleted = false
    ) s where rn % ${step} = 0 order by id`;
  if (db.backend === "sqlite") {
    const raw = new SqliteDatabase(db.sqliteFile as string, { readonly: true });
    try {
      return (raw.prepare(query).all(environmentId) as { id: string }[]).map((r) => r.id);
    } finally {
      raw.close();
    }
  }
  const sql = postgres(db.databaseUrl as string, { max: 1, onnotice: () => {} });
  try {
    return (await sql.unsafe(query, [environmentId])).map((r) => r.id as string);
  } finally {
    await sql.end();
  }
}

/** The id of the environment's (one) API key. */
export async function keyIdOf(db: BenchDatabase, environmentId: string): Promise<string> {
  const query = `select id from api_keys where environment_id = ${db.backend === "sqlite" ? "?" : "$1"} and revoked_at is null`;
  if (db.backend === "sqlite") {
    const raw = new SqliteDatabase(db.sqliteFile as string, { readonly: true });
    try {
      const row = raw.prepare(query).get(environmentId) as { id: string } | undefined;
      if (!row) throw new Error(`no key for environment ${environmentId}`);
      return row.id;
    } finally {
      raw.close();
    }
  }
  const sql = postgres(db.databaseUrl as string, { max: 1, onnotice: () => {} });
  try {
    const [row] = await sql.unsafe(query, [environmentId]);
    if (!row) throw new Error(`no key for environment ${environmentId}`);
    return row.id as string;
  } finally {
    await sql.end();
  }
}

/**
 * A topic holding every subscriber of the environment, inserted in SQL (the topic row, then its
 * memberships in one statement, each with its id and Novu's default identifier), as the API's bulk
 * membership calls would leave it. Returns the seconds it took.
 */
export async function seedTopic(db: BenchDatabase, environmentId: string, key: string): Promise<number> {
  const started = performance.now();
  const id = `${Math.floor(Date.now() / 1000)
    .toString(16)
    .padStart(8, "0")}${randomBytes(8).toString("hex")}`;
  const now = new Date().toISOString();
  if (db.backend === "sqlite") {
    const raw = new SqliteDatabase(db.sqliteFile as string);
    try {
      raw.pragma("journal_mode = WAL");
      raw.pragma("cache_size = -262144");
      raw.transaction(() => {
        raw
          .prepare(
            `insert into topics (id, organization_id, environment_id, key, name, created_at, updated_at)
             select @id, e.organization_id, e.id, @key, @key, @now, @now from environments e where e.id = @env`,
          )
          .run({ id, key, now, env: environmentId });
        raw
          .prepare(
            `insert into topic_subscribers (topic_id, subscriber_ref, environment_id, subscriber_id, created_at, id, identifier)
             select @id, s.id, s.environment_id, s.subscriber_id, @now, lower(hex(randomblob(12))),
               'tk_' || @key || ':si_' || s.subscriber_id
             from subscribers s where s.environment_id = @env`,
          )
          .run({ id, key, now, env: environmentId });
      })();
      raw.pragma("wal_checkpoint(TRUNCATE)");
    } finally {
      raw.close();
    }
  } else {
    const sql = postgres(db.databaseUrl as string, { max: 1, onnotice: () => {} });
    try {
      await sql.begin(async (trx) => {
        await trx.unsafe(
          `insert into topics (id, organization_id, environment_id, key, name, created_at, updated_at)
           select $1, e.organization_id, e.id, $2, $2, $3::timestamptz, $3::timestamptz
           from environments e where e.id = $4`,
          [id, key, now, environmentId],
        );
        await trx.unsafe(
          `insert into topic_subscribers (topic_id, subscriber_ref, environment_id, subscriber_id, created_at, id, identifier)
           select $1, s.id, s.environment_id, s.subscriber_id, $2::timestamptz,
             substr(md5(random()::text || s.id), 1, 24), 'tk_' || $4 || ':si_' || s.subscriber_id
           from subscribers s where s.environment_id = $3`,
          [id, now, environmentId, key],
        );
      });
      await sql`analyze topic_subscribers`;
      await sql`checkpoint`;
    } finally {
      await sql.end();
    }
  }
  return (performance.now() - started) / 1000;
}

/**
 * A read-only connection to the bench database, beside the service: for counting what the worker
 * has written. Queries use `?` placeholders (turned into `$n` on PostgreSQL); timestamps come back
 * as epoch milliseconds through `epochMs`.
 */
export interface DbReader {
  all<T extends Record<string, unknown>>(query: string, params?: unknown[]): Promise<T[]>;
  close(): Promise<void>;
}

export function openReader(db: BenchDatabase): DbReader {
  if (db.backend === "sqlite") {
    const raw = new SqliteDatabase(db.sqliteFile as string, { readonly: true });
    raw.pragma("cache_size = -65536");
    return {
      async all<T>(query: string, params: unknown[] = []) {
        return raw.prepare(query).all(...params) as T[];
      },
      async close() {
        raw.close();
      },
    };
  }
  const sql = postgres(db.databaseUrl as string, { max: 1, onnotice: () => {} });
  return {
    async all<T>(query: string, params: unknown[] = []) {
      let n = 0;
      const text = query.replace(/\?/g, () => `$${++n}`);
      return (await sql.unsafe(text, params as never[])) as unknown as T[];
    },
    async close() {
      await sql.end();
    },
  };
}

/** A stored timestamp (ISO text on SQLite, a Date on PostgreSQL) as epoch milliseconds. */
export function epochMs(value: unknown): number {
  if (value instanceof Date) return value.getTime();
  return Date.parse(String(value));
}
