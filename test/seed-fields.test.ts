import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";
import { createWorkflow } from "./factories.ts";
import { forEachBackend } from "./harness.ts";
import { OBJECT_ID } from "./patterns.ts";
import { parseSeedTables, type SeedField, type SeedTable } from "./seed-spec-tables.ts";

// The seed's field tables, read at test time: every field they list must appear in the responses
// with the type they give (contract part 1), nested resources included. Nothing here lists fields.

const TABLES = parseSeedTables();

const key = (title: string) => title.toLowerCase().replace(/[^a-z0-9]/g, "");

/** A resource named in a type ("array of Step", "NotificationGroup"): its subsection's main table. */
function tableNamed(name: string): SeedTable | undefined {
  return TABLES.find((t) => t.index === 0 && key(t.sectionTitle) === key(name));
}

function tableOfSection(section: string): SeedTable | undefined {
  return TABLES.find((t) => t.index === 0 && t.section === section);
}

/** The table a field's notes point at: "See 2.2", or "below" (the next table of its subsection). */
function linkedTable(owner: SeedTable, field: SeedField): SeedTable | undefined {
  const see = /\bSee (\d+\.\d+)\b/.exec(field.notes);
  if (see?.[1]) return tableOfSection(see[1]);
  if (/\bbelow\b/i.test(field.notes)) {
    return TABLES.find((t) => t.section === owner.section && t.index === owner.index + 1);
  }
  return undefined;
}

