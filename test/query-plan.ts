import { CompiledQuery as Compiled, type CompiledQuery, type Kysely, sql } from "kysely";
import type { Database } from "../src/store/schema.ts";
import type { TestContext } from "./harness.ts";

/**
 * The plan the backend makes for the statement `compile` builds, as one text: SQLite's `explain
 * query plan` rows, PostgreSQL's `explain` lines. On PostgreSQL sequential scans are forbidden for
 * it: the test's tables are tiny, where a scan is cheapest, and the plan should say whether an index
 * can answer the statement at all.
 */
export async function planOf(
  ctx: TestContext,
  compile: (db: Kysely<Database>) => CompiledQuery,
): Promise<string> {
  return ctx.store.db.transaction().execute(async (trx) => {
    if (ctx.backend === "postgres") await sql`set local enable_seqscan = off`.execute(trx);
    const query = compile(trx);
    const explain = ctx.backend === "sqlite" ? "explain query plan " : "explain ";
    const { rows } = await trx.executeQuery(Compiled.raw(explain + query.sql, [...query.parameters]));
    return rows.map((row) => Object.values(row as object).join(" ")).join("\n");
  });
}
