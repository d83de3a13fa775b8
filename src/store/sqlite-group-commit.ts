import fs from "node:fs";
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
import { wellFormed } from "./values.ts";

/**
 * Group commit for SQLite.
 *
 * A durable COMMIT waits for an fsync, which caps one-commit-per-request near a few thousand
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
 *
 * Where the fsync runs (`WalSync`): under `synchronous=FULL` SQLite runs it inside COMMIT, on the
 * event loop, and nothing else happens meanwhile. With a `WalSync` the connection runs at
 * `synchronous=NORMAL` (a COMMIT writes its log frames and returns) and the batch is reported
 * committed only once an `fdatasync` of the log, started after its COMMIT, has returned; that runs
 * on libuv's thread pool while the event loop goes on with the next batch. It is as durable: a
 * commit's frames are in the log before the fdatasync starts, and nobody hears of the commit before
 * it ends. While one fdatasync runs, the batches committed meanwhile wait for the next, which covers
 * them all. A read that finds committed frames not yet synced waits for them too, so no answer ever
 * shows what a power cut could take back.
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
  return params.map((value) =>
    typeof value === "string" ? wellFormed(value) : typeof value === "boolean" ? (value ? 1 : 0) : value,
  );
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

/**
 * Makes COMMITs at `synchronous=NORMAL` durable: an `fdatasync` of the write-ahead log, on libuv's
 * thread pool, after each COMMIT (one at a time: the batches committed while one runs share the next).
 * A failed fdatasync is final, as in PostgreSQL: the kernel may have dropped the pages it could not
 * write, so no later sync could vouch for them; every waiting and later commit is refused, and the
 * store's ping fails (health answers 503) until the process is restarted and recovers from the log.
 */
export class WalSync {
  readonly #walFile: string;
  readonly #fdatasync: (fd: number) => Promise<void>;
  #fd: number | undefined;
  #committed = 0;
  #durable = 0;
  #syncing: Promise<void> | undefined;
  #failure: Error | undefined;
  readonly #waiters: { seq: number; resolve(): void; reject(error: unknown): void }[] = [];
  /** fdatasync calls made: for tests and metrics. */
  readonly stats = { syncs: 0 };

  /** `fdatasync`: how a descriptor is synced (node's own by default; a test may hold it or fail it). */
  constructor(databaseFile: string, options: { fdatasync?: (fd: number) => Promise<void> } = {}) {
    this.#walFile = `${databaseFile}-wal`;
    this.#fdatasync =
      options.fdatasync ??
      ((fd) =>
        new Promise((resolve, reject) => fs.fdatasync(fd, (error) => (error ? reject(error) : resolve()))));
  }

  get failure(): Error | undefined {
    return this.#failure;
  }

  /** Called right after a COMMIT returned: settles once that commit's frames are on disk. */
  committed(): Promise<void> {
    const seq = ++this.#committed;
    return this.#until(seq);
  }