const backticked = (text: string) => [...text.matchAll(/`([^`]+)`/g)].map((m) => m[1] ?? "");

interface Walk {
  /** Tables an object was checked against. */
  used: Set<SeedTable>;
  /** For each "array of" field (by table and field), how many elements were checked. */
  elements: Map<string, number>;
  problems: string[];
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

function checkScalar(type: string, value: unknown, at: string, walk: Walk): boolean {
  switch (type) {
    case "string":
      if (typeof value !== "string") walk.problems.push(`${at}: ${JSON.stringify(value)} is not a string`);
      return true;
    case "boolean":
      if (typeof value !== "boolean") walk.problems.push(`${at}: ${JSON.stringify(value)} is not a boolean`);
      return true;
    case "number":
      if (typeof value !== "number" || !Number.isFinite(value)) {
        walk.problems.push(`${at}: ${JSON.stringify(value)} is not a number`);
      }
      return true;
    default:
      return false;
  }
}

/** Checks one value against a type as the seed writes it; throws on a type this test cannot read. */
function checkType(owner: SeedTable, field: SeedField, type: string, value: unknown, at: string, walk: Walk) {
  if (checkScalar(type, value, at, walk)) return;
  const array = /^array of (.+)$/.exec(type);
  if (array?.[1]) {
    if (!Array.isArray(value)) {
      walk.problems.push(`${at}: ${JSON.stringify(value)} is not an array`);
      return;
    }
    const slot = `${owner.sectionTitle}#${owner.index}.${field.name}`;
    walk.elements.set(slot, (walk.elements.get(slot) ?? 0) + value.length);
    value.forEach((item, i) => {
      checkType(owner, field, array[1] as string, item, `${at}[${i}]`, walk);
    });
    return;
  }
  const withFields = /^object with (.+)$/.exec(type);
  if (withFields?.[1]) {
    // "object with `name` (string)"
    if (!isObject(value)) {
      walk.problems.push(`${at}: ${JSON.stringify(value)} is not an object`);
      return;
    }
    const members = [...withFields[1].matchAll(/`([^`]+)`\s*\((\w+)\)/g)];
    if (members.length === 0) throw new Error(`cannot read the type "${type}" of ${field.name}`);
    for (const [, name, memberType] of members) {
      if (!((name as string) in value)) walk.problems.push(`${at}.${name}: missing`);
      else checkType(owner, field, memberType as string, value[name as string], `${at}.${name}`, walk);
    }
    return;
  }
  if (type === "object") {
    if (!isObject(value)) {
      walk.problems.push(`${at}: ${JSON.stringify(value)} is not an object`);
      return;
    }
    const linked = linkedTable(owner, field);
    if (linked) {
      checkObject(linked, value, at, walk);
      return;
    }
    // "Booleans `email`, `sms`, ...": an object of those booleans.
    const booleans = /^Booleans\b/.exec(field.notes) ? backticked(field.notes) : [];
    for (const name of booleans) {
      if (!(name in value)) walk.problems.push(`${at}.${name}: missing`);
      else checkScalar("boolean", value[name], `${at}.${name}`, walk);
    }
    return; // otherwise free-form
  }
  const resource = tableNamed(type);
  if (resource) {
    if (!isObject(value)) walk.problems.push(`${at}: ${JSON.stringify(value)} is not an object`);
    else checkObject(resource, value, at, walk);
    return;
  }
  throw new Error(`cannot read the type "${type}" of ${owner.sectionTitle}.${field.name}`);
}

function checkObject(table: SeedTable, value: Record<string, unknown>, at: string, walk: Walk) {
  walk.used.add(table);
  for (const field of table.fields) {
    const here = `${at}.${field.name}`;
    if (!(field.name in value)) {
      walk.problems.push(`${here}: missing (${table.sectionTitle} ${table.caption})`.trim());
      continue;
    }
    const fieldValue = value[field.name];
    // A note that "See 2.N" must agree with the type it annotates.
    const see = /\bSee (\d+\.\d+)\b/.exec(field.notes)?.[1];
    if (see) {
      const named = /^(?:array of )?(\w+)$/.exec(field.type)?.[1] ?? "";
      const target = tableNamed(named);
      if (target && target.section !== see)
        walk.problems.push(`${here}: type ${field.type} vs note ${field.notes}`);
    }
    checkType(table, field, field.type, fieldValue, here, walk);
    // "Form shown" says integer: a whole number.
    if (/\binteger\b/.test(field.notes) && !Number.isInteger(fieldValue)) {
      walk.problems.push(`${here}: ${JSON.stringify(fieldValue)} is not an integer`);
    }
  }
}

function checkAgainstSeed(rootTitle: string, value: unknown) {
  const root = tableNamed(rootTitle);
  assert.ok(root, `the seed has a ${rootTitle} table`);
  const walk: Walk = { used: new Set(), elements: new Map(), problems: [] };
  assert.ok(isObject(value), "the resource is an object");
  checkObject(root, value, rootTitle, walk);
  assert.deepEqual(walk.problems, [], `fields that do not match the seed:\n${walk.problems.join("\n")}`);
  return walk;
}

/** The values the seed's "Form shown" column names for a field (`BOOLEAN`, `seconds`...). */
function formShown(tableCaptionOrTitle: RegExp, field: string): string | undefined {
  for (const table of TABLES) {
    if (!tableCaptionOrTitle.test(`${table.sectionTitle} ${table.caption}`)) continue;
    const row = table.fields.find((f) => f.name === field);
    const values = row ? backticked(row.notes) : [];
    if (values.length > 0) return values[values.length - 1];
  }
  return undefined;
}

// ---------------------------------------------------------------- the contract's extra rules

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$/;
const ID_FIELDS = new Set([
  "_id",
  "_environmentId",
  "_organizationId",
  "_notificationGroupId",
  "_templateId",
  "_creatorId",
]);

/** No null anywhere; every id field a 24-hex ObjectId whose timestamp is plausible. */
function checkContractRules(value: unknown, at = "data"): string[] {
  const problems: string[] = [];
  const visit = (v: unknown, here: string) => {
    if (v === null || v === undefined) problems.push(`${here}: ${String(v)}`);
    else if (Array.isArray(v)) {
      for (const [i, item] of v.entries()) visit(item, `${here}[${i}]`);
    } else if (typeof v === "object") {
      for (const [k, child] of Object.entries(v)) {
        const path = `${here}.${k}`;
        if (ID_FIELDS.has(k)) {
          if (typeof child !== "string" || !OBJECT_ID.test(child))
            problems.push(`${path}: ${JSON.stringify(child)} is not an ObjectId`);
          else {
            // The first 4 bytes are seconds since the epoch: a year either way is only a sanity bound.
            const seconds = Number.parseInt(child.slice(0, 8), 16);
            if (Math.abs(seconds - Date.now() / 1000) > 365 * 24 * 3600)
              problems.push(`${path}: ${child} has no ObjectId timestamp`);
          }
        }
        visit(child, path);
      }
    }
  };
  visit(value, at);
  return problems;
}

function assertTimestamps(resource: Record<string, unknown>, label: string) {
  for (const field of ["createdAt", "updatedAt"]) {
    const value = resource[field];
    assert.equal(typeof value, "string", `${label}.${field} is a string`);
    assert.match(value as string, ISO_UTC, `${label}.${field} is ISO 8601 UTC`);
    assert.equal(new Date(value as string).toISOString().slice(0, 19), (value as string).slice(0, 19));
  }
  assert.ok(
    String(resource.updatedAt) >= String(resource.createdAt),
    `${label}: updatedAt is not before createdAt`,
  );
}

// ---------------------------------------------------------------- the tests

test("the seed's field tables are all read (so the checks below cannot pass vacuously)", () => {
  const sections = [...new Set(TABLES.map((t) => t.section))];
  assert.deepEqual(sections, ["2.1", "2.2", "2.3", "2.4", "2.5"]);
  // 2.2 and 2.4 each hold a second table: Step metadata and the filter children.
  assert.deepEqual(
    TABLES.map((t) => `${t.section}#${t.index}`),
    ["2.1#0", "2.2#0", "2.2#1", "2.3#0", "2.4#0", "2.4#1", "2.5#0"],
  );
  assert.match(TABLES.find((t) => t.section === "2.2" && t.index === 1)?.caption ?? "", /metadata/);
  assert.match(TABLES.find((t) => t.section === "2.4" && t.index === 1)?.caption ?? "", /child/i);
  for (const table of TABLES) {
    assert.ok(table.fields.length >= 4, `${table.sectionTitle} ${table.caption} has its rows`);
    for (const field of table.fields) {
      assert.match(field.name, /^_?[A-Za-z]+$/, `a field name: ${field.name}`);
      assert.ok(field.type !== "", `${field.name} has a type`);
    }
  }
  assert.ok((tableNamed("Workflow")?.fields.length ?? 0) >= 20);
});

