import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";
import type { LightMyRequestResponse } from "fastify";
import { sql } from "kysely";
import { readBool, readTimestamp } from "../src/store/values.ts";
import { assertErrorBody } from "./error-body.ts";
import { createWorkflow } from "./factories.ts";
import { forEachBackend } from "./harness.ts";

// Simultaneous requests (issue 2): the database, not the order requests happen to run in, decides.
// No timing is asserted: only what every caller and a later reader see.

forEachBackend("concurrency", (ctx) => {
  test("20 simultaneous creates of one group name: exactly one 201 and nineteen 409s naming it", async () => {
    const { dev } = await ctx.tenant();
    const api = ctx.client(dev.apiKey);
    const base = `Launch ${randomBytes(4).toString("hex")}`;
    // The same name as the uniqueness rule sees it: spacing and case differ.
    const spellings = [base, base.toLowerCase(), `  ${base.toUpperCase()} `, `\t${base}`];
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        api.post("/v1/notification-groups", { name: spellings[i % spellings.length] }),
      ),
    );
    const statuses = responses.map((r) => r.statusCode);
    assert.equal(statuses.filter((s) => s === 201).length, 1, `statuses: ${statuses.join(",")}`);
    assert.equal(statuses.filter((s) => s === 409).length, 19, `statuses: ${statuses.join(",")}`);
    const winner = responses.find((r) => r.statusCode === 201)?.json().data;
    for (const res of responses.filter((r) => r.statusCode === 409)) {
      // The 409 names the existing group.
      assertErrorBody(res, 409, { path: "/v1/notification-groups", message: new RegExp(winner._id) });
    }
    const list = await api.get("/v1/notification-groups");
    const same = list
      .json()
      .data.filter((g: { name: string }) => g.name.toLowerCase() === base.toLowerCase());
    assert.deepEqual(same, [winner], "exactly one group holds the name, the one the 201 returned");
  });

  test("simultaneous creates of different names all succeed", async () => {
    const { dev } = await ctx.tenant();
    const api = ctx.client(dev.apiKey);
    const names = Array.from({ length: 20 }, (_, i) => `Parallel ${i} ${randomBytes(2).toString("hex")}`);
    const responses = await Promise.all(names.map((name) => api.post("/v1/notification-groups", { name })));
    assert.deepEqual(
      responses.map((r) => r.statusCode),
      names.map(() => 201),
    );
    const listed = new Set(
      (await api.get("/v1/notification-groups")).json().data.map((g: { name: string }) => g.name),
    );
    for (const name of names) assert.ok(listed.has(name), name);
  });

  const newWorkflow = (apiKey: string, groupId: string) =>
    createWorkflow(ctx, apiKey, groupId, {
      steps: [{ template: { type: "in_app", content: "Hello {{name}}" } }],
    }) as Promise<{ _id: string; active: boolean; updatedAt: string }>;

  test("50 simultaneous status PUTs: all 200, each answer the row its own write left, the end state the last write's", async () => {
    const { dev } = await ctx.tenant();
    const api = ctx.client(dev.apiKey);
    const workflow = await newWorkflow(dev.apiKey, dev.generalGroupId);
    // Random, but with both values present so the race is real.
    const wanted = Array.from({ length: 50 }, (_, i) => (i < 2 ? i === 0 : Math.random() < 0.5));
    const history = await recordStatusWrites(workflow._id);
    let responses: LightMyRequestResponse[];
    let applied: StatusRow[];
    try {
      responses = await Promise.all(
        wanted.map((active, i) =>
          api.put(`/v1/${i % 2 ? "notification-templates" : "workflows"}/${workflow._id}/status`, { active }),
        ),
      );
      applied = await history.rows();
    } finally {
      await history.stop();
    }
    responses.forEach((res, i) => {
      assert.equal(res.statusCode, 200, res.body);
      const data = res.json().data;
      // Each answer is the workflow as that request left it.
      assert.equal(data.active, wanted[i], `response ${i} reports its own change`);
      assert.equal(data.draft, !data.active);
      assert.equal(data._id, workflow._id);
    });
    // The database's own record of the writes, in the order it applied them: one per request, and
    // the answers are exactly the rows those writes left (none made up, none reporting another's).
    assert.equal(applied.length, wanted.length, "every request wrote once");
    const states = (rows: StatusRow[]) => rows.map((r) => `${r.active}/${r.draft}/${r.updatedAt}`).sort();
    assert.deepEqual(
      states(responses.map((r) => toStatusRow(r.json().data))),
      states(applied),
      "the answers are the rows the writes left",
    );
    // In that order, a write asking for the state the row already had changed nothing, not even
    // updatedAt, whatever was running beside it.
    let previous = toStatusRow(workflow);
    for (const [n, row] of applied.entries()) {
      assert.equal(row.draft, !row.active, `write ${n}: active and draft agree`);
      if (row.active === previous.active)
        assert.equal(
          row.updatedAt,
          previous.updatedAt,
          `write ${n} asked for the state the row had, yet moved updatedAt`,
        );
      previous = row;
    }
    // The stored state is the one the last applied write asked for and reported.
    const read = (await api.get(`/v1/workflows/${workflow._id}`)).json().data;
    assert.equal(read.draft, !read.active, "active and draft agree");
    assert.deepEqual(toStatusRow(read), applied.at(-1), "the stored state is the last write's");
    const latest = responses
      .map((r) => r.json().data)
      .filter((d) => d.updatedAt === read.updatedAt && d.active === read.active);
    assert.ok(latest.length > 0, "the stored state is one a request reported having written");
  });

  test("50 simultaneous PUTs asking for the same state leave exactly that state", async () => {
    const { dev } = await ctx.tenant();
    const api = ctx.client(dev.apiKey);
    const workflow = await newWorkflow(dev.apiKey, dev.generalGroupId);
    const responses = await Promise.all(
      Array.from({ length: 50 }, () => api.put(`/v1/workflows/${workflow._id}/status`, { active: true })),
    );
    assert.deepEqual(
      responses.map((r) => r.statusCode),
      responses.map(() => 200),
    );
    // The first one changed it; the rest were no-ops and left updatedAt as the first set it.
    const updatedAts = new Set(responses.map((r) => r.json().data.updatedAt));
    assert.equal(updatedAts.size, 1, `one change, then no-ops: ${[...updatedAts].join(", ")}`);
    const read = (await api.get(`/v1/workflows/${workflow._id}`)).json().data;
    assert.equal(read.active, true);
    assert.equal(read.draft, false);
    assert.equal(read.updatedAt, [...updatedAts][0]);
  });

  // 20 simultaneous PUTs from another environment: the shared cases of test/auth-and-tenancy.test.ts
  // send theirs all at once.

  interface StatusRow {
    active: boolean;
    draft: boolean;
    /** Epoch ms, so both backends' timestamps compare alike. */
    updatedAt: number;
  }

  function toStatusRow(row: {
    active: boolean | number;
    draft?: boolean | number;
    updatedAt?: string | Date;
    updated_at?: string | Date;
  }) {
    const active = readBool(row.active);
    return {
      active,
      draft: row.draft === undefined ? !active : readBool(row.draft),
      updatedAt: Date.parse(readTimestamp(row.updatedAt ?? row.updated_at)),
    };
  }

  /**
   * Records, with a trigger in the suite's own database, every write to one workflow's row in the
   * order the database applies them (SQLite's one writer; PostgreSQL's row lock, under which the
   * sequence is drawn), which no answer can show.
   */
  async function recordStatusWrites(workflowId: string) {
    const db = ctx.store.db;
    if (ctx.backend === "sqlite") {
      await sql`create table status_writes (seq integer primary key autoincrement,
        active integer not null, draft integer not null, updated_at text not null)`.execute(db);
      await sql`create trigger record_status_writes after update on workflows when new.id = ${sql.lit(workflowId)}
        begin insert into status_writes (active, draft, updated_at) values (new.active, new.draft, new.updated_at); end`.execute(
        db,
      );
    } else {
      await sql`create table status_writes (seq bigserial primary key,
        active boolean not null, draft boolean not null, updated_at timestamptz not null)`.execute(db);
      await sql`create function record_status_write() returns trigger language plpgsql as $$
        begin insert into status_writes (active, draft, updated_at) values (new.active, new.draft, new.updated_at);
        return null; end $$`.execute(db);
      await sql`create trigger record_status_writes after update on workflows for each row
        when (new.id = ${sql.lit(workflowId)}) execute function record_status_write()`.execute(db);
    }
    return {
      async rows(): Promise<StatusRow[]> {
        const { rows } = await sql<{
          active: boolean | number;
          draft: boolean | number;
          updated_at: string | Date;
        }>`select active, draft, updated_at from status_writes order by seq`.execute(db);
        return rows.map(toStatusRow);
      },
      async stop() {
        await sql`drop trigger record_status_writes${ctx.backend === "postgres" ? sql` on workflows` : sql``}`.execute(
          db,
        );
        await sql`drop table status_writes`.execute(db);
        if (ctx.backend === "postgres") await sql`drop function record_status_write()`.execute(db);
      },
    };
  }
});
