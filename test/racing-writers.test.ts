// Proof 6 (issue 4): racing writers. Simultaneous writes to one workflow and to one group name: no
// write is lost, no duplicate is created, nothing answers 5xx, on each backend. On PostgreSQL the
// writes go through two apps with a connection pool each, as two processes scaled out would. SQLite
// is one process's database (its one writer serialises the rest), so there both apps share one
// store: two stores in one process would make better-sqlite3's synchronous busy wait block the very
// event loop that has to finish the other store's transaction.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { LightMyRequestResponse } from "fastify";
import type { App } from "../src/http/types.ts";
import { forEachBackend, type TestTenant } from "./harness.ts";
import { appWith } from "./ops-helpers.ts";

const ROUNDS = 15;

forEachBackend("racing writers", (ctx) => {
  const backend = ctx.backend;
  const apps: App[] = [];
  let seed: TestTenant["dev"];
  const send = (i: number, method: "GET" | "POST" | "PUT" | "PATCH", url: string, body?: unknown) =>
    (apps[i % apps.length] as App).inject({
      method,
      url,
      headers: {
        authorization: `ApiKey ${seed.apiKey}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
  const no5xx = (responses: LightMyRequestResponse[]) => {
    for (const r of responses) assert.ok(r.statusCode < 500, `${r.statusCode}: ${r.body}`);
  };

  before(async () => {
    seed = (await ctx.tenant()).dev;
    const stores = backend === "postgres" ? [ctx.store, await ctx.connect()] : [ctx.store, ctx.store];
    for (const store of stores) apps.push((await appWith(store, { RATE_LIMIT_RPS: "0" })).app);
  });
  after(async () => {
    for (const app of apps) await app.close();
  });

  test(`${ROUNDS} rounds of simultaneous status, description and tag writes to one workflow: none lost`, async () => {
    const created = await send(0, "POST", "/v1/workflows", {
      name: "Raced workflow",
      notificationGroupId: seed.generalGroupId,
      steps: [{ template: { type: "in_app", content: "Hi" } }],
    });
    assert.equal(created.statusCode, 201, created.body);
    const id: string = created.json().data._id;
    let writes = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const active = round % 2 === 0;
      const description = `round ${round}`;
      const tags = [`t${round}`];
      // Each field written twice (once through each server), all at once, with the other fields.
      const responses = await Promise.all([
        send(0, "PUT", `/v1/workflows/${id}/status`, { active }),
        send(1, "PUT", `/v1/notification-templates/${id}/status`, { active }),
        send(1, "PUT", `/v1/workflows/${id}`, { description }),
        send(0, "PUT", `/v1/workflows/${id}`, { description }),
        send(0, "PUT", `/v1/workflows/${id}`, { tags }),
        send(1, "PUT", `/v1/workflows/${id}`, { tags }),
      ]);
      writes += responses.length;
      no5xx(responses);
      for (const r of responses) assert.equal(r.statusCode, 200, r.body);
      const after = (await send(round, "GET", `/v1/workflows/${id}`)).json().data;
      assert.equal(after.active, active, `round ${round}: the status write was lost`);
      assert.equal(after.draft, !active);
      assert.equal(after.description, description, `round ${round}: the description write was lost`);
      assert.deepEqual(after.tags, tags, `round ${round}: the tags write was lost`);
    }
    console.log(
      `[${backend}] racing writers: ${writes} simultaneous writes to one workflow over ${ROUNDS} rounds, 0 lost, 0 5xx`,
    );
  });

  test("a status change is never lost to updates of other fields racing it, at staggered moments", async () => {
    // All-at-once writes rarely interleave a read-modify-write with a status change; these land
    // a few milliseconds apart in random order, which is where an update that re-writes a stale
    // `active` would show. The only status writer in a round asks for `active: true`.
    const STAGGERED_ROUNDS = 60;
    const pause = () => new Promise((resolve) => setTimeout(resolve, Math.random() * 4));
    for (let round = 0; round < STAGGERED_ROUNDS; round++) {
      const created = await send(round, "POST", "/v1/workflows", {
        name: `Staggered ${round}`,
        notificationGroupId: seed.generalGroupId,
      });
      assert.equal(created.statusCode, 201, created.body);
      const id: string = created.json().data._id;
      const responses = await Promise.all([
        send(round, "PUT", `/v1/workflows/${id}`, { description: "first" }),
        pause().then(() => send(round + 1, "PUT", `/v1/workflows/${id}/status`, { active: true })),
        ...[0, 1, 2].map((j) =>
          pause().then(() => send(round + j, "PUT", `/v1/workflows/${id}`, { description: `u${j}` })),
        ),
      ]);
      no5xx(responses);
      for (const r of responses) assert.equal(r.statusCode, 200, r.body);
      const after = (await send(round, "GET", `/v1/workflows/${id}`)).json().data;
      assert.equal(after.active, true, `round ${round}: the acknowledged status change was lost`);
      assert.equal(after.draft, false);
    }
  });

  test("20 simultaneous creates of one group name: one 201, nineteen 409, one group", async () => {
    const name = `Raced group ${backend}`;
    const spellings = [name, name.toUpperCase(), `  ${name}  `, name.toLowerCase()];
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        send(i, "POST", "/v1/notification-groups", { name: spellings[i % 4] }),
      ),
    );
    no5xx(responses);
    const statuses = responses.map((r) => r.statusCode).sort();
    assert.deepEqual(statuses, [201, ...Array(19).fill(409)], statuses.join(","));
    const list = (await send(0, "GET", "/v1/notification-groups")).json().data as { name: string }[];
    assert.equal(
      list.filter((g) => g.name.trim().toLowerCase() === name.toLowerCase()).length,
      1,
      "no duplicate",
    );
  });

  test("simultaneous renames of different groups to one name: one wins, the rest 409, no duplicate", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      const r = await send(0, "POST", "/v1/notification-groups", { name: `Rename source ${backend} ${i}` });
      assert.equal(r.statusCode, 201, r.body);
      ids.push(r.json().data._id);
    }
    const target = `Rename target ${backend}`;
    const responses = await Promise.all([
      ...ids.map((id, i) => send(i, "PATCH", `/v1/notification-groups/${id}`, { name: target })),
      send(1, "POST", "/v1/notification-groups", { name: target.toUpperCase() }),
    ]);
    no5xx(responses);
    const wins = responses.filter((r) => r.statusCode === 200 || r.statusCode === 201);
    assert.equal(wins.length, 1, responses.map((r) => r.statusCode).join(","));
    for (const r of responses) if (!wins.includes(r)) assert.equal(r.statusCode, 409, r.body);
    const list = (await send(0, "GET", "/v1/notification-groups")).json().data as { name: string }[];
    assert.equal(list.filter((g) => g.name.toLowerCase() === target.toLowerCase()).length, 1);
  });

  test("simultaneous creates of one workflow name: every one created, trigger identifiers all distinct", async () => {
    const responses = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        send(i, "POST", "/v1/workflows", {
          name: "Same name",
          notificationGroupId: seed.generalGroupId,
          steps: [{ template: { type: "in_app", content: "Hi" } }],
        }),
      ),
    );
    no5xx(responses);
    for (const r of responses) assert.equal(r.statusCode, 201, r.body);
    const identifiers = responses.map((r) => r.json().data.triggers[0].identifier as string);
    assert.equal(new Set(identifiers).size, identifiers.length, identifiers.join(","));
  });
});