forEachBackend("the seed's fields in the responses", (ctx) => {
  /** A workflow that exercises every nested table: a step with filters (with children) and metadata. */
  async function richWorkflow(apiKey: string, groupId: string) {
    const metadataUnit = formShown(/metadata/, "unit") ?? "seconds";
    const data = await createWorkflow(ctx, apiKey, groupId, {
      name: `Seed fields ${randomBytes(4).toString("hex")}`,
      description: "Every field the seed lists",
      tags: ["seed", "fields"],
      critical: true,
      preferenceSettings: { email: true, sms: false, in_app: true, chat: false, push: true },
      data: { plan: "pro", nested: { level: 2 } },
      steps: [
        {
          name: "Digest then email",
          template: { type: "email", subject: "Hi {{firstName}}", content: "You have {{count}} new posts" },
          filters: [
            {
              isNegated: false,
              type: formShown(/^Filter $/, "type") ?? "BOOLEAN",
              value: formShown(/^Filter $/, "value") ?? "AND",
              children: [
                {
                  field: "age",
                  value: "18",
                  operator: formShown(/child/i, "operator") ?? "LARGER",
                  on: formShown(/child/i, "on") ?? "subscriber",
                },
              ],
            },
          ],
          metadata: {
            amount: 5,
            unit: metadataUnit,
            digestKey: "postId",
            type: formShown(/metadata/, "type") ?? "regular",
            backoff: true,
            backoffAmount: 2,
            backoffUnit: formShown(/metadata/, "backoffUnit") ?? metadataUnit,
            updateMode: true,
          },
          replyCallback: { active: false },
        },
        // A step with nothing but its template: every other field takes its empty value.
        { template: { type: "sms", content: "Your code is {{code}}" } },
      ],
    });
    return data as Record<string, unknown> & { _id: string };
  }

  async function apiKeyIdOf(environmentId: string): Promise<string> {
    const row = await ctx.store.db
      .selectFrom("api_keys")
      .select("id")
      .where("environment_id", "=", environmentId)
      .executeTakeFirstOrThrow();
    return row.id;
  }

  for (const prefix of ["/v1/workflows", "/v1/notification-templates"]) {
    for (const active of [true, false]) {
      test(`${prefix}: the status change (active ${active}) returns every Workflow field with its seed type`, async () => {
        const { organizationId, dev } = await ctx.tenant();
        const created = await richWorkflow(dev.apiKey, dev.generalGroupId);
        const api = ctx.client(dev.apiKey);
        if (!active) {
          const on = await api.put(`/v1/workflows/${created._id}/status`, { active: true });
          assert.equal(on.statusCode, 200, on.body);
        }
        const res = await api.put(`${prefix}/${created._id}/status`, { active });
        assert.equal(res.statusCode, 200, res.body);
        assert.match(String(res.headers["content-type"]), /^application\/json/);
        const body = res.json();
        assert.deepEqual(Object.keys(body), ["data"], "the { data } envelope and nothing else");
        const workflow = body.data;

        const walk = checkAgainstSeed("Workflow", workflow);
        // Every table was reached, and every array held at least one element to check.
        assert.deepEqual(
          TABLES.filter((t) => !walk.used.has(t)).map((t) => `${t.sectionTitle} ${t.caption}`),
          [],
          "every seed table was checked against something",
        );
        for (const [slot, count] of walk.elements) assert.ok(count > 0, `${slot} had elements to check`);

        assert.deepEqual(checkContractRules(workflow), []);
        assertTimestamps(workflow, "workflow");
        assertTimestamps(workflow.notificationGroup, "notificationGroup");
        for (const step of workflow.steps) assert.match(step.uuid, UUID_V4, "a step's uuid is a UUID v4");
        assert.notEqual(workflow.steps[0].uuid, workflow.steps[1].uuid);

        // What the values are, beyond their types.
        assert.equal(workflow.active, active);
        assert.equal(workflow.draft, !active);
        assert.equal(workflow._organizationId, organizationId);
        assert.equal(workflow._environmentId, dev.environmentId);
        assert.equal(workflow._creatorId, await apiKeyIdOf(dev.environmentId), "the acting key's id");
        assert.equal(workflow._notificationGroupId, dev.generalGroupId);
        assert.deepEqual(
          { deleted: workflow.deleted, deletedAt: workflow.deletedAt, deletedBy: workflow.deletedBy },
          { deleted: false, deletedAt: "", deletedBy: "" },
        );
        assert.equal(workflow._parentId, "");
        assert.deepEqual(workflow.notificationGroup, {
          _id: dev.generalGroupId,
          name: "General",
          _environmentId: dev.environmentId,
          _organizationId: organizationId,
          _parentId: "",
          createdAt: workflow.notificationGroup.createdAt,
          updatedAt: workflow.notificationGroup.updatedAt,
        });
        const [rich, plain] = workflow.steps;
        assert.deepEqual(rich.filters, [
          {
            isNegated: false,
            type: formShown(/^Filter $/, "type"),
            value: formShown(/^Filter $/, "value"),
            children: [
              {
                field: "age",
                value: "18",
                operator: formShown(/child/i, "operator"),
                on: formShown(/child/i, "on"),
              },
            ],
          },
        ]);
        assert.deepEqual(rich.metadata, {
          amount: 5,
          unit: formShown(/metadata/, "unit"),
          digestKey: "postId",
          type: formShown(/metadata/, "type"),
          backoff: true,
          backoffAmount: 2,
          backoffUnit: formShown(/metadata/, "backoffUnit"),
          updateMode: true,
        });
        // The contract's empty values, for the step that sent nothing but its template.
        assert.deepEqual(plain.filters, []);
        assert.deepEqual(plain._parentId, {});
        assert.deepEqual(plain.replyCallback, {});
        assert.deepEqual(plain.metadata, {
          amount: 0,
          unit: "seconds",
          digestKey: "",
          type: "regular",
          backoff: false,
          backoffAmount: 0,
          backoffUnit: "seconds",
          updateMode: false,
        });
        const [trigger] = workflow.triggers;
        assert.deepEqual(
          trigger.variables.map((v: { name: string }) => v.name),
          ["firstName", "count", "code"],
        );
        assert.deepEqual(
          trigger.subscriberVariables.map((v: { name: string }) => v.name),
          ["email", "phone"],
        );

        // The response is the workflow as stored.
        const read = await api.get(`/v1/workflows/${created._id}`);
        assert.deepEqual(read.json(), body);
      });
    }
  }

  test("the populated notificationGroup of a Production workflow names its Development counterpart as parent", async () => {
    const { dev, prod } = await ctx.tenant();
    const created = await richWorkflow(prod.apiKey, prod.generalGroupId);
    const res = await ctx.client(prod.apiKey).put(`/v1/workflows/${created._id}/status`, { active: true });
    assert.equal(res.statusCode, 200, res.body);
    const group = res.json().data.notificationGroup;
    checkAgainstSeed("Notification group", group);
    assert.equal(group._id, prod.generalGroupId);
    assert.equal(group._environmentId, prod.environmentId);
    assert.equal(group._parentId, dev.generalGroupId);
    assert.deepEqual(checkContractRules(res.json().data), []);
  });

  test("the group creation returns every Notification group field with its seed type", async () => {
    const { organizationId, dev } = await ctx.tenant();
    const res = await ctx.client(dev.apiKey).post("/v1/notification-groups", { name: "Product updates" });
    assert.equal(res.statusCode, 201, res.body);
    assert.match(String(res.headers["content-type"]), /^application\/json/);
    const body = res.json();
    assert.deepEqual(Object.keys(body), ["data"], "the { data } envelope and nothing else");
    const walk = checkAgainstSeed("Notification group", body.data);
    assert.equal(walk.used.size, 1);
    assert.deepEqual(checkContractRules(body.data), []);
    assertTimestamps(body.data, "group");
    assert.equal(body.data.createdAt, body.data.updatedAt, "a new group was never updated");
    assert.equal(body.data.name, "Product updates");
    assert.equal(body.data._environmentId, dev.environmentId);
    assert.equal(body.data._organizationId, organizationId);
    assert.equal(body.data._parentId, "");
    assert.notEqual(body.data._id, dev.generalGroupId);
  });

  test("a failing check is reported (the checker itself can fail)", async () => {
    const { dev } = await ctx.tenant();
    const created = await richWorkflow(dev.apiKey, dev.generalGroupId);
    const broken = structuredClone(created) as unknown as Record<string, unknown> & {
      steps: Record<string, unknown>[];
    };
    delete broken.deletedAt;
    (broken.steps[0] as { metadata: Record<string, unknown> }).metadata.amount = "5";
    (broken.notificationGroup as Record<string, unknown>)._parentId = null;
    assert.throws(
      () => checkAgainstSeed("Workflow", broken),
      /metadata\.amount[\s\S]*deletedAt: missing[\s\S]*_parentId/,
    );
    assert.notDeepEqual(checkContractRules(broken), []);
  });
});
