import assert from "node:assert/strict";
import { test } from "node:test";
import { createWorkflow, nextMillisecond } from "../../test/factories.ts";
import { forEachBackend } from "../../test/harness.ts";

forEachBackend("GET /v1/workflows", (ctx) => {
  /** Three workflows created in this order (so newest first is the reverse). */
  async function three(
    apiKey: string,
    groupId: string,
    names = ["Alpha news", "Beta digest", "Gamma alerts"],
  ) {
    const created = [];
    for (const name of names) {
      created.push(await createWorkflow(ctx, apiKey, groupId, { name }));
      await nextMillisecond();
    }
    return created;
  }

  const idsOf = (res: { json(): { data: { _id: string }[] } }) => res.json().data.map((w) => w._id);

  test("an environment without workflows lists an empty first page", async () => {
    const { dev } = await ctx.tenant();
    const res = await ctx.client(dev.apiKey).get("/v1/workflows");
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), { page: 0, pageSize: 10, totalCount: 0, data: [] });
  });

  test("lists the environment's workflows newest first, complete, with their group", async () => {
    const { dev } = await ctx.tenant();
    const [a, b, c] = await three(dev.apiKey, dev.generalGroupId);
    const res = await ctx.client(dev.apiKey).get("/v1/workflows");
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.equal(body.page, 0);
    assert.equal(body.pageSize, 10);
    assert.equal(body.totalCount, 3);
    assert.deepEqual(idsOf(res), [c._id, b._id, a._id]);
    // The same resource as a GET returns, field for field.
    const one = await ctx.client(dev.apiKey).get(`/v1/workflows/${a._id}`);
    assert.deepEqual(body.data[2], one.json().data);
    assert.equal(body.data[0].notificationGroup.name, "General");
  });

  test("pages with page and limit; pageSize is the limit asked for; totalCount counts every page", async () => {
    const { dev } = await ctx.tenant();
    const [a, b, c] = await three(dev.apiKey, dev.generalGroupId);
    const api = ctx.client(dev.apiKey);
    const first = await api.get("/v1/workflows?page=0&limit=2");
    assert.equal(first.statusCode, 200, first.body);
    assert.deepEqual(idsOf(first), [c._id, b._id]);
    assert.equal(first.json().pageSize, 2);
    assert.equal(first.json().totalCount, 3);
    const second = await api.get("/v1/workflows?page=1&limit=2");
    assert.deepEqual(idsOf(second), [a._id]);
    assert.equal(second.json().page, 1);
    const beyond = await api.get("/v1/workflows?page=5&limit=2");
    assert.deepEqual(beyond.json().data, []);
    assert.equal(beyond.json().totalCount, 3);
  });

  test("query keeps workflows whose name or trigger identifier contains it, in any case", async () => {
    const { dev } = await ctx.tenant();
    const [alpha, beta, gamma] = await three(dev.apiKey, dev.generalGroupId);
    const api = ctx.client(dev.apiKey);
    // An identifier that the name does not contain.
    const renamed = await api.put(`/v1/workflows/${gamma._id}`, { identifier: "zeta-special" });
    assert.equal(renamed.statusCode, 200, renamed.body);

    const cases: [string, string[]][] = [
      ["DIGEST", [beta._id]], // name, other case
      ["a new", [alpha._id]], // across a space
      ["zeta-spec", [gamma._id]], // identifier only
      ["SPECIAL", [gamma._id]],
      ["a", [gamma._id, beta._id, alpha._id]], // one character: every name has an "a"
      ["et", [gamma._id, beta._id]], // two characters: "Beta", "zeta"
      ["nothing like it", []],
    ];
    for (const [query, expected] of cases) {
      const res = await api.get(`/v1/workflows?query=${encodeURIComponent(query)}`);
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(idsOf(res), expected, `query ${JSON.stringify(query)}`);
      assert.equal(res.json().totalCount, expected.length, `totalCount for ${JSON.stringify(query)}`);
    }
  });

  test("case folding is Unicode's, not only ASCII's (three characters or more)", async () => {
    const { dev } = await ctx.tenant();
    const school = await createWorkflow(ctx, dev.apiKey, dev.generalGroupId, { name: "École d'été" });
    const res = await ctx.client(dev.apiKey).get(`/v1/workflows?query=${encodeURIComponent("ÉCOLE D'ÉT")}`);
    assert.deepEqual(idsOf(res), [school._id]);
  });

  test("query characters are literal: % _ \\ and quotes match only themselves", async () => {
    const { dev } = await ctx.tenant();
    const odd = await createWorkflow(ctx, dev.apiKey, dev.generalGroupId, {
      name: '100% "off" sale_now \\o/',
    });
    await createWorkflow(ctx, dev.apiKey, dev.generalGroupId, { name: "1000 offers salexnow" });
    const api = ctx.client(dev.apiKey);
    for (const query of ["%", "0%", '"off"', "e_n", "\\o/", '% "o']) {
      const res = await api.get(`/v1/workflows?query=${encodeURIComponent(query)}`);
      assert.deepEqual(idsOf(res), [odd._id], `query ${JSON.stringify(query)}`);
    }
  });

  test("query and paging combine", async () => {
    const { dev } = await ctx.tenant();
    const made = [];
    for (let i = 0; i < 5; i++) {
      made.push(await createWorkflow(ctx, dev.apiKey, dev.generalGroupId, { name: `Receipt ${i}` }));
      await nextMillisecond();
    }
    await createWorkflow(ctx, dev.apiKey, dev.generalGroupId, { name: "Other" });
    const res = await ctx.client(dev.apiKey).get("/v1/workflows?query=receipt&limit=2&page=1");
    assert.equal(res.json().totalCount, 5);
    assert.deepEqual(idsOf(res), [made[2]._id, made[1]._id]);
  });

  test("deleted workflows and other environments' workflows are neither listed nor counted", async () => {
    const { dev, prod } = await ctx.tenant();
    const [a, b] = await three(dev.apiKey, dev.generalGroupId);
    await createWorkflow(ctx, prod.apiKey, prod.generalGroupId, { name: "Alpha in production" });
    const deleted = await ctx.client(dev.apiKey).delete(`/v1/workflows/${a._id}`);
    assert.equal(deleted.statusCode, 200);
    const res = await ctx.client(dev.apiKey).get("/v1/workflows");
    assert.equal(res.json().totalCount, 2);
    assert.ok(!idsOf(res).includes(a._id));
    const search = await ctx.client(dev.apiKey).get("/v1/workflows?query=alpha");
    assert.deepEqual(search.json(), { page: 0, pageSize: 10, totalCount: 0, data: [] });
    const other = await ctx.client(dev.apiKey).get(`/v1/workflows?query=${encodeURIComponent(b.name)}`);
    assert.deepEqual(idsOf(other), [b._id]);
  });

  test("/v1/workflows/variables lists the system variables, each of which a template reads from the engine, not the payload", async () => {
    const { dev } = await ctx.tenant();
    const api = ctx.client(dev.apiKey);
    const res = await api.get("/v1/workflows/variables");
    assert.equal(res.statusCode, 200, res.body);
    const { translations, system } = res.json().data;
    assert.deepEqual(translations, {});
    assert.deepEqual(Object.keys(system).sort(), ["actor", "branding", "step", "subscriber", "tenant"]);
    assert.deepEqual(system.subscriber, {
      firstName: "string",
      lastName: "string",
      email: "string",
      phone: "string",
      avatar: "string",
      locale: "string",
      subscriberId: "string",
    });
    assert.deepEqual(system.step, { digest: "boolean", events: "array", total_count: "number" });
    assert.deepEqual(system.tenant, { name: "string", data: "object" });
    // Every listed variable is the engine's: a template using them all asks the payload for none.
    const uses = Object.entries(system as Record<string, Record<string, string>>).flatMap(([root, fields]) =>
      Object.keys(fields).map((field) => `{{${root}.${field}}}`),
    );
    const workflow = await createWorkflow(ctx, dev.apiKey, dev.generalGroupId, {
      steps: [{ template: { type: "in_app", content: `${uses.join(" ")} {{orderId}}` } }],
    });
    assert.deepEqual(workflow.triggers[0].variables, [{ name: "orderId" }]);
  });

  test("is also served at /v1/notification-templates (what @novu/node calls)", async () => {
    const { dev } = await ctx.tenant();
    const [, , c] = await three(dev.apiKey, dev.generalGroupId);
    const res = await ctx.client(dev.apiKey).get("/v1/notification-templates?page=0&limit=1");
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(idsOf(res), [c._id]);
    assert.equal(res.json().totalCount, 3);
  });

  for (const [label, query, field] of [
    ["limit 0", "limit=0", "limit"],
    ["limit 101", "limit=101", "limit"],
    ["limit not a number", "limit=ten", "limit"],
    ["limit a fraction", "limit=2.5", "limit"],
    ["a negative page", "page=-1", "page"],
    ["a query over 200 characters", `query=${"x".repeat(201)}`, "query"],
    // PostgreSQL cannot take U+0000 in text and SQLite's FTS5 chokes on it: a 400, never a 500.
    ["a NUL in query", "query=abc%00def", "query"],
  ] as const) {
    test(`${label} is a 400 naming the parameter`, async () => {
      const { dev } = await ctx.tenant();
      // Something to search, so the search itself would run if the input got through.
      await createWorkflow(ctx, dev.apiKey, dev.generalGroupId, { name: "abc def" });
      const res = await ctx.client(dev.apiKey).get(`/v1/workflows?${query}`);
      assert.equal(res.statusCode, 400, res.body);
      assert.deepEqual(
        res.json().errors.map((e: { field: string }) => e.field),
        [field],
      );
      assert.match(res.json().message, new RegExp(`^${field} `));
    });
  }
});
