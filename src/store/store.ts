import fs from "node:fs";
import path from "node:path";
import SqliteDatabase from "better-sqlite3";
import { Kysely, Migrator, sql } from "kysely";
import postgres from "postgres";
import { DATA_FILE_MODE, makeDataDir, tightenFile } from "./file-modes.ts";
import { postgresTypes, sqliteTypes } from "./migrations/column-types.ts";
import { type MigrationContext, migrationProvider } from "./migrations/index.ts";
import { PostgresJsDialect } from "./postgres-driver.ts";
import type { Database } from "./schema.ts";
import { SqliteCheckpointer } from "./sqlite-checkpointer.ts";
import { GroupCommitSqlite, GroupCommitSqliteDialect, WalSync } from "./sqlite-group-commit.ts";

export type Backend = "sqlite" | "postgres";

export interface Store {
  readonly backend: Backend;
  readonly db: Kysely<Database>;
  /** SQLite only: the group-commit connection (its statistics, its raw handle). */
  readonly groupCommit?: GroupCommitSqlite;
  /** SQLite only, when on: the background WAL checkpointer. */
  readonly checkpointer?: SqliteCheckpointer;
  /**
   * PostgreSQL only: where the store connects (the URL, and the schema it works in, when one was
   * named), for the parts that need connections of their own, such as the job queue's worker.
   */
  readonly postgres?: {
    readonly url: string;
    readonly schema: string | undefined;
    /**
     * Opens a Kysely of its own over one connection, with the pool's settings (schema, timeouts):
     * for a statement that must not wait behind the pool's work, such as the job queue's
     * heartbeat. The caller destroys it.
     */
    openConnection(): Kysely<Database>;
  };
  /**
   * Brings the schema up to date; safe to run from several processes at once. `secrets` seals what
   * an older version kept in the clear (required when there is any).
   */
  migrate(context?: MigrationContext): Promise<void>;
  /** Resolves when the database answers a trivial query. */
  ping(): Promise<void>;
  /**
   * Readies every connection the store may use for its first real work (after migrate): on
   * PostgreSQL, opens the whole pool at once and has each connection plan a read of every table
   * (see openPostgres). SQLite's one connection is ready when opened.
   */
  warm(): Promise<void>;
  close(): Promise<void>;
}

export interface StoreOptions {
  /** A postgres:// URL; without it the store is SQLite under dataDir. */
  databaseUrl?: string | undefined;
  dataDir?: string;
  /** SQLite file name inside dataDir (default tidings.db), or ":memory:". */
  sqliteFile?: string;
  /** PostgreSQL schema to work in (created when missing); default: the server's search_path. */
  pgSchema?: string;
  pgPoolSize?: number;
  /** PostgreSQL statement_timeout; default 30 s. */
  pgStatementTimeoutMs?: number;
  /**
   * SQLite: checkpoint the write-ahead log from a worker thread (default true; false leaves it to
   * SQLite, on the committing connection).
   */
  sqliteBackgroundCheckpoints?: boolean;
  /**
   * SQLite: how a commit reaches the disk before anyone hears of it. "fdatasync" (default): commits
   * at synchronous=NORMAL, then an fdatasync of the log on libuv's thread pool (the event loop goes
   * on meanwhile); "full": synchronous=FULL, the fsync inside COMMIT. Both are durable.
   */
  sqliteSync?: "fdatasync" | "full";
  /** Told of trouble in background work (a failed checkpoint): the store carries on. */
  onBackgroundError?: (error: Error) => void;
}

export async function openStore(options: StoreOptions): Promise<Store> {
  return options.databaseUrl ? openPostgres(options.databaseUrl, options) : openSqlite(options);
}

/** The SQLite database's file in the data directory, unless `sqliteFile` names another. */
export const SQLITE_FILE = "tidings.db";

/**
 * The database file, made (or tightened) readable by its owner alone before SQLite opens it: SQLite
 * gives the write-ahead log and the shared-memory file it creates the database file's permissions,
 * so they follow. Those made before, by an older version or another umask, are tightened too.
 */
