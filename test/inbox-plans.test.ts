// The inbox's feed and counts read one subscriber's rows of `messages_inbox` (migration 0011), on
// both backends: the plans of the very statements the repository runs, over a table where that
// subscriber's messages are a few among many, with the filters the bell uses.
import assert from "node:assert/strict";
import { test } from "node:test";
import { CompiledQuery, sql } from "kysely";
import { tagSetId } from "../src/engine/message-repository.ts";
import type { NotificationFilter } from "../src/inbox/domain.ts";
import {
  type CountStatement,
  countInboxQueries,
  deleteInboxWhere,
  inboxDeletion,
  inboxFlagsUpdate,
  inboxPageQuery,
  markMessages,
  markMessagesUpdate,
  messagesToDelete,
  setInboxFlagsWhere,
} from "../src/inbox/repository.ts";
import { forEachBackend } from "./harness.ts";

const SUBSCRIBERS = 40;
const PER_SUBSCRIBER = 100;

forEachBackend("the inbox's statements use messages_inbox", (ctx) => {
  // The table both tests read: SUBSCRIBERS × PER_SUBSCRIBER messages, written once.
  let seeded: Promise<void> | undefined;
  const seed = () => {
    seeded ??= writeMessages();
    return seeded;
  };
  async function writeMessages(): Promise<void> {
    const { db } = ctx.store;
    const severities = ["high", "medium", "low", "none"];
    // The lists of tags, kept once for the environment as the engine keeps them (migration 0016).
    const tagLists = [0, 1, 2].map((k) => JSON.stringify(["a", `t${k}`]));
    await db
      .insertInto("message_tag_sets")
      .values(tagLists.map((tags) => ({ environment_id: "env", id: tagSetId(tags), tags })))
      .execute();
    const rows = [];
    for (let s = 0; s < SUBSCRIBERS; s++) {
      for (let m = 0; m < PER_SUBSCRIBER; m++) {
        const at = new Date(Date.UTC(2026, 0, 1) + (s * PER_SUBSCRIBER + m) * 1000).toISOString();
        rows.push({
          id: `${String(s).padStart(4, "0")}${String(m).padStart(20, "0")}`,
          organization_id: "org",
          environment_id: "env",
          notification_id: `n${s}-${m}`,
          job_id: `j${s}-${m}`,
          workflow_id: "wf",
          template_identifier: "wf",
          subscriber_ref: `subscriber-${s}`,
          subscriber_id: `s${s}`,
          transaction_id: `t${s}-${m}`,
          channel: m % 5 === 0 ? "email" : "in_app",
          content: "x",
          subject: "",
          cta: "{}",
          payload: "{}",
          provider_id: "",
          provider_message_id: "",
          status: "sent",
          seen: m % 2 === 0,
          read: m % 3 === 0,
          archived: m % 7 === 0,
          snoozed_until: m % 11 === 0 ? at : null,
          severity: severities[m % 4] as string,
          tags: tagLists[m % 3] as string,
          tag_set: tagSetId(tagLists[m % 3] as string),
          data: JSON.stringify({ k: m % 4 }),
          created_at: at,
          updated_at: at,
        });
      }
    }
    for (let i = 0; i < rows.length; i += 500)
      await db
        .insertInto("messages")
        .values(rows.slice(i, i + 500))
        .execute();
    if (ctx.backend === "postgres") await sql`analyze messages`.execute(db);
  }
  async function plan(query: { compile(): CompiledQuery }): Promise<string> {
    const compiled = query.compile();
    const prefix = ctx.backend === "sqlite" ? "explain query plan " : "explain (costs off) ";
    const result = await ctx.store.db.executeQuery<Record<string, unknown>>(
      CompiledQuery.raw(prefix + compiled.sql, [...compiled.parameters]),
    );
    return result.rows.map((r) => String(r.detail ?? r["QUERY PLAN"])).join("\n");
  }

  test("the feed and the counts of one subscriber are read from its range of the index", async () => {
    await seed();
    const { db } = ctx.store;
    const sqlite = ctx.backend === "sqlite";

    const bell: NotificationFilter = { read: false, archived: false };
    const filters: NotificationFilter[] = [
      {},
      bell,
      { seen: false },
      { archived: true },
      { snoozed: true },
      { severity: ["high", "medium"], read: false },
      { tags: [["t1", "t2"]], data: [{ path: ["k"], groups: [[1, 2]] }] },
      { createdGte: Date.UTC(2026, 0, 1), createdLte: Date.UTC(2026, 0, 2) },
    ];
    const owner = { environmentId: "env", subscriberRef: "subscriber-7" };
    const counts = (list: NotificationFilter[]) => countInboxQueries(db, owner, list);
    for (const filter of filters) {
      for (const [what, query] of [
        ...counts([filter]).map((statement) => ["count", statement] as const),
        ["page", inboxPageQuery(db, owner, filter, { limit: 10, offset: 0 })] as const,
      ]) {
        const text = await plan(query);
        const name = `${what} ${JSON.stringify(filter)}:\n${text}`;
        assert.match(text, /messages_inbox/, name);
        assert.doesNotMatch(text, /Seq Scan on messages|SCAN messages\b(?! USING)/, name);
        if (what === "page" && sqlite) {
          // The index is read in the feed's order: no sort of the subscriber's rows. (PostgreSQL
          // may sort the few rows a selective filter leaves, when its estimate says that is cheaper.)
          assert.doesNotMatch(text, /TEMP B-TREE FOR ORDER BY|Sort\b/, name);
        }
      }
    }
    // Every filter at once: two statements, the index's (the subscriber's range read once for all
    // the filters it decides) and the data filter's.
    const all = counts(filters);
    assert.equal(all.length, 2);
    for (const statement of all) {
      const text = await plan(statement);
      assert.match(text, /messages_inbox/, text);
      assert.doesNotMatch(text, /Seq Scan on messages|SCAN messages\b(?! USING)/, text);
    }
    // The flags and the tags need no table row at all: every column they read is in the index.
    // (On PostgreSQL the index-only scan depends on the visibility map, which vacuum sets only when
    // no older transaction runs, and other test files share the server: the bench's plans show it.)
    const inIndex = counts([bell, { tags: [["t1"], ["a", "b"]], read: false }]);
    assert.equal(inIndex.length, 1);
    if (sqlite) {
      const text = await plan(inIndex[0] as CountStatement);
      assert.match(text, /COVERING INDEX messages_inbox/, text);
    }
  });

  test("a list of ids is found by the primary key, its subscriber or environment only checked", async () => {
    await seed();
    const { db } = ctx.store;
    const owner = { environmentId: "env", subscriberRef: "subscriber-7" };
    // In-app messages of subscriber 7 (m % 5 !== 0), and two of subscriber 8's.
    const mine = [1, 2, 3, 4, 6, 7, 8, 9, 11, 12].map((m) => `0007${String(m).padStart(20, "0")}`);
    const theirs = [1, 2].map((m) => `0008${String(m).padStart(20, "0")}`);
    const ids = [...mine, ...theirs];
    const now = new Date(Date.UTC(2026, 1, 1)).toISOString();
    const statements = [
      ["mark", markMessagesUpdate(db, owner.subscriberRef, ids, { seen: true }, now)],
      [
        "seen",
        inboxFlagsUpdate(
          db,
          owner,
          { filter: {}, ids, anySnooze: true, differs: "seen" },
          { seen: true },
          now,
        ),
      ],
      [
        "seen, with tags",
        inboxFlagsUpdate(
          db,
          owner,
          { filter: { tags: [["t1"]] }, ids, anySnooze: true, differs: "seen" },
          { seen: true },
          now,
        ),
      ],
      ["inbox delete", inboxDeletion(db, owner, { filter: {}, ids })],
      [
        "v1 delete",
        messagesToDelete(db, owner.environmentId, {
          subscriberRef: owner.subscriberRef,
          channel: "in_app",
          ids,
        }),
      ],
      ["v1 delete, environment only", messagesToDelete(db, owner.environmentId, { ids })],
    ] as const;
    for (const [name, statement] of statements) {
      const text = await plan(statement);
      assert.match(
        text,
        ctx.backend === "sqlite" ? /sqlite_autoindex_messages_1 \(id=\?\)/ : /messages_pkey/,
        `${name}:\n${text}`,
      );
      assert.doesNotMatch(text, /messages_inbox|messages_environment/, `${name}:\n${text}`);
    }
    // And the check still holds: another subscriber's ids change nothing.
    const marked = await markMessages(db, owner.subscriberRef, ids, { read: true }, now);
    assert.deepEqual(marked.map((m) => m.id).sort(), [...mine].sort());
    const seen = await setInboxFlagsWhere(
      db,
      { ...owner, subscriberRef: "subscriber-8" },
      { filter: {}, ids, anySnooze: true, differs: "seen" },
      { seen: true },
      now,
    );
    assert.equal(seen, 1, "of subscriber 8's two, message 1 was not seen yet; subscriber 7's are not theirs");
    assert.equal(await deleteInboxWhere(db, owner, { filter: {}, ids }), mine.length);
  });
});
