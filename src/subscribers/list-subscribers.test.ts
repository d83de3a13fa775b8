import assert from "node:assert/strict";
import { test } from "node:test";
import { assertErrorBody } from "../../test/error-body.ts";
import { createSubscriber } from "../../test/factories.ts";
import { forEachBackend } from "../../test/harness.ts";

forEachBackend("GET /v1/subscribers", (ctx) => {
  test("pages through the environment's subscribers, oldest first, with the total and hasMore", async () => {
    const { dev, prod } = await ctx.tenant();
    const made = [];
    for (let i = 0; i < 5; i++) made.push(await createSubscriber(ctx, dev.apiKey, { subscriberId: `s${i}` }));
    await createSubscriber(ctx, prod.apiKey, { subscriberId: "elsewhere" });
    const api = ctx.client(dev.apiKey);
    const pages = [];
    for (let page = 0; page < 3; page++) {
      const res = await api.get(`/v1/subscribers?page=${page}&limit=2`);
      assert.equal(res.statusCode, 200, res.body);
      pages.push(res.json());
    }
    assert.deepEqual(
      pages.map((p) => [p.page, p.pageSize, p.totalCount, p.hasMore, p.data.length]),
      [
        [0, 2, 5, true, 2],
        [1, 2, 5, true, 2],
        [2, 2, 5, false, 1],
      ],
    );
    const ids = pages.flatMap((p) => p.data.map((s: { _id: string }) => s._id));
    assert.deepEqual([...ids].sort(), made.map((s) => s._id).sort());
    assert.deepEqual(
      pages[0].data[0],
      made.find((s) => s._id === ids[0]),
    );
    const created = pages.flatMap((p) => p.data.map((s: { createdAt: string }) => s.createdAt));
    assert.deepEqual(created, [...created].sort(), "oldest first");
  });

  test("search narrows the list to subscribers whose id, names, email or phone contain the text, in any case", async () => {
    const { dev, prod } = await ctx.tenant();
    const make = (subscriberId: string, fields: Record<string, string> = {}) =>
      createSubscriber(ctx, dev.apiKey, { subscriberId, ...fields });
    await make("ada-1", { firstName: "Ada", lastName: "Lovelace", email: "ada@example.com" });
    await make("grace-2", { firstName: "Grace", lastName: "Hopper", phone: "+15550100" });
    await make("alan-3", { firstName: "Alan", email: "turing@EXAMPLE.org" });
    await make("pct%_x", { firstName: "Literal" });
    await make("pctAAx", { firstName: "Wildcard bait" });
    await make("back\\slash", { firstName: "Escaped" });
    await make("emile-4", { firstName: "Émile", lastName: "Zola" });
    await make("sven-5", { firstName: "Sven", lastName: "ÅSTRÖM" });
    await createSubscriber(ctx, prod.apiKey, { subscriberId: "ada-elsewhere", firstName: "Ada" });
    const api = ctx.client(dev.apiKey);
    const found = async (search: string, query = "") => {
      const res = await api.get(`/v1/subscribers?search=${encodeURIComponent(search)}${query}`);
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      return {
        ids: body.data.map((s: { subscriberId: string }) => s.subscriberId).sort(),
        total: body.totalCount,
      };
    };
    assert.deepEqual((await found("ada")).ids, ["ada-1"], "another environment's Ada is not listed");
    assert.deepEqual((await found("LOVE")).ids, ["ada-1"]);
    assert.deepEqual((await found("example")).ids, ["ada-1", "alan-3"]);
    assert.deepEqual((await found("5550")).ids, ["grace-2"]);
    assert.deepEqual((await found("hopper")).ids, ["grace-2"]);
    assert.deepEqual((await found("%_")).ids, ["pct%_x"], "% and _ are matched literally");
    assert.deepEqual((await found("_")).ids, ["pct%_x"]);
    assert.deepEqual((await found("\\")).ids, ["back\\slash"]);
    assert.deepEqual((await found("nobody")).ids, []);
    // Accented letters fold on both backends, whichever case the search and the profile use.
    assert.deepEqual((await found("émile")).ids, ["emile-4"]);
    assert.deepEqual((await found("ÉMILE")).ids, ["emile-4"]);
    assert.deepEqual((await found("åström")).ids, ["sven-5"]);
    assert.deepEqual((await found("ström")).ids, ["sven-5"]);
    // Paging applies to the matches, and the total counts them.
    const page = await found("a", "&limit=2&page=0");
    assert.equal(page.ids.length, 2);
    assert.ok(page.total >= 4, `total ${page.total}`);
    assertErrorBody(await api.get(`/v1/subscribers?search=${"x".repeat(201)}`), 400, {
      path: "/v1/subscribers",
      fields: ["search"],
    });
  });

  test("defaults to page 0 of 10; an empty environment is an empty page", async () => {
    const { dev } = await ctx.tenant();
    const res = await ctx.client(dev.apiKey).get("/v1/subscribers");
    assert.deepEqual(res.json(), { page: 0, pageSize: 10, totalCount: 0, hasMore: false, data: [] });
  });

  for (const [query, field] of [
    ["limit=101", "limit"],
    ["limit=0", "limit"],
    ["limit=ten", "limit"],
    ["page=-1", "page"],
  ] as const) {
    test(`?${query} → 400 naming ${field}`, async () => {
      const { dev } = await ctx.tenant();
      const res = await ctx.client(dev.apiKey).get(`/v1/subscribers?${query}`);
      assertErrorBody(res, 400, { path: "/v1/subscribers", fields: [field] });
    });
  }
});
