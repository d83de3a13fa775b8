import type SqliteDatabase from "better-sqlite3";
import {
  type CompiledQuery,
  type DatabaseConnection,
  type DatabaseIntrospector,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryResult,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
} from "kysely";

/**
 * Group commit for SQLite under `synchronous=FULL`.
 *
 * With FULL every COMMIT waits for an fsync, which caps one-commit-per-request near a few thousand
 * writes a second. This driver lets every write that arrives while a batch is open share one
 * transaction and so one fsync:
 *
 * - Work arrives as units: a single statement, or a Kysely transaction. Units run one at a time on
 *   the one connection (better-sqlite3 is synchronous, so a statement never interleaves with another).
 * - The first unit that writes opens the batch (`BEGIN IMMEDIATE`) and schedules its COMMIT for the
 *   end of the current event-loop turn (setImmediate), so every request parsed in this turn joins.
 * - A transaction unit runs inside its own SAVEPOINT: its rollback undoes only its own work, never
 *   another unit's. A failing single statement is undone by SQLite alone (statement rollback).
 * - No unit that wrote, or that read what another unit wrote, resolves before the COMMIT returns:
 *   a response is sent only after its write is on disk. If the COMMIT fails, all of them fail.
 * - A read that arrives while no uncommitted write exists runs at once, outside any batch.
 * - The connection is handed to the next unit as soon as a unit is done; only its caller waits for
 *   the COMMIT (Kysely delivers a result only after the driver's releaseConnection resolves).
 */

type Raw = SqliteDatabase.Database;
type Statement = SqliteDatabase.Statement<unknown[], unknown>;

interface Batch {
  /** Whether any statement of the batch has written (so COMMIT must happen before anyone is told). */
  dirty: boolean;
  /** Settles when the batch is committed (or rejects with why it was lost). */
  done: Promise<void>;
  resolve(): void;
  reject(error: unknown): void;
}

function newBatch(): Batch {
  let resolve!: () => void;
  let reject!: (error: unknown) => void;
  const done = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // A batch nobody waits on must not become an unhandled rejection.
  done.catch(() => {});
  return { dirty: false, done, resolve, reject };
}

/** better-sqlite3 binds no booleans; the repositories pass them to both backends alike. */
function bindable(params: readonly unknown[]): unknown[] {
  return params.map((value) => (typeof value === "boolean" ? (value ? 1 : 0) : value));
}

/** A FIFO lock: units take the connection one at a time, in arrival order. */
class Mutex {
  #locked = false;
  #waiters: (() => void)[] = [];

  acquire(): Promise<void> {
    if (!this.#locked) {
      this.#locked = true;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  release(): void {
    const next = this.#waiters.shift();
    if (next) next();
    else this.#locked = false;
  }
}

const STATEMENT_CACHE_SIZE = 256;

export class GroupCommitSqlite {
  readonly #raw: Raw;
  readonly #mutex = new Mutex();
  readonly #statements = new Map<string, Statement>();
  #batch: Batch | undefined;
  #commitScheduled = false;
  #units = 0;
  /** Batches committed: for tests and metrics. */
  readonly stats = { commits: 0 };

  constructor(raw: Raw) {
    this.#raw = raw;
  }

  get raw(): Raw {
    return this.#raw;
  }

