import { type Kysely, type KyselyProps, PostgresAdapter, Transaction } from "kysely";
import type { Database } from "./schema.ts";

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
  const executor = db.getExecutor();
  if (!(executor.adapter instanceof PostgresAdapter)) {
    const results: unknown[] = [];
    for (const piece of work) results.push(await piece(db));
    return results as never;
  }
  // The transaction's own provider hands its connection to one statement at a time; this holds it
  // for all of `work`, and hands it to each statement at once.
  return executor.provideConnection(async (connection) => {
    const running: Promise<unknown>[] = [];
    for (const piece of work) {
      let reached = () => {};
      const sent = new Promise<void>((resolve) => {
        reached = resolve;
      });
      const unqueued = executor.withConnectionProvider({
        provideConnection: (consume) => {
          reached();
          return consume(connection);
        },
      });
      // Statements only: this handle neither opens a transaction nor closes a database, the one use
      // Kysely makes of its config, driver and dialect.
      const handle = new Transaction<Database>({
        config: {},
        driver: {},
        dialect: {},
        executor: unqueued,
      } as unknown as KyselyProps);
      const run = piece(handle);
      running.push(run);
      // The next piece starts once this one's first statement has been handed the connection (by
      // the time this await returns, the driver has queued it: pipeline.test.ts checks the order
      // with a foreign key), or once this one has ended without any.
      await Promise.race([sent, run.then(ignore, ignore)]);
    }
    const settled = await Promise.allSettled(running);
    const failed = settled.find((outcome) => outcome.status === "rejected");
    if (failed) throw failed.reason;
    return settled.map((outcome) => (outcome as PromiseFulfilledResult<unknown>).value) as never;
  });
}

const ignore = () => {};