function sqliteFileOf(options: StoreOptions): string {
  const file = options.sqliteFile ?? SQLITE_FILE;
  if (file === ":memory:") return file;
  const dir = options.dataDir ?? path.resolve("data");
  makeDataDir(dir);
  const full = path.join(dir, file);
  fs.closeSync(fs.openSync(full, "a", DATA_FILE_MODE));
  for (const made of [full, `${full}-wal`, `${full}-shm`, `${full}-journal`]) tightenFile(made);
  return full;
}

function openSqlite(options: StoreOptions): Store {
  const file = sqliteFileOf(options);
  const raw = new SqliteDatabase(file);
  raw.pragma("journal_mode = WAL");
  // Every commit is on disk before anyone hears of it, so an acknowledged write survives a power cut:
  // either SQLite fsyncs inside COMMIT (FULL), or the group commit fdatasyncs the log after it,
  // off the event loop (NORMAL and a WalSync; see sqlite-group-commit.ts). In-memory: nothing to sync.
  const walSync = file !== ":memory:" && options.sqliteSync !== "full" ? new WalSync(file) : undefined;
  raw.pragma(walSync ? "synchronous = NORMAL" : "synchronous = FULL");
  raw.pragma("foreign_keys = ON");
  // Statement journals (what undoes one unit of a group's transaction, see sqlite-group-commit.ts)
  // in memory: on disk, SQLite spilled them past 64 KiB into a temporary file that every commit
  // created, wrote some 80 pages to, and deleted. They hold at most what one transaction changes.
  raw.pragma("temp_store = MEMORY");
  // The CLI may write while the server runs; wait for its lock instead of failing.
  raw.pragma("busy_timeout = 5000");
  // SQLite's lower() folds A-Z only; PostgreSQL's folds every letter its UTF-8 locale knows. Searches
  // call this one instead, so that "émile" finds "Émile" on both backends.
  raw.function("unicode_lower", { deterministic: true }, (value: unknown) =>
    typeof value === "string" ? value.toLowerCase() : value,
  );
  const groupCommit = new GroupCommitSqlite(raw, walSync);
  const db = new Kysely<Database>({ dialect: new GroupCommitSqliteDialect(groupCommit) });
  const checkpointer =
    file !== ":memory:" && options.sqliteBackgroundCheckpoints !== false
      ? SqliteCheckpointer.start(file, raw, { onError: options.onBackgroundError })
      : undefined;
  return {
    backend: "sqlite",
    groupCommit,
    ...(checkpointer ? { checkpointer } : {}),
    db,
    migrate: (context) => runMigrations(db, migrationProvider(sqliteTypes, context)),
    async ping() {
      if (walSync?.failure) throw walSync.failure;
      groupCommit.prepare("select 1").statement.get();
    },
    async warm() {},
    async close() {
      await checkpointer?.stop();
      await db.destroy();
    },
  };
}