  /** Settles once everything committed so far is on disk; undefined when it already is. */
  caughtUp(): Promise<void> | undefined {
    if (this.#durable >= this.#committed && !this.#failure) return undefined;
    return this.#until(this.#committed);
  }

  /** The fdatasync under way, if one is. */
  get syncing(): Promise<void> | undefined {
    return this.#syncing;
  }

  /** Settles once nothing waits for a sync (for a clean close). */
  async idle(): Promise<void> {
    while (this.#syncing) await this.#syncing;
  }

  close(): void {
    if (this.#fd !== undefined) fs.closeSync(this.#fd);
    this.#fd = undefined;
  }

  #until(seq: number): Promise<void> {
    if (this.#failure) {
      const refused = Promise.reject(this.#failure);
      refused.catch(() => {});
      return refused;
    }
    if (this.#durable >= seq) return Promise.resolve();
    const waited = new Promise<void>((resolve, reject) => this.#waiters.push({ seq, resolve, reject }));
    // A unit that rolls back drops what it waited for: its failure must not go unhandled.
    waited.catch(() => {});
    this.#kick();
    return waited;
  }

  #kick(): void {
    if (this.#syncing || this.#durable >= this.#committed || this.#failure) return;
    const target = this.#committed;
    this.#syncing = this.#sync().then(
      () => this.#settle(target, undefined),
      (error: unknown) => this.#settle(target, error instanceof Error ? error : new Error(String(error))),
    );
  }

  #sync(): Promise<void> {
    // The log exists once the connection has committed; the store's connection keeps it (SQLite
    // removes it only when the last connection closes), so one descriptor serves for the store's life.
    this.#fd ??= fs.openSync(this.#walFile, "r");
    const fd = this.#fd;
    this.stats.syncs++;
    return this.#fdatasync(fd);
  }

  #settle(target: number, error: Error | undefined): void {
    this.#syncing = undefined;
    if (error) {
      this.#failure = new Error(`the SQLite log could not be synced to disk: ${error.message}`);
      for (const waiter of this.#waiters.splice(0)) waiter.reject(this.#failure);
      return;
    }
    this.#durable = target;
    let done = 0;
    while (done < this.#waiters.length && (this.#waiters[done]?.seq ?? Infinity) <= target) done++;
    for (const waiter of this.#waiters.splice(0, done)) waiter.resolve();
    this.#kick();
  }
}

const STATEMENT_CACHE_SIZE = 256;

/**
 * Whether SQLite counts the rows a statement changes (`changes`, or the rows of its RETURNING
 * clause): a plain INSERT, UPDATE or DELETE, as Kysely and our prepared templates write them. When
 * such a statement changed no row, it wrote nothing. Any other that writes (DDL, a WITH that writes,
 * REPLACE) counts as changing something.
 */
const countsRows = (sql: string) => /^\s*(insert|update|delete)\s/i.test(sql);

/** A prepared statement, with how a row it reads becomes an object (statements that read rows). */
interface Prepared {
  readonly statement: Statement;
  /** Whether SQLite counts the rows it changes (see countsRows). */
  readonly rowCounted: boolean;
  readonly toRow: ((values: unknown[]) => Record<string, unknown>) | undefined;
}

/**
 * Turns a statement's rows from arrays into objects by one function per statement: an object
 * literal of its columns, compiled once. better-sqlite3's own row objects are made one property at
 * a time in its native code, and measured against this on a workflow's 27 columns (a scratch loop
 * reading one row 300,000 times) cost 12.2–12.9 µs a row against 8.0–8.1. The names come from
 * SQLite's description of our own statement, each written as a JSON string; `__proto__` as a
 * computed key, so that it is a column like any other and not the object's prototype.
 */
function rowBuilder(names: readonly string[]): (values: unknown[]) => Record<string, unknown> {
  const properties = names.map((name, i) => {
    const key = JSON.stringify(name);
    return `${name === "__proto__" ? `[${key}]` : key}: v[${i}]`;
  });
  return new Function("v", `return { ${properties.join(", ")} };`) as (
    values: unknown[],
  ) => Record<string, unknown>;
}

export class GroupCommitSqlite {
  readonly #raw: Raw;
  readonly #mutex = new Mutex();
  readonly #statements = new Map<string, Prepared>();
  #batch: Batch | undefined;
  #commitScheduled = false;
  #units = 0;
  /** Batches committed: for tests and metrics. */
  readonly stats = { commits: 0 };
  /** Set when the connection runs at synchronous=NORMAL and durability comes from syncing the log. */
  readonly walSync: WalSync | undefined;

  constructor(raw: Raw, walSync?: WalSync) {
    this.#raw = raw;
    this.walSync = walSync;
  }

  get raw(): Raw {
    return this.#raw;
  }

  /** The statement, prepared once and kept (the most recently prepared STATEMENT_CACHE_SIZE of them). */
  prepare(sql: string): Prepared {
    let prepared = this.#statements.get(sql);
    if (!prepared) {
      const statement = this.#raw.prepare(sql) as Statement;
      // A statement that reads rows hands them over as arrays, made objects by toRow.
      const toRow = statement.reader
        ? rowBuilder(
            statement
              .raw(true)
              .columns()
              .map((column) => column.name),
          )
        : undefined;
      prepared = { statement, toRow, rowCounted: countsRows(sql) };
      if (this.#statements.size >= STATEMENT_CACHE_SIZE) {
        const oldest = this.#statements.keys().next().value;
        if (oldest !== undefined) this.#statements.delete(oldest);
      }
      this.#statements.set(sql, prepared);
    }
    return prepared;
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
    // While the log is being synced, the batch stays open and gathers what arrives meanwhile: it
    // commits when that sync ends, and the next sync covers all of it (one COMMIT and one fdatasync
    // for everything that arrived during one, as SQLite's own fsync would have made it wait).
    for (let syncing = this.walSync?.syncing; syncing; syncing = this.walSync?.syncing) await syncing;
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
      // A batch that changed nothing has nothing to sync.
      if (this.walSync && batch.dirty) this.walSync.committed().then(batch.resolve, batch.reject);
      else batch.resolve();
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
    await this.walSync?.idle();
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
  /** What this unit must see on disk before it may report success: its batch, or earlier commits. */
  #mustWaitFor: Promise<void> | undefined;

  constructor(owner: GroupCommitSqlite, id: number) {
    this.#owner = owner;
    this.#savepoint = `unit_${id}`;
  }

  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    if (this.#released) throw new Error("a group-commit unit was used after it ended");
    const { statement, toRow, rowCounted } = this.#owner.prepare(compiled.sql);
    const writes = !statement.readonly;
    let batch = this.#owner.batch;
    // Writes, and everything inside a transaction, happen inside the batch. A lone read with no
    // uncommitted write about runs as it is.
    if (writes || this.#inTransaction) batch = this.#owner.openBatch();
    try {
      const params = bindable(compiled.parameters);
      if (toRow) {
        const values = statement.all(...params) as unknown[][];
        const rows = new Array<R>(values.length);
        for (let i = 0; i < values.length; i++) rows[i] = toRow(values[i] as unknown[]) as R;
        // A RETURNING clause returns a row for each row the statement inserted, updated or deleted.
        this.#ran(batch, writes, writes && (rows.length > 0 || !rowCounted));
        return { rows };
      }
      const result = statement.run(...params);
      this.#ran(batch, writes, writes && (result.changes > 0 || !rowCounted));
      return {
        rows: [],
        numAffectedRows: BigInt(result.changes),
        insertId: BigInt(result.lastInsertRowid),
      };
    } catch (error) {
      // A failed write waits for its batch, as every write did before this one ran: when SQLite
      // rolled the whole batch back (checkAborted), its caller hears of it from the batch.
      if (writes && batch) this.#mustWaitFor = batch.done;
      this.#owner.checkAborted(error);
      throw error;
    }
  }

  /**
   * What the unit must wait for after a statement. One that changed rows waits for its batch's
   * commit and sync. A write that changed none (an update or delete that matched nothing) waits for
   * its batch's COMMIT only, which syncs nothing unless another unit's writes are in the batch, which
   * it may have seen: the answers of a turn's writes then still go out together (answered one by one,
   * 32 connections of such requests took a third more CPU each, the socket writes most of it). A
   * read waits for the batch only when the batch holds uncommitted writes, and otherwise for the
   * log's sync to reach what it read.
   */
  #ran(batch: Batch | undefined, writes: boolean, changed: boolean): void {
    if (changed && batch) batch.dirty = true;
    if (batch && (writes || batch.dirty)) this.#mustWaitFor = batch.done;
    // Committed but not yet synced (a WalSync's fdatasync under way): what this reads waits for it.
    else this.#mustWaitFor ??= this.#owner.walSync?.caughtUp();
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
    if (batch?.dirty) this.#mustWaitFor = batch.done;
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
    const wait = this.#mustWaitFor;
    this.#mustWaitFor = undefined;
    if (wait) await wait;
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
    this.#owner.walSync?.close();
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
