// Proof 4 (issue 4): tenancy as a property. Several organizations, each with two environments and
// keys; fast-check generates sequences of operations, each made with a key picked at random (its
// own environment's, another environment's, another organization's, or a revoked one), against
// resources of every environment. A model says what each answer must be. The property: no key
// ever reads or changes another environment's data (404, and nothing changes), no answer carries
// another environment's ids, and a revoked key is refused (401) on its very next request.
import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import type { LightMyRequestResponse } from "fastify";
import { systemClock } from "../src/clock.ts";
import { createOrganization } from "../src/onboarding/service.ts";
import { revokeApiKey } from "../src/tenancy/repository.ts";
import { createApiKey } from "../src/tenancy/service.ts";
import { forEachBackend, type TestContext } from "./harness.ts";
import { OBJECT_ID_SOURCE } from "./patterns.ts";

const PARENT_ID = new RegExp(`"_parentId":"${OBJECT_ID_SOURCE}"`, "g");
const ENVIRONMENT_ID = new RegExp(`"_environmentId":"(${OBJECT_ID_SOURCE})"`, "g");

const RUNS = Number(process.env.TENANCY_RUNS ?? 40);
const SEED = Number(process.env.TENANCY_SEED ?? Date.now() % 2 ** 31);
const ORGS = 3;

interface Key {
  id: string;
  key: string;
  env: string;
  revoked: boolean;
}
interface Group {
  id: string;
  env: string;
  nameKey: string;
}
interface Workflow {
  id: string;
  env: string;
  identifier: string;
  active: boolean;
  description: string;
  deleted: boolean;
}
interface World {
  envs: string[];
  keys: Key[];
  groups: Group[];
  workflows: Workflow[];
}

const NAMES = ["Alerts", "alerts ", "Billing", "Security", " NEWS", "Welcome email", "Digest"];

type Op =
  | { kind: "createGroup"; key: number; name: string }
  | { kind: "renameGroup"; key: number; group: number; name: string }
  | { kind: "getGroup" | "deleteGroup"; key: number; group: number }
  | { kind: "listGroups" | "listWorkflows"; key: number }
  | { kind: "createWorkflow"; key: number; group: number; name: string }
  | { kind: "getWorkflow"; key: number; workflow: number; byIdentifier: boolean }
  | { kind: "setStatus"; key: number; workflow: number; active: boolean; legacy: boolean }
  | { kind: "describe"; key: number; workflow: number; text: string }
  | { kind: "deleteWorkflow"; key: number; workflow: number }
  | { kind: "revoke"; key: number }
  | { kind: "newKey"; env: number };

const pick = fc.nat({ max: 1000 });
const name = fc.oneof(
  fc.constantFrom(...NAMES),
  fc.string({ minLength: 1, maxLength: 12 }).map((s) => `N ${s}`),
);
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant("createGroup" as const), key: pick, name }),
  fc.record({ kind: fc.constant("renameGroup" as const), key: pick, group: pick, name }),
  fc.record({ kind: fc.constantFrom("getGroup" as const, "deleteGroup" as const), key: pick, group: pick }),
  fc.record({ kind: fc.constantFrom("listGroups" as const, "listWorkflows" as const), key: pick }),
  fc.record({ kind: fc.constant("createWorkflow" as const), key: pick, group: pick, name }),
  fc.record({
    kind: fc.constant("getWorkflow" as const),
    key: pick,
    workflow: pick,
    byIdentifier: fc.boolean(),
  }),
  fc.record({
    kind: fc.constant("setStatus" as const),
    key: pick,
    workflow: pick,
    active: fc.boolean(),
    legacy: fc.boolean(),
  }),
  fc.record({
    kind: fc.constant("describe" as const),
    key: pick,
    workflow: pick,
    text: fc.string({ maxLength: 20 }),
  }),
  fc.record({ kind: fc.constant("deleteWorkflow" as const), key: pick, workflow: pick }),
  fc.record({ kind: fc.constant("revoke" as const), key: pick }),
  fc.record({ kind: fc.constant("newKey" as const), env: pick }),
);

async function newWorld(ctx: TestContext): Promise<World> {
  const world: World = { envs: [], keys: [], groups: [], workflows: [] };
  for (let o = 0; o < ORGS; o++) {
    const org = await createOrganization({ db: ctx.store.db, clock: systemClock }, `Tenancy ${o}`);
    for (const env of org.environments) {
      world.envs.push(env._id);
      const row = await ctx.store.db
        .selectFrom("api_keys")
        .select("id")
        .where("environment_id", "=", env._id)
        .executeTakeFirstOrThrow();
      world.keys.push({ id: row.id, key: env.apiKey, env: env._id, revoked: false });
      const general = await ctx.store.db
        .selectFrom("notification_groups")
        .select("id")
        .where("environment_id", "=", env._id)
        .executeTakeFirstOrThrow();
      world.groups.push({ id: general.id, env: env._id, nameKey: "general" });
    }
  }
  return world;
}

