import assert from "node:assert/strict";
import { test } from "node:test";
import { CompiledQuery, sql } from "kysely";
import { forEachBackend } from "../../test/harness.ts";
import { systemClock } from "../clock.ts";
import { pageMembersQuery } from "./repository.ts";
import { FAN_OUT_PAGE_SIZE, findTopic, pageTopicSubscribers } from "./service.ts";

// Forty pages: enough for the cursor to cross many page boundaries and for the planners to
// choose an ordered index scan; how fast a large fan-out pages is the bench's to measure.
const MEMBERS = 20_000;

forEachBackend("a topic's subscribers, paged for a fan-out", (ctx) => {
  test(`${MEMBERS.toLocaleString("en")} subscribers come in pages of ${FAN_OUT_PAGE_SIZE}, each exactly once`, async () => {
    const { dev, organizationId } = await ctx.tenant();
    const api = ctx.client(dev.apiKey);
    assert.equal((await api.post("/v1/topics", { key: "everyone", name: "Everyone" })).statusCode, 201);
    const tenant = { organizationId, environmentId: dev.environmentId, actorId: "" };
    const deps = { db: ctx.store.db, clock: systemClock };
    const topic = await findTopic(deps, tenant, "everyone");
    assert.ok(topic);
    // Seeded in SQL, as a bulk import would leave them: subscribers, then their memberships.
    const now = new Date().toISOString();
    const db = ctx.store.db;
    if (ctx.backend === "sqlite") {
      await sql`with recursive seq(n) as (select 1 union all select n + 1 from seq where n < ${MEMBERS})
        insert into subscribers (id, organization_id, environment_id, subscriber_id, created_at, updated_at)
        select printf('%024x', n), ${organizationId}, ${dev.environmentId}, 'member-' || n, ${now}, ${now} from seq`.execute(
        db,
      );
    } else {
      await sql`insert into subscribers (id, organization_id, environment_id, subscriber_id, created_at, updated_at)
        select lpad(to_hex(n), 24, '0'), ${organizationId}, ${dev.environmentId}, 'member-' || n, ${now}::timestamptz, ${now}::timestamptz
        from generate_series(1, ${MEMBERS}::int) as n`.execute(db);
    }
    // Each membership a subscription with Novu's default identifier (its id may be any unique text).
    await sql`insert into topic_subscribers (topic_id, subscriber_ref, environment_id, subscriber_id, created_at, id, identifier)
      select ${topic.id}, id, environment_id, subscriber_id, created_at, id, 'tk_everyone:si_' || subscriber_id
      from subscribers where environment_id = ${dev.environmentId}`.execute(db);

    const seen = new Set<string>();
    let after = "";
    let pages = 0;
    for (;;) {
      const page = await pageTopicSubscribers(deps, tenant, topic.id, { after });
      pages++;
      for (const member of page.members) seen.add(member.subscriberId);
      assert.ok(page.members.length <= FAN_OUT_PAGE_SIZE);
      if (page.next === "") break;
      assert.ok(page.next > after, "the cursor moves forward");
      after = page.next;
    }
    assert.equal(seen.size, MEMBERS);
    assert.ok(
      pages >= MEMBERS / FAN_OUT_PAGE_SIZE && pages <= MEMBERS / FAN_OUT_PAGE_SIZE + 1,
      `${pages} pages`,
    );
    assert.ok(seen.has("member-1") && seen.has(`member-${MEMBERS}`));

    // Each page is one range of the membership's primary key, with no sort: checked on the statement
    // itself, against the seeded topic (statistics up to date).
    const query = pageMembersQuery(db, topic.id, "", FAN_OUT_PAGE_SIZE).compile();
    if (ctx.backend === "sqlite") {
      const plan = await db.executeQuery<{ detail: string }>(
        CompiledQuery.raw(`explain query plan ${query.sql}`, [...query.parameters]),
      );
      const text = plan.rows.map((r) => r.detail).join("\n");
      assert.match(
        text,
        /USING INDEX sqlite_autoindex_topic_subscribers_1 \(topic_id=\? AND subscriber_ref>\?\)/,
      );
      assert.doesNotMatch(text, /TEMP B-TREE/);
    } else {
      await sql`analyze topic_subscribers`.execute(db);
      const plan = await db.executeQuery<{ "QUERY PLAN": string }>(
        CompiledQuery.raw(`explain ${query.sql}`, [...query.parameters]),
      );
      const text = plan.rows.map((r) => r["QUERY PLAN"]).join("\n");
      // With one topic holding every row, the planner may walk the subscriber index instead (the
      // topic filter then drops nothing); either way an ordered index scan stopped by the LIMIT.
      assert.match(text, /Limit[\s\S]*Index (Only )?Scan using topic_subscribers_(pk|subscriber)/, text);
      assert.doesNotMatch(text, /Sort/, text);
    }

    // Another environment cannot walk it.
    const other = await ctx.tenant();
    const foreign = {
      organizationId: other.organizationId,
      environmentId: other.dev.environmentId,
      actorId: "",
    };
    assert.deepEqual(await pageTopicSubscribers(deps, foreign, topic.id), { members: [], next: "" });
  });
});
