import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";
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
      const error = res.json();
      assert.equal(error.statusCode, 409);
      assert.equal(error.error, "Conflict");
      assert.ok(error.message.includes(winner._id), `the 409 names the existing group: ${error.message}`);
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

  async function newWorkflow(apiKey: string, groupId: string) {
    const res = await ctx.client(apiKey).post("/v1/workflows", {
      name: `Concurrent ${randomBytes(4).toString("hex")}`,
      notificationGroupId: groupId,
      steps: [{ template: { type: "in_app", content: "Hello {{name}}" } }],
    });
    assert.equal(res.statusCode, 201, res.body);
    return res.json().data as { _id: string; updatedAt: string };
  }

  test("50 simultaneous status PUTs: all 200, each answer consistent, the end state one that was asked for", async () => {
    const { dev } = await ctx.tenant();
    const api = ctx.client(dev.apiKey);
    const workflow = await newWorkflow(dev.apiKey, dev.generalGroupId);
    // Random, but with both values present so the race is real.
    const wanted = Array.from({ length: 50 }, (_, i) => (i < 2 ? i === 0 : Math.random() < 0.5));
    const responses = await Promise.all(
      wanted.map((active, i) =>
        api.put(`/v1/${i % 2 ? "notification-templates" : "workflows"}/${workflow._id}/status`, { active }),
      ),
    );
    responses.forEach((res, i) => {
      assert.equal(res.statusCode, 200, res.body);
      const data = res.json().data;
      // Each answer is the workflow as that request left it.
      assert.equal(data.active, wanted[i], `response ${i} reports its own change`);
      assert.equal(data.draft, !data.active);
      assert.equal(data._id, workflow._id);
    });
    const read = (await api.get(`/v1/workflows/${workflow._id}`)).json().data;
    assert.ok(wanted.includes(read.active));
    assert.equal(read.draft, !read.active, "active and draft agree");
    // The stored state is the last write: the answer carrying the latest updatedAt agrees with it.
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

  test("simultaneous PUTs on one workflow from another environment change nothing", async () => {
    const { dev, prod } = await ctx.tenant();
    const workflow = await newWorkflow(dev.apiKey, dev.generalGroupId);
    const before = (await ctx.client(dev.apiKey).get(`/v1/workflows/${workflow._id}`)).json();
    const responses = await Promise.all(
      Array.from({ length: 20 }, () =>
        ctx.client(prod.apiKey).put(`/v1/workflows/${workflow._id}/status`, { active: true }),
      ),
    );
    for (const res of responses) assert.equal(res.statusCode, 404, res.body);
    assert.deepEqual((await ctx.client(dev.apiKey).get(`/v1/workflows/${workflow._id}`)).json(), before);
  });
});
