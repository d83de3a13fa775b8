import {
  type CompiledQuery,
  type DatabaseConnection,
  type DatabaseIntrospector,
  type Dialect,
  type Driver,
  type Kysely,
  PostgresAdapter,
  PostgresQueryCompiler,
  type QueryResult,
  type TransactionSettings,
} from "kysely";
import type { Sql, TransactionSql } from "postgres";
import { SearchPathIntrospector } from "./postgres-introspector.ts";

/**
 * Kysely on the `postgres` driver, written for the request path:
 *
 * - A statement outside a transaction goes straight to the pool: no connection is reserved for it,
 *   so the pool's pipelining and scheduling stay in charge.
 * - Statements are prepared (named, once per connection, by the driver's own cache), so the hot
 *   UPDATE ... RETURNING is parsed and planned once, not on every request.
 * - A transaction is the driver's own `sql.begin()`, held open from Kysely's BEGIN to its COMMIT or
 *   ROLLBACK. Not `sql.reserve()`: in postgres 3.4.9 a reserve asked for while the pool opens its
 *   connections can be dropped and never settle (a loaded test run hung on it, 3 runs in 4;
 *   the driver has open reports of reserves that never settle, porsager/postgres#751 and #1195), while `begin()` is the driver's main,
 *   well-trodden path to one connection.
 */

const WRITE_COMMANDS = new Set(["INSERT", "UPDATE", "DELETE", "MERGE"]);

/**
 * A statement that never reaches the server: the connection it is run on answers it with itself, as
 * its one row's `connection`. Run in a transaction (`trx.executeQuery`), it gives store/pipeline.ts
 * the transaction's connection through Kysely's public API, so that pieces of the transaction's
 * work can go out on it side by side.
 */
export const OWN_CONNECTION = "-- tidings: the connection this statement runs on";

async function run<R>(target: Sql | TransactionSql, compiled: CompiledQuery): Promise<QueryResult<R>> {
  const result = await target.unsafe(compiled.sql, compiled.parameters as never[], { prepare: true });
  return {
    rows: Array.from(result) as R[],
    ...(WRITE_COMMANDS.has(result.command) ? { numAffectedRows: BigInt(result.count ?? 0) } : {}),
  };
}

/** Thrown inside `sql.begin()`'s callback to have the driver roll the transaction back; never seen outside. */
const ROLLBACK = Symbol("rollback");

interface OpenTransaction {
  readonly sql: TransactionSql;
  /** Lets the callback return (commit) or throw ROLLBACK (rollback). */
  readonly end: (command: "commit" | "rollback") => void;
  /** Settles once the driver has sent COMMIT or ROLLBACK and had its answer. */
  readonly ended: Promise<unknown>;
}

class PoolConnection implements DatabaseConnection {
  readonly #sql: Sql;
  #transaction: OpenTransaction | undefined;

  constructor(sql: Sql) {
    this.#sql = sql;
  }

  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    if (compiled.sql === OWN_CONNECTION) return { rows: [{ connection: this } as R] };
    return run<R>(this.#transaction?.sql ?? this.#sql, compiled);
  }

  async *streamQuery<R>(compiled: CompiledQuery, chunkSize = 100): AsyncIterableIterator<QueryResult<R>> {
    const target = this.#transaction?.sql ?? this.#sql;
    const cursor = target.unsafe(compiled.sql, compiled.parameters as never[]).cursor(chunkSize);
    for await (const rows of cursor) yield { rows: rows as unknown as R[] };
  }

  async begin(settings: TransactionSettings): Promise<void> {
    const level = settings.isolationLevel ? `isolation level ${settings.isolationLevel}` : "";
    const mode = settings.accessMode ?? "";
    let opened: (sql: TransactionSql) => void = () => {};
    const open = new Promise<TransactionSql>((resolve) => {
      opened = resolve;
    });
    let end: (command: "commit" | "rollback") => void = () => {};
    const ending = new Promise<"commit" | "rollback">((resolve) => {
      end = resolve;
    });
    const ended = this.#sql.begin(`${level} ${mode}`.trim(), async (sql) => {
      opened(sql);
      if ((await ending) === "rollback") throw ROLLBACK;
    });
    // Awaited by finish(); never left unhandled meanwhile (a connection lost mid-transaction).
    ended.catch(() => {});
    // A BEGIN that fails ends the transaction before the callback ever runs.
    const sql = await Promise.race([
      open,
      ended.then(() => {
        throw new Error("the transaction ended before it began");
      }),
    ]);
    this.#transaction = { sql, end, ended };
  }

  async finish(command: "commit" | "rollback"): Promise<void> {
    const transaction = this.#transaction;
    this.#transaction = undefined;
    if (!transaction) return;
    transaction.end(command);
    try {
      await transaction.ended;
    } catch (error) {
      if (error !== ROLLBACK) throw error;
    }
  }

  /** Rolls back a transaction Kysely gives back unfinished (it never does once it has begun one). */
  release(): void {
    this.#transaction?.end("rollback");
    this.#transaction = undefined;
  }
}

class PostgresDriver implements Driver {
  readonly #sql: Sql;

  constructor(sql: Sql) {
    this.#sql = sql;
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    return new PoolConnection(this.#sql);
  }

  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return (connection as PoolConnection).begin(settings);
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return (connection as PoolConnection).finish("commit");
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return (connection as PoolConnection).finish("rollback");
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    (connection as PoolConnection).release();
  }

  async destroy(): Promise<void> {
    await this.#sql.end({ timeout: 5 });
  }
}

export class PostgresJsDialect implements Dialect {
  readonly #sql: Sql;

  constructor(sql: Sql) {
    this.#sql = sql;
  }

  createAdapter() {
    return new PostgresAdapter();
  }

  createDriver(): Driver {
    return new PostgresDriver(this.#sql);
  }

  createQueryCompiler() {
    return new PostgresQueryCompiler();
  }

  // biome-ignore lint/suspicious/noExplicitAny: Kysely's Dialect interface takes an untyped Kysely here.
  createIntrospector(db: Kysely<any>): DatabaseIntrospector {
    return new SearchPathIntrospector(db);
  }
}