async function openPostgres(url: string, options: StoreOptions): Promise<Store> {
  const schema = options.pgSchema;
  if (schema !== undefined && !/^[a-z_][a-z0-9_]*$/.test(schema)) {
    throw new Error(`invalid PostgreSQL schema name "${schema}"`);
  }
  if (schema) {
    const admin = postgres(url, { max: 1, onnotice: () => {} });
    try {
      await admin.unsafe(`create schema if not exists "${schema}"`);
    } finally {
      await admin.end();
    }
  }
  const poolSize = options.pgPoolSize ?? 10;
  const connect = (max: number) =>
    postgres(url, {
      max,
      // Fail a connection attempt fast (a 503) rather than hold a request for the default 30 s, and
      // let no statement run past the request deadline.
      connect_timeout: 5,
      onnotice: () => {},
      connection: {
        // A 2xx means the commit is flushed to disk: never rely on the server's default for that.
        synchronous_commit: "on",
        statement_timeout: options.pgStatementTimeoutMs ?? 30_000,
        ...(schema ? { search_path: schema } : {}),
      },
    });
  const client = connect(poolSize);
  const db = new Kysely<Database>({ dialect: new PostgresJsDialect(client) });
  return {
    backend: "postgres",
    db,
    postgres: {
      url,
      schema,
      openConnection: () => new Kysely<Database>({ dialect: new PostgresJsDialect(connect(1)) }),
    },
    // The migrator's bookkeeping tables are named with the schema they live in (ours, or the
    // connection's current one): its existence check looks across all schemas and would otherwise
    // find another application's, or another Tidings schema's, tables.
    async migrate(context) {
      const current =
        schema ??
        (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0]?.schema;
      await runMigrations(db, migrationProvider(postgresTypes, context), current);
    },
    async ping() {
      await sql`select 1`.execute(db);
    },
    // postgres.js opens a connection when a statement finds none idle, and each is a new server
    // process, whose first statement on a table loads that table's and its indexes' descriptions
    // into the process's caches. Left to the first work, the first timers after a start ran 100–400
    // ms late (docs/benchmarks.md, "Timers after a start"). So the pool is opened whole, as many
    // statements at once as it holds connections, each planning a read of every table of the
    // schema that it may read (a schema shared with other applications may hold others; LIMIT 0:
    // no row is read).
    async warm() {
      const { rows } = await sql<{ name: string }>`
        select tablename as name from pg_tables
        where schemaname = current_schema()
          and has_table_privilege(format('%I.%I', schemaname, tablename), 'select')`.execute(db);
      if (rows.length === 0) return;
      const reads = rows
        .map(({ name }) => `(select 1 from "${name.replace(/"/g, '""')}" limit 0)`)
        .join(" union all ");
      await Promise.all(Array.from({ length: poolSize }, () => client.unsafe(reads)));
    },
    close: () => db.destroy(),
  };
}

async function runMigrations(
  db: Kysely<Database>,
  provider: ReturnType<typeof migrationProvider>,
  migrationTableSchema?: string,
) {
  const migrator = new Migrator({ db, provider, ...(migrationTableSchema ? { migrationTableSchema } : {}) });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === "Error");
    if (!failed) {
      // Nothing ran: the database could not be reached or read at all.
      throw new Error(`cannot open the database: ${error instanceof Error ? error.message : String(error)}`, {
        cause: error,
      });
    }
    throw new Error(`migration ${failed.migrationName} failed: ${String(error)}`, { cause: error });
  }
}

/** True when a write failed on a unique index (on either backend). */
export function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === "SQLITE_CONSTRAINT_UNIQUE" || code === "SQLITE_CONSTRAINT_PRIMARYKEY" || code === "23505";
}

const UNAVAILABLE_CODES = new Set([
  // the network, as postgres.js reports it
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EPIPE",
  "CONNECT_TIMEOUT",
  "CONNECTION_CLOSED",
  "CONNECTION_DESTROYED",
  "CONNECTION_ENDED",
  // PostgreSQL: connection exceptions (class 08), insufficient resources (53), operator intervention (57P)
  "08000",
  "08001",
  "08003",
  "08004",
  "08006",
  "53100", // disk_full
  "53200", // out_of_memory
  "53300", // too_many_connections
  "57P01", // admin_shutdown
  "57P02", // crash_shutdown
  "57P03", // cannot_connect_now
  "57014", // query_canceled (statement_timeout)
  // better-sqlite3
  "SQLITE_BUSY",
  "SQLITE_LOCKED",
  "SQLITE_FULL",
  "SQLITE_NOMEM",
  "SQLITE_CANTOPEN",
]);

/** True when the database could not be reached or could not take the write right now. */
export function isDatabaseUnavailable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return (
    typeof code === "string" &&
    (UNAVAILABLE_CODES.has(code) || code.startsWith("SQLITE_IOERR") || code.startsWith("SQLITE_READONLY"))
  );
}

/** Whether a PostgreSQL server answers at this URL within a few seconds (for tools and tests). */
export async function postgresAnswers(url: string): Promise<boolean> {
  const probe = postgres(url, { max: 1, connect_timeout: 3, onnotice: () => {} });
  try {
    await probe`select 1`;
    return true;
  } catch {
    return false;
  } finally {
    await probe.end({ timeout: 1 });
  }
}

/** The URL with its password masked, for messages. */
export const redactDatabaseUrl = (url: string) => url.replace(/:[^:@/]*@/, ":***@");