  prepare(sql: string): Statement {
    let statement = this.#statements.get(sql);
    if (!statement) {
      statement = this.#raw.prepare(sql) as Statement;
      if (this.#statements.size >= STATEMENT_CACHE_SIZE) {
        const oldest = this.#statements.keys().next().value;
        if (oldest !== undefined) this.#statements.delete(oldest);
      }
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  async acquire(): Promise<Unit> {
    await this.#mutex.acquire();
    return new Unit(this, ++this.#units);
  }

  release(): void {
    this.#mutex.release();
  }

  /** The open batch, opening one (and scheduling its commit) when there is none. */
  openBatch(): Batch {
    if (!this.#batch) {
      this.#raw.exec("BEGIN IMMEDIATE");
      this.#batch = newBatch();
    }
    if (!this.#commitScheduled) {
      this.#commitScheduled = true;
      setImmediate(() => void this.#commit());
    }
    return this.#batch;
  }

  get batch(): Batch | undefined {
    return this.#batch;
  }

  /**
   * Called after a statement failed: when SQLite itself rolled back the whole transaction (I/O
   * error, disk full), every unit of the batch has lost its write and is told so.
   */
  checkAborted(error: unknown): void {
    const batch = this.#batch;
    if (batch && !this.#raw.inTransaction) {
      this.#batch = undefined;
      batch.reject(error);
    }
  }

  async #commit(): Promise<void> {
    // Commit between units, never inside one: a transaction unit may be waiting on I/O mid-way.
    await this.#mutex.acquire();
    this.#commitScheduled = false;
    try {
      this.#commitOpenBatch();
    } finally {
      this.#mutex.release();
    }
  }

  /** Commits the open batch (the caller holds the connection); its units learn how it went. */
  #commitOpenBatch(): void {
    const batch = this.#batch;
    this.#batch = undefined;
    if (!batch) return;
    try {
      this.#raw.exec("COMMIT");
      this.stats.commits++;
      batch.resolve();
    } catch (error) {
      if (this.#raw.inTransaction) {
        try {
          this.#raw.exec("ROLLBACK");
        } catch {
          // The transaction is gone either way; the units learn it from the rejection below.
        }
      }
      batch.reject(error);
    }
  }

  /** Commits what is open and waits for the connection to be free; then it can be closed. */
  async drain(): Promise<void> {
    await this.#mutex.acquire();
    try {
      this.#commitOpenBatch();
    } finally {
      this.#mutex.release();
    }
  }
}

/**
 * One unit of work: what Kysely does between taking the connection and giving it back — a single
 * statement, a Kysely transaction, or the statements of `db.connection()`.
 */
class Unit implements DatabaseConnection {
  readonly #owner: GroupCommitSqlite;
  readonly #savepoint: string;
  #inTransaction = false;
  #released = false;
  /** The batch this unit must see committed before it may report success. */
  #mustWaitFor: Batch | undefined;

  constructor(owner: GroupCommitSqlite, id: number) {
    this.#owner = owner;
    this.#savepoint = `unit_${id}`;
  }

  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    if (this.#released) throw new Error("a group-commit unit was used after it ended");
    const statement = this.#owner.prepare(compiled.sql);
    const writes = !statement.readonly;
    let batch = this.#owner.batch;
    // Writes, and everything inside a transaction, happen inside the batch. A lone read with no
    // uncommitted write about runs as it is.
    if (writes || this.#inTransaction) batch = this.#owner.openBatch();
    if (batch && (writes || batch.dirty)) this.#mustWaitFor = batch;
    try {
      const params = bindable(compiled.parameters);
      if (statement.reader) {
        const rows = statement.all(...params) as R[];
        if (writes && batch) batch.dirty = true;
        return { rows };
      }
      const result = statement.run(...params);
      if (writes && batch) batch.dirty = true;
      return {
        rows: [],
        numAffectedRows: BigInt(result.changes),
        insertId: BigInt(result.lastInsertRowid),
      };
    } catch (error) {
      this.#owner.checkAborted(error);
      throw error;
    }
  }

  async *streamQuery<R>(compiled: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    yield await this.executeQuery<R>(compiled);
  }

  begin(): void {
    this.#owner.openBatch();
    this.#owner.raw.exec(`SAVEPOINT ${this.#savepoint}`);
    this.#inTransaction = true;
  }

  commit(): void {
    this.#inTransaction = false;
    try {
      this.#owner.raw.exec(`RELEASE ${this.#savepoint}`);
    } catch (error) {
      this.#owner.checkAborted(error);
      throw error;
    }
    const batch = this.#owner.batch;
    if (batch?.dirty) this.#mustWaitFor = batch;
  }

  rollback(): void {
    this.#inTransaction = false;
    // Nothing of this unit survives, so there is nothing to wait for.
    this.#mustWaitFor = undefined;
    if (!this.#owner.raw.inTransaction) return;
    this.#owner.raw.exec(`ROLLBACK TO ${this.#savepoint}`);
    this.#owner.raw.exec(`RELEASE ${this.#savepoint}`);
  }

  exec(sql: string): void {
    this.#owner.raw.exec(sql);
  }

  /**
   * Kysely gives the connection back: free it for the next unit at once, then hold this unit's
   * caller until the batch holding its writes is committed. Kysely hands the result over only
   * after this resolves, so no write is acknowledged before it is on disk.
   */
  async end(): Promise<void> {
    if (this.#released) return;
    this.#released = true;
    this.#owner.release();
    const batch = this.#mustWaitFor;
    this.#mustWaitFor = undefined;
    if (batch) await batch.done;
  }
}

class GroupCommitDriver implements Driver {
  readonly #owner: GroupCommitSqlite;

  constructor(owner: GroupCommitSqlite) {
    this.#owner = owner;
  }

  async init(): Promise<void> {}

  acquireConnection(): Promise<DatabaseConnection> {
    return this.#owner.acquire();
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    (connection as Unit).begin();
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    (connection as Unit).commit();
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    (connection as Unit).rollback();
  }

  async savepoint(connection: DatabaseConnection, name: string): Promise<void> {
    (connection as Unit).exec(`SAVEPOINT "${name.replace(/"/g, "")}"`);
  }

  async rollbackToSavepoint(connection: DatabaseConnection, name: string): Promise<void> {
    (connection as Unit).exec(`ROLLBACK TO "${name.replace(/"/g, "")}"`);
  }

  async releaseSavepoint(connection: DatabaseConnection, name: string): Promise<void> {
    (connection as Unit).exec(`RELEASE "${name.replace(/"/g, "")}"`);
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    return (connection as Unit).end();
  }

  async destroy(): Promise<void> {
    await this.#owner.drain();
    this.#owner.raw.close();
  }
}

export class GroupCommitSqliteDialect implements Dialect {
  readonly #owner: GroupCommitSqlite;

  constructor(owner: GroupCommitSqlite) {
    this.#owner = owner;
  }

  createAdapter() {
    return new SqliteAdapter();
  }

  createDriver(): Driver {
    return new GroupCommitDriver(this.#owner);
  }

  createQueryCompiler() {
    return new SqliteQueryCompiler();
  }

  // biome-ignore lint/suspicious/noExplicitAny: Kysely's Dialect interface takes an untyped Kysely here.
  createIntrospector(db: Kysely<any>): DatabaseIntrospector {
    return new SqliteIntrospector(db);
  }
}
