import {
  CompiledQuery,
  type DatabaseConnection,
  type DatabaseIntrospector,
  type Dialect,
  type Driver,
  Kysely,
  PostgresAdapter,
  PostgresQueryCompiler,
  type QueryResult,
} from "kysely";
import { OWN_CONNECTION } from "./postgres-driver.ts";
import type { Database } from "./schema.ts";
import { dialectOf } from "./values.ts";

/** What each piece of pipelined work gets: the transaction, on its connection, without the wait. */
type Work = (db: Kysely<Database>) => Promise<unknown>;

/**
 * Runs pieces of one transaction's work side by side on its connection, each without waiting for
 * the others' answers, and returns their results in order.
 *
 * Kysely sends a transaction's statements one at a time, each after the previous one's answer. On
 * PostgreSQL that is a round trip per statement and a write to the socket per statement (in the
 * trigger benchmark's profile, a fifth of the service's CPU was those writes). Pieces started
 * together here go out together: the `postgres` driver queues what is sent on one connection and
 * writes it at once, and PostgreSQL runs the statements in the order they arrive, in the
 * transaction. On SQLite, where each statement runs when it is called (the driver is synchronous)
 * and there is no round trip to save, the pieces simply run one after another.
 *
 * How, on Kysely's public API only: our PostgreSQL driver answers one statement (OWN_CONNECTION,
 * run in the transaction) with the transaction's connection; each piece then gets a Kysely of its
 * own (`SideBySide`) whose dialect hands every statement that connection at once, where a
 * transaction would hand it to one statement at a time. This file and that answer are the one
 * place where statements reach the driver around Kysely's transaction.
 *
 * Order: the pieces start in the order listed, each once the one before has sent its first
 * statement (or ended), so their first statements run in that order on both backends (a later
 * piece may insert rows that refer to an earlier piece's). A piece's further statements each wait
 * for the answer to its previous one, as usual, and so go out after the first statements of the
 * pieces listed after it: only work whose statements do not need each other's results belongs here.
 *
 * Every piece has settled when this returns; a failure is then thrown, the first in the order the
 * pieces are listed (on PostgreSQL a failing statement aborts the transaction, and the statements
 * after it fail for that reason alone).
 */
export async function pipelined<const W extends readonly Work[]>(
  db: Kysely<Database>,
  work: W,
): Promise<{ -readonly [K in keyof W]: Awaited<ReturnType<W[K]>> }> {
  if (!db.isTransaction) throw new Error("pipelined work runs inside a transaction");
  if (dialectOf(db) !== "postgres") {
    const results: unknown[] = [];
    for (const piece of work) results.push(await piece(db));
    return results as never;
  }
  const { rows } = await db.executeQuery<{ connection: DatabaseConnection }>(
    CompiledQuery.raw(OWN_CONNECTION),
  );
  const connection = rows[0]?.connection;
  if (!connection) throw new Error("the PostgreSQL driver did not hand over the transaction's connection");
  const running: Promise<unknown>[] = [];
  for (const piece of work) {
    let reached = () => {};
    const sent = new Promise<void>((resolve) => {
      reached = resolve;
    });
    const run = piece(new SideBySide(connection, () => reached()));
    running.push(run);
    // The next piece starts once this one's first statement has been handed to the driver (by the
    // time this await returns, the driver has queued it: pipeline.test.ts checks the order with a
    // foreign key), or once this one has ended without any.
    await Promise.race([sent, run.then(ignore, ignore)]);
  }
  const settled = await Promise.allSettled(running);
  const failed = settled.find((outcome) => outcome.status === "rejected");
  if (failed) throw failed.reason;
  return settled.map((outcome) => (outcome as PromiseFulfilledResult<unknown>).value) as never;
}

const ignore = () => {};

/**
 * A piece's Kysely: its statements run on the transaction's connection, each handed it at once (a
 * Kysely that is no transaction asks its driver for a connection per statement, and this driver
 * always answers with that one). It is part of the transaction, and cannot open another.
 */
class SideBySide extends Kysely<Database> {
  constructor(connection: DatabaseConnection, onFirstStatement: () => void) {
    super({ dialect: sideBySideDialect(connection, onFirstStatement) });
  }

  override get isTransaction(): boolean {
    return true;
  }
}

function sideBySideDialect(connection: DatabaseConnection, onFirstStatement: () => void): Dialect {
  const shared: DatabaseConnection = {
    executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
      const result = connection.executeQuery<R>(compiled);
      // Its question for the connection (a nested pipeline's) is no statement.
      if (compiled.sql !== OWN_CONNECTION) onFirstStatement();
      return result;
    },
    streamQuery<R>(compiled: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
      onFirstStatement();
      return connection.streamQuery<R>(compiled, chunkSize);
    },
  };
  const refuse = async () => {
    throw new Error("pipelined work is part of its transaction and cannot open or end one");
  };
  const driver: Driver = {
    init: async () => {},
    acquireConnection: async () => shared,
    beginTransaction: refuse,
    commitTransaction: refuse,
    rollbackTransaction: refuse,
    // The connection is the transaction's: the transaction gives it back.
    releaseConnection: async () => {},
    destroy: async () => {},
  };
  return {
    createAdapter: () => ADAPTER,
    createDriver: () => driver,
    createQueryCompiler: () => new PostgresQueryCompiler(),
    createIntrospector: (): DatabaseIntrospector => {
      throw new Error("pipelined work does not introspect the database");
    },
  };
}

const ADAPTER = new PostgresAdapter();
