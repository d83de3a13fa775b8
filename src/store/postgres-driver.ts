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
import type { ReservedSql, Sql } from "postgres";
import { SearchPathIntrospector } from "./postgres-introspector.ts";

/**
 * Kysely on the `postgres` driver, written for the request path:
 *
 * - A statement outside a transaction goes straight to the pool: no connection is reserved for it,
 *   so the pool's pipelining and scheduling stay in charge.
 * - Statements are prepared (named, once per connection, by the driver's own cache), so the hot
 *   UPDATE ... RETURNING is parsed and planned once, not on every request.
 * - A transaction reserves one connection from BEGIN to COMMIT or ROLLBACK; its BEGIN goes out with
 *   its first statement rather than a round trip before it.
 */

const WRITE_COMMANDS = new Set(["INSERT", "UPDATE", "DELETE", "MERGE"]);

/**
 * A statement that never reaches the server: the connection it is run on answers it with itself, as
 * its one row's `connection`. Run in a transaction (`trx.executeQuery`), it gives store/pipeline.ts
 * the transaction's connection through Kysely's public API, so that pieces of the transaction's
 * work can go out on it side by side.
 */
export const OWN_CONNECTION = "-- tidings: the connection this statement runs on";

async function run<R>(target: Sql | ReservedSql, compiled: CompiledQuery): Promise<QueryResult<R>> {
  const result = await target.unsafe(compiled.sql, compiled.parameters as never[], { prepare: true });
  return {
    rows: Array.from(result) as R[],
    ...(WRITE_COMMANDS.has(result.command) ? { numAffectedRows: BigInt(result.count ?? 0) } : {}),
  };
}

class PoolConnection implements DatabaseConnection {
  readonly #sql: Sql;
  #reserved: ReservedSql | undefined;
  /** The BEGIN sent but not yet awaited: the transaction's first statement follows it unawaited. */
  #beginning: Promise<unknown> | undefined;

  constructor(sql: Sql) {
    this.#sql = sql;
  }

  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    if (compiled.sql === OWN_CONNECTION) return { rows: [{ connection: this } as R] };
    const beginning = this.#takeBeginning();
    if (!beginning) return run<R>(this.#reserved ?? this.#sql, compiled);
    // BEGIN and the first statement go out together on the reserved connection (the driver
    // pipelines what is sent on one connection) and their answers come back together: one round
    // trip less per transaction. A BEGIN that failed fails the statement too.
    const [, result] = await Promise.all([beginning, run<R>(this.#reserved ?? this.#sql, compiled)]);
    return result;
  }

  async *streamQuery<R>(compiled: CompiledQuery, chunkSize = 100): AsyncIterableIterator<QueryResult<R>> {
    await this.#takeBeginning();
    const target = this.#reserved ?? this.#sql;
    const cursor = target.unsafe(compiled.sql, compiled.parameters as never[]).cursor(chunkSize);
    for await (const rows of cursor) yield { rows: rows as unknown as R[] };
  }

  /** The unawaited BEGIN, once: whoever takes it awaits it. */
  #takeBeginning(): Promise<unknown> | undefined {
    const beginning = this.#beginning;
    this.#beginning = undefined;
    return beginning;
  }

  async begin(settings: TransactionSettings): Promise<void> {
    this.#reserved = await this.#sql.reserve();
    const level = settings.isolationLevel ? ` isolation level ${settings.isolationLevel}` : "";
    const mode = settings.accessMode ? ` ${settings.accessMode}` : "";
    const beginning: Promise<unknown> = this.#reserved.unsafe(`begin${level}${mode}`);
    // Awaited by the transaction's first statement (or its end); never left unhandled meanwhile.
    beginning.catch(() => {});
    this.#beginning = beginning;
  }

  async finish(command: "commit" | "rollback"): Promise<void> {
    const reserved = this.#reserved;
    this.#reserved = undefined;
    if (!reserved) return;
    try {
      const beginning = this.#takeBeginning();
      // A transaction that ran no statement: its BEGIN's failure is a commit's failure, not a rollback's.
      if (beginning) await (command === "commit" ? beginning : beginning.catch(() => {}));
      await reserved.unsafe(command);
    } finally {
      reserved.release();
    }
  }

  async savepoint(command: string): Promise<void> {
    if (!this.#reserved) throw new Error("a savepoint needs a transaction");
    await this.#takeBeginning();
    await this.#reserved.unsafe(command);
  }

  /** Gives back a connection a failed transaction may still hold. */
  release(): void {
    const reserved = this.#reserved;
    this.#reserved = undefined;
    this.#beginning = undefined;
    reserved?.release();
  }
}

const quoted = (name: string) => `"${name.replace(/"/g, '""')}"`;

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

  savepoint(connection: DatabaseConnection, name: string): Promise<void> {
    return (connection as PoolConnection).savepoint(`savepoint ${quoted(name)}`);
  }

  rollbackToSavepoint(connection: DatabaseConnection, name: string): Promise<void> {
    return (connection as PoolConnection).savepoint(`rollback to savepoint ${quoted(name)}`);
  }

  releaseSavepoint(connection: DatabaseConnection, name: string): Promise<void> {
    return (connection as PoolConnection).savepoint(`release savepoint ${quoted(name)}`);
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