/** Every id of a resource outside `env`, except `allowed` (the id the request itself named). */
function foreignIds(world: World, env: string, allowed?: string): string[] {
  const ids = [
    ...world.envs.filter((e) => e !== env),
    ...world.groups.filter((g) => g.env !== env).map((g) => g.id),
    ...world.workflows.filter((w) => w.env !== env).map((w) => w.id),
  ];
  return ids.filter((id) => id !== allowed);
}

async function run(ctx: TestContext, ops: Op[]) {
  const world = await newWorld(ctx);
  const at = <T>(list: T[], i: number): T | undefined => (list.length ? list[i % list.length] : undefined);
  for (const [step, o] of ops.entries()) {
    if (o.kind === "revoke") {
      const k = at(world.keys, o.key);
      if (k && !k.revoked) {
        assert.ok(await revokeApiKey(ctx.store.db, k.id, new Date().toISOString()));
        k.revoked = true;
      }
      continue;
    }
    if (o.kind === "newKey") {
      const env = at(world.envs, o.env) as string;
      const created = await createApiKey({ db: ctx.store.db, clock: systemClock }, env);
      assert.ok(created);
      world.keys.push({ id: created.id, key: created.apiKey, env, revoked: false });
      continue;
    }
    const k = at(world.keys, o.key) as Key;
    const api = ctx.client(k.key);
    const where = `step ${step} ${JSON.stringify(o)} with a key of ${k.env}${k.revoked ? " (revoked)" : ""}`;
    let res: LightMyRequestResponse;
    let named: string | undefined;
    // What the answer must be when the key is live; a revoked key must get 401 whatever it asks.
    let expect: (res: LightMyRequestResponse) => void;
    switch (o.kind) {
      case "createGroup": {
        res = await api.post("/v1/notification-groups", { name: o.name });
        const nameKey = o.name.trim().toLowerCase();
        const taken = world.groups.some((g) => g.env === k.env && g.nameKey === nameKey);
        expect = (r) => {
          assert.equal(r.statusCode, taken ? 409 : 201, `${where}: ${r.body}`);
          if (r.statusCode === 201) world.groups.push({ id: r.json().data._id, env: k.env, nameKey });
        };
        break;
      }
      case "renameGroup":
      case "getGroup":
      case "deleteGroup": {
        const g = at(world.groups, o.group) as Group;
        named = g.id;
        const url = `/v1/notification-groups/${g.id}`;
        const rename = o.kind === "renameGroup" ? o.name : "";
        res =
          o.kind === "getGroup"
            ? await api.get(url)
            : o.kind === "deleteGroup"
              ? await api.delete(url)
              : await api.patch(url, { name: rename });
        expect = (r) => {
          if (g.env !== k.env) {
            const mentioned = world.groups.filter((x) => r.body.includes(x.id));
            return assert.equal(
              r.statusCode,
              404,
              `${where}: ${r.body}; target ${JSON.stringify(g)}; mentions ${JSON.stringify(mentioned)}`,
            );
          }
          if (o.kind === "getGroup") return assert.equal(r.statusCode, 200, `${where}: ${r.body}`);
          if (o.kind === "deleteGroup") {
            assert.ok([200, 409].includes(r.statusCode), `${where}: ${r.body}`);
            if (r.statusCode === 200) world.groups.splice(world.groups.indexOf(g), 1);
            return;
          }
          const nameKey = rename.trim().toLowerCase();
          const taken = world.groups.some((x) => x !== g && x.env === k.env && x.nameKey === nameKey);
          const same = world.groups.filter((x) => x.nameKey === nameKey);
          assert.equal(
            r.statusCode,
            taken ? 409 : 200,
            `${where}: ${r.body}; groups so named: ${JSON.stringify(same)}; renamed: ${JSON.stringify(g)}`,
          );
          if (r.statusCode === 200) g.nameKey = nameKey;
        };
        break;
      }
      case "listGroups": {
        res = await api.get("/v1/notification-groups");
        expect = (r) => {
          assert.equal(r.statusCode, 200, where);
          const ids = r
            .json()
            .data.map((g: { _id: string }) => g._id)
            .sort();
          const model = world.groups
            .filter((g) => g.env === k.env)
            .map((g) => g.id)
            .sort();
          assert.deepEqual(ids, model, `${where}: exactly the environment's groups`);
        };
        break;
      }
      case "listWorkflows": {
        res = await api.get("/v1/workflows?page=0&limit=100");
        expect = (r) => {
          assert.equal(r.statusCode, 200, where);
          const ids = r
            .json()
            .data.map((w: { _id: string }) => w._id)
            .sort();
          const model = world.workflows
            .filter((w) => w.env === k.env && !w.deleted)
            .map((w) => w.id)
            .sort();
          assert.deepEqual(ids, model, `${where}: exactly the environment's live workflows`);
        };
        break;
      }
      case "createWorkflow": {
        const g = at(world.groups, o.group) as Group;
        named = g.id;
        res = await api.post("/v1/workflows", {
          name: o.name,
          notificationGroupId: g.id,
          steps: [{ template: { type: "in_app", content: "Hi" } }],
        });
        expect = (r) => {
          // Another environment's group does not exist for this key.
          assert.equal(r.statusCode, g.env === k.env ? 201 : 400, `${where}: ${r.body}`);
          if (r.statusCode !== 201) return;
          const data = r.json().data;
          world.workflows.push({
            id: data._id,
            env: k.env,
            identifier: data.triggers[0].identifier,
            active: data.active,
            description: data.description,
            deleted: false,
          });
        };
        break;
      }
      case "getWorkflow":
      case "setStatus":
      case "describe":
      case "deleteWorkflow": {
        const w = at(world.workflows, o.workflow);
        if (!w) continue;
        // By identifier, the answer is the key's own environment's workflow of that identifier, if any.
        const target =
          o.kind === "getWorkflow" && o.byIdentifier
            ? world.workflows.find((x) => x.env === k.env && x.identifier === w.identifier && !x.deleted)
            : w.env === k.env && !w.deleted
              ? w
              : undefined;
        const ref = o.kind === "getWorkflow" && o.byIdentifier ? w.identifier : w.id;
        named = w.id;
        const base = o.kind === "setStatus" && o.legacy ? "/v1/notification-templates" : "/v1/workflows";
        res =
          o.kind === "getWorkflow"
            ? await api.get(`${base}/${ref}`)
            : o.kind === "setStatus"
              ? await api.put(`${base}/${ref}/status`, { active: o.active })
              : o.kind === "describe"
                ? await api.put(`${base}/${ref}`, { description: o.text })
                : await api.delete(`${base}/${ref}`);
        expect = (r) => {
          if (!target) return assert.equal(r.statusCode, 404, `${where}: ${r.body}`);
          assert.equal(r.statusCode, 200, `${where}: ${r.body}`);
          if (o.kind === "deleteWorkflow") target.deleted = true;
          else {
            const data = r.json().data;
            assert.equal(data._id, target.id, where);
            if (o.kind === "setStatus") target.active = o.active;
            // The service keeps a description without its surrounding spaces.
            if (o.kind === "describe") target.description = o.text.trim();
            assert.equal(data.active, target.active, where);
            assert.equal(data.description, target.description, where);
          }
        };
        break;
      }
    }
    if (k.revoked) {
      assert.equal(res.statusCode, 401, `${where}: a revoked key must be refused: ${res.body}`);
      continue;
    }
    expect(res);
    // No answer carries another environment's data.
    // (A Production group's _parentId names its Development counterpart, by design: same organization.)
    const text = res.body.replace(PARENT_ID, '"_parentId":""');
    for (const id of foreignIds(world, k.env, named))
      assert.ok(!text.includes(id), `${where}: answer holds ${id}: ${text}`);
    for (const m of text.matchAll(ENVIRONMENT_ID)) assert.equal(m[1], k.env, where);
  }
  // Afterwards, every environment holds exactly what the model says.
  for (const env of world.envs) {
    const created = await createApiKey({ db: ctx.store.db, clock: systemClock }, env);
    assert.ok(created);
    const api = ctx.client(created.apiKey);
    // Ids and names: a foreign rename that answered 404 but renamed anyway would show here.
    const groups = (await api.get("/v1/notification-groups"))
      .json()
      .data.map((g: { _id: string; name: string }) => `${g._id} ${g.name.toLowerCase()}`)
      .sort();
    assert.deepEqual(
      groups,
      world.groups
        .filter((g) => g.env === env)
        .map((g) => `${g.id} ${g.nameKey}`)
        .sort(),
    );
    for (const w of world.workflows.filter((x) => x.env === env)) {
      const r = await api.get(`/v1/workflows/${w.id}`);
      if (w.deleted) assert.equal(r.statusCode, 404);
      else {
        assert.equal(r.statusCode, 200);
        assert.equal(r.json().data.active, w.active);
        assert.equal(r.json().data.description, w.description);
      }
    }
  }
  return world;
}

forEachBackend("tenancy property", (ctx) => {
  test(`random operations with random keys never cross environments; revoked keys are refused at once (${RUNS} runs, seed ${SEED})`, async () => {
    let requests = 0;
    let revoked = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 20, maxLength: 70 }), async (ops) => {
        const world = await run(ctx, ops);
        requests += ops.filter((o) => o.kind !== "revoke" && o.kind !== "newKey").length;
        revoked += world.keys.filter((k) => k.revoked).length;
      }),
      { numRuns: RUNS, seed: SEED, endOnFailure: true },
    );
    console.log(
      `[${ctx.backend}] tenancy: ${RUNS} runs, ${requests} requests with random keys over ${ORGS} organizations ` +
        `(${ORGS * 2} environments), ${revoked} keys revoked mid-run; 0 cross-environment reads or writes (seed ${SEED})`,
    );
  });
});
