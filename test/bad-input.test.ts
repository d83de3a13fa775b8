import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";
import type { LightMyRequestResponse } from "fastify";
import { assertErrorBody } from "./error-body.ts";
import { createWorkflow } from "./factories.ts";
import { anonymous, type Client, forEachBackend, type TestTenant } from "./harness.ts";

// Issue 2, "What bad input gets": every case gets the contract's error body and code, never a 500,
// and leaves the data as it was (read back after each case).

const MiB = 1024 * 1024;
const PREFIXES = ["/v1/workflows", "/v1/notification-templates"] as const;

/** A raw request: the payload exactly as sent, and the Content-Type (none when null). */
interface RawCase {
  label: string;
  payload?: string;
  contentType?: string | null;
  status: number;
  fields?: string[];
  message?: RegExp;
}

function send(api: Client, method: "PUT" | "POST", url: string, c: RawCase) {
  const headers: Record<string, string> = {};
  if (c.contentType !== null) headers["content-type"] = c.contentType ?? "application/json";
  return api.request({
    method,
    url,
    headers,
    ...(c.payload === undefined ? {} : { payload: c.payload }),
  });
}

/** A JSON text of more than 1 MiB that would be valid apart from its size. */
function oversized(body: Record<string, unknown>): string {
  const text = JSON.stringify({ ...body, padding: "x".repeat(MiB) });
  assert.ok(Buffer.byteLength(text) > MiB);
  return text;
}

// Bodies that are wrong whatever the route: each is a 400 (or 413/415) before any rule runs.
const SHAPE_CASES: RawCase[] = [
  { label: "not JSON", payload: "{active: true}", status: 400, message: /not valid JSON/ },
  { label: "truncated JSON", payload: '{"active": tr', status: 400, message: /not valid JSON/ },
  { label: "a prototype-polluting key", payload: '{"__proto__": {"x": 1}}', status: 400 },
  { label: "an array", payload: "[]", status: 400, fields: ["body"], message: /body must be an object/ },
  { label: "an array of objects", payload: '[{"active":true,"name":"x"}]', status: 400, fields: ["body"] },
  {
    label: "a string",
    payload: '"active"',
    status: 400,
    fields: ["body"],
    message: /body must be an object/,
  },
  { label: "null", payload: "null", status: 400, fields: ["body"], message: /body must be an object/ },
  { label: "a number", payload: "1", status: 400, fields: ["body"] },
  { label: "empty", payload: "", status: 400, message: /empty/ },
  { label: "absent (no body, no Content-Type)", contentType: null, status: 400, fields: ["body"] },
];

/** Media-type and size cases for a body that would otherwise be accepted. */
function transportCases(valid: Record<string, unknown>): RawCase[] {
  const json = JSON.stringify(valid);
  return [
    { label: "text/plain", payload: json, contentType: "text/plain", status: 415, message: /Content-Type/ },
    {
      label: "text/plain; charset=utf-8",
      payload: json,
      contentType: "text/plain; charset=utf-8",
      status: 415,
      message: /Content-Type/,
    },
    {
      label: "form-urlencoded",
      payload: "active=true&name=x",
      contentType: "application/x-www-form-urlencoded",
      status: 415,
      message: /Content-Type/,
    },
    { label: "no Content-Type", payload: json, contentType: null, status: 415, message: /Content-Type/ },
    { label: "over 1 MiB", payload: oversized(valid), status: 413, message: /too large/ },
  ];
}

forEachBackend("bad input: PUT /v1/workflows/:workflowId/status", (ctx) => {
  async function inactiveWorkflow(apiKey: string, groupId: string) {
    const workflow = await createWorkflow(ctx, apiKey, groupId);
    assert.equal(workflow.active, false);
    return workflow as { _id: string; triggers: { identifier: string }[] };
  }

  // One tenant and one inactive workflow for the suite: every case would switch it on if it got
  // through, and each checks that it did not.
  let fixture: Promise<{ tenant: TestTenant; workflowId: string; api: Client }> | undefined;
  const setup = () => {
    fixture ??= (async () => {
      const tenant = await ctx.tenant();
      const workflow = await inactiveWorkflow(tenant.dev.apiKey, tenant.dev.generalGroupId);
      return { tenant, workflowId: workflow._id, api: ctx.client(tenant.dev.apiKey) };
    })();
    return fixture;
  };

  async function unchangedAfter(api: Client, workflowId: string, act: () => Promise<void>) {
    const before = await api.get(`/v1/workflows/${workflowId}`);
    assert.equal(before.statusCode, 200, before.body);
    await act();
    const after = await api.get(`/v1/workflows/${workflowId}`);
    assert.deepEqual(after.json(), before.json(), "the workflow is unchanged");
    assert.equal(after.json().data.active, false);
  }

  const bodyCases: RawCase[] = [
    ...SHAPE_CASES,
    {
      label: "active missing",
      payload: "{}",
      status: 400,
      fields: ["active"],
      message: /^active is required$/,
    },
    {
      label: 'active "true"',
      payload: '{"active":"true"}',
      status: 400,
      fields: ["active"],
      message: /^active /,
    },
    { label: "active 1", payload: '{"active":1}', status: 400, fields: ["active"], message: /^active / },
    {
      label: "active null",
      payload: '{"active":null}',
      status: 400,
      fields: ["active"],
      message: /^active /,
    },
    { label: 'active "yes"', payload: '{"active":"yes"}', status: 400, fields: ["active"] },
    { label: "active []", payload: '{"active":[true]}', status: 400, fields: ["active"] },
    {
      label: "an unknown field beside active",
      payload: '{"active":true,"draft":false}',
      status: 400,
      fields: ["draft"],
      message: /^draft is not allowed$/,
    },
    {
      label: "two unknown fields",
      payload: '{"active":true,"name":"x","critical":true}',
      status: 400,
      fields: ["name", "critical"],
      message: /see errors/,
    },
    {
      label: "an unknown field instead of active",
      payload: '{"enabled":true}',
      status: 400,
      fields: ["active", "enabled"],
    },
    ...transportCases({ active: true }),
  ];

  for (const prefix of PREFIXES) {
    for (const c of bodyCases) {
      test(`${prefix}: body ${c.label} → ${c.status}`, async () => {
        const { workflowId, api } = await setup();
        const url = `${prefix}/${workflowId}/status`;
        await unchangedAfter(api, workflowId, async () => {
          const res = await send(api, "PUT", url, c);
          assertErrorBody(res, c.status, { path: url, fields: c.fields, message: c.message });
        });
      });
    }

    const malformed: [string, string][] = [
      ["with spaces and punctuation", "not%20an%20id!"],
      ["with a dot", "welcome.v2"],
      ["of 101 characters", "a".repeat(101)],
      ["with a NUL byte", "abc%00def"],
      ["with non-ASCII letters", "caf%C3%A9"],
      ["with an encoded slash", "abc%2Fdef"],
    ];
    for (const [label, segment] of malformed) {
      test(`${prefix}: a malformed workflow id (${label}) → 400 naming workflowId`, async () => {
        const { workflowId, api } = await setup();
        const url = `${prefix}/${segment}/status`;
        await unchangedAfter(api, workflowId, async () => {
          const res = await api.put(url, { active: true });
          assertErrorBody(res, 400, { path: url, fields: ["workflowId"], message: /^workflowId / });
        });
      });
    }

    // Fastify rejects these before routing: answered by handleFrameworkError (src/http/error-handler.ts).
    for (const [label, segment, message] of [
      ["broken percent-encoding", "%E0%A4%A", /percent-encoded/],
      ["of 201 characters (past the router's limit)", "a".repeat(201), /too long/],
    ] as const) {
      test(`${prefix}: a malformed workflow id (${label}) → 400 in the error body`, async () => {
        const { workflowId, api } = await setup();
        const url = `${prefix}/${segment}/status`;
        await unchangedAfter(api, workflowId, async () => {
          const res = await api.request({
            method: "PUT",
            url,
            headers: { "content-type": "application/json", "x-request-id": "malformed-path-1" },
            payload: '{"active":true}',
          });
          assertErrorBody(res, 400, { path: url, message });
          assert.equal(res.headers["x-request-id"], "malformed-path-1");
        });
      });
    }

    test(`${prefix}: a well-formed id or identifier that does not exist → 404`, async () => {
      const { workflowId, api } = await setup();
      await unchangedAfter(api, workflowId, async () => {
        for (const missing of [
          randomBytes(12).toString("hex"),
          "000000000000000000000000",
          "no-such-workflow",
        ]) {
          const url = `${prefix}/${missing}/status`;
          const res = await api.put(url, { active: true });
          assertErrorBody(res, 404, {
            path: url,
            message: new RegExp(`^Workflow ${missing} was not found$`),
          });
        }
      });
    });

    // Another environment's workflow, by id or identifier: the shared cases of test/auth-and-tenancy.test.ts.
  }

  test("the error body's path leaves the query string out", async () => {
    const { workflowId, api } = await setup();
    const path = `/v1/workflows/${workflowId}/status`;
    const res = await api.put(`${path}?active=true&apiKey=secret`, { active: "true" });
    assertErrorBody(res, 400, { path, fields: ["active"] });
    assert.doesNotMatch(res.body, /secret/);
  });

  test("a body just under 1 MiB is read, and refused only for its unknown field", async () => {
    const { workflowId, api } = await setup();
    const url = `/v1/workflows/${workflowId}/status`;
    const payload = JSON.stringify({ active: true, padding: "x".repeat(MiB - 100) });
    assert.ok(Buffer.byteLength(payload) < MiB);
    await unchangedAfter(api, workflowId, async () => {
      const res = await send(api, "PUT", url, { label: "", payload, status: 400 });
      assertErrorBody(res, 400, { path: url, fields: ["padding"] });
    });
  });
});

forEachBackend("bad input: POST /v1/notification-groups", (ctx) => {
  const URL = "/v1/notification-groups";

  async function groupsOf(api: Client) {
    const res = await api.get(URL);
    assert.equal(res.statusCode, 200, res.body);
    return res.json().data as { _id: string; name: string }[];
  }

  async function unchangedAfter(api: Client, act: () => Promise<void>) {
    const before = await groupsOf(api);
    await act();
    assert.deepEqual(await groupsOf(api), before, "the environment's groups are unchanged");
  }

  let fixture: Promise<{ tenant: TestTenant; api: Client }> | undefined;
  const setup = () => {
    fixture ??= ctx.tenant().then((tenant) => ({ tenant, api: ctx.client(tenant.dev.apiKey) }));
    return fixture;
  };

  const nameCases: [string, unknown, RegExp][] = [
    ["of 101 characters", "n".repeat(101), /^name must be at most 100 characters$/],
    ["of 101 characters after trimming", `  ${"n".repeat(101)}  `, /^name must be at most 100 characters$/],
    ["of spaces only", "     ", /^name must not be empty/],
    ["of tabs, newlines and no-break spaces only", "\t\n\u00a0\u3000 ", /^name must not be empty/],
    ["empty", "", /^name /],
    ["with a control character (BEL)", "Mark\u0007eting", /^name must not contain control/],
    ["with a NUL", "Mark\u0000eting", /^name must not contain the NUL character/],
    ["with DEL", "Mark\u007feting", /^name must not contain control/],
    ["with a C1 control", "Mark\u0085eting", /^name must not contain control/],
    ["with a newline inside", "Mark\neting", /^name must not contain control/],
    ["with a zero-width space", "Mark\u200beting", /^name must not contain control or invisible/],
    ["with a lone surrogate", "Mark\ud800eting", /^name must be valid Unicode text$/],
    ["a number", 42, /^name must be a string$/],
    ["a boolean", true, /^name must be a string$/],
    ["null", null, /^name must be a string$/],
    ["an object", { en: "Marketing" }, /^name must be a string$/],
    ["an array", ["Marketing"], /^name must be a string$/],
  ];

  for (const [label, name, message] of nameCases) {
    test(`a name ${label} → 400 naming name`, async () => {
      const { api } = await setup();
      await unchangedAfter(api, async () => {
        const res = await api.post(URL, { name });
        assertErrorBody(res, 400, { path: URL, fields: ["name"], message });
      });
    });
  }

  const bodyCases: RawCase[] = [
    ...SHAPE_CASES,
    { label: "name missing", payload: "{}", status: 400, fields: ["name"], message: /^name is required$/ },
    {
      label: "an unknown field beside name",
      payload: '{"name":"Marketing","description":"x"}',
      status: 400,
      fields: ["description"],
      message: /^description is not allowed$/,
    },
    {
      label: "Novu-looking extra ids",
      payload: '{"name":"Marketing","_environmentId":"65f1c0ffee0123456789abcd"}',
      status: 400,
      fields: ["_environmentId"],
    },
    {
      label: "an unknown field instead of name",
      payload: '{"title":"Marketing"}',
      status: 400,
      fields: ["name", "title"],
    },
    ...transportCases({ name: "Marketing" }),
  ];

  for (const c of bodyCases) {
    test(`body ${c.label} → ${c.status}`, async () => {
      const { api } = await setup();
      await unchangedAfter(api, async () => {
        const res = await send(api, "POST", URL, c);
        assertErrorBody(res, c.status, { path: URL, fields: c.fields, message: c.message });
      });
    });
  }

  test("a name of exactly 100 characters (also counted in code points, not UTF-16 units) is accepted", async () => {
    const { api } = await setup();
    for (const name of ["m".repeat(100), "é".repeat(100), "😀".repeat(100)]) {
      const res = await api.post(URL, { name });
      assert.equal(res.statusCode, 201, res.body);
      assert.equal(res.json().data.name, name);
    }
  });

  test("the name is stored trimmed, and read back trimmed", async () => {
    const { api } = await setup();
    const res = await api.post(URL, { name: " \t Weekly digest \u00a0\n" });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().data.name, "Weekly digest");
    const listed = (await groupsOf(api)).filter((g) => g._id === res.json().data._id);
    assert.deepEqual(
      listed.map((g) => g.name),
      ["Weekly digest"],
    );
  });

  test("a duplicate name, compared after trimming and lower-casing, is a 409 naming the existing id", async () => {
    const { tenant, api } = await setup();
    const first = await api.post(URL, { name: "Billing Alerts" });
    assert.equal(first.statusCode, 201, first.body);
    const existing = first.json().data._id as string;
    await unchangedAfter(api, async () => {
      for (const name of ["Billing Alerts", "billing alerts", "  BILLING ALERTS  ", "\tbIlLiNg AlErTs\n"]) {
        const res = await api.post(URL, { name });
        assertErrorBody(res, 409, { path: URL, message: new RegExp(`\\(${existing}\\)`) });
      }
      // The General group every environment starts with counts too.
      const res = await api.post(URL, { name: " general " });
      assertErrorBody(res, 409, { path: URL, message: new RegExp(tenant.dev.generalGroupId) });
    });
    // Canonically equivalent spellings (NFC and NFD) are one name.
    const composed = await api.post(URL, { name: "Caf\u00e9" });
    assert.equal(composed.statusCode, 201, composed.body);
    const decomposed = await api.post(URL, { name: "cafe\u0301" });
    assertErrorBody(decomposed, 409, { path: URL, message: new RegExp(composed.json().data._id) });
  });

  test("names are unique per environment: the same name in Production is a new group", async () => {
    const { tenant, api } = await setup();
    const dev = await api.post(URL, { name: "Per environment" });
    assert.equal(dev.statusCode, 201, dev.body);
    const prod = await ctx.client(tenant.prod.apiKey).post(URL, { name: "per environment" });
    assert.equal(prod.statusCode, 201, prod.body);
    assert.notEqual(prod.json().data._id, dev.json().data._id);
    assert.equal(prod.json().data._environmentId, tenant.prod.environmentId);
  });
});

forEachBackend("bad input: what the schema cannot see (POST /v1/workflows)", (ctx) => {
  async function workflowCount(environmentId: string) {
    const row = await ctx.store.db
      .selectFrom("workflows")
      .select((eb) => eb.fn.countAll<string | number>().as("n"))
      .where("environment_id", "=", environmentId)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  const nested = (levels: number) => `${'{"a":'.repeat(levels)}1${"}".repeat(levels)}`;
  const deepArray = (levels: number) => `${"[".repeat(levels)}${"]".repeat(levels)}`;

  test("a body nested thousands of levels deep is a 400 naming the member, not a 500", async () => {
    const { dev } = await ctx.tenant();
    const api = ctx.client(dev.apiKey);
    const group = dev.generalGroupId;
    const cases: [string, string][] = [
      ["data", `{"name":"Deep","notificationGroupId":"${group}","data":${nested(5000)}}`],
      [
        "steps[0]",
        `{"name":"Deep","notificationGroupId":"${group}","steps":[{"template":{"type":"email","content":${deepArray(5000)}}}]}`,
      ],
      ["data", `{"name":"Deep","notificationGroupId":"${group}","data":${nested(33)}}`],
    ];
    for (const [field, payload] of cases) {
      const res = await send(api, "POST", "/v1/workflows", { label: field, payload, status: 400 });
      assertErrorBody(res, 400, { path: "/v1/workflows", fields: [field], message: /levels deep/ });
    }
    assert.equal(await workflowCount(dev.environmentId), 0);
    // 32 levels (the body itself is the first) are fine.
    const ok = await send(api, "POST", "/v1/workflows", {
      label: "",
      payload: `{"name":"Deep enough","notificationGroupId":"${group}","data":${nested(31)}}`,
      status: 201,
    });
    assert.equal(ok.statusCode, 201, ok.body);
  });

  test("a deep body sent to a route that reads none (under an Idempotency-Key, whose hash walks it) is a 400, not a 500", async () => {
    const { dev } = await ctx.tenant();
    const api = ctx.client(dev.apiKey);
    for (const payload of [nested(5000), deepArray(5000), nested(33)]) {
      const res = await api.request({
        method: "POST",
        url: `/v1/changes/${"0".repeat(24)}/apply`,
        headers: { "content-type": "application/json", "idempotency-key": `deep-${payload.length}` },
        payload,
      });
      assertErrorBody(res, 400, { path: `/v1/changes/${"0".repeat(24)}/apply`, message: /levels deep/ });
    }
    // Within the depth, such a body is ignored as before: the change does not exist.
    const shallow = await api.request({
      method: "POST",
      url: `/v1/changes/${"0".repeat(24)}/apply`,
      headers: { "content-type": "application/json", "idempotency-key": "shallow" },
      payload: nested(31),
    });
    assert.equal(shallow.statusCode, 404, shallow.body);
  });

  test("a NUL character in any text is a 400 naming the field (PostgreSQL cannot store it), not a 500", async () => {
    const { dev } = await ctx.tenant();
    const api = ctx.client(dev.apiKey);
    const base = { name: "Nul", notificationGroupId: dev.generalGroupId };
    const cases: [string, Record<string, unknown>][] = [
      ["description", { ...base, description: "before\u0000after" }],
      ["tags[1]", { ...base, tags: ["ok", "n\u0000"] }],
      ["steps[0].template.content", { ...base, steps: [{ template: { type: "sms", content: "\u0000" } }] }],
      ["data.note", { ...base, data: { note: "\u0000" } }],
    ];
    for (const [field, body] of cases) {
      const res = await api.post("/v1/workflows", body);
      assertErrorBody(res, 400, { path: "/v1/workflows", fields: [field], message: /NUL/ });
    }
    assert.equal(await workflowCount(dev.environmentId), 0);
  });
});

forEachBackend("bad input: request ids and unknown routes", (ctx) => {
  async function everyKindOfResponse(
    tenant: TestTenant,
    headers: Record<string, string>,
  ): Promise<[string, LightMyRequestResponse][]> {
    const api = ctx.client(tenant.dev.apiKey);
    const json = { ...headers, "content-type": "application/json" };
    const groupName = `Request id ${randomBytes(4).toString("hex")}`;
    return [
      ["200 health", await anonymous(ctx).request({ method: "GET", url: "/health", headers })],
      ["200 list", await api.request({ method: "GET", url: "/v1/notification-groups", headers })],
      [
        "201 create",
        await api.request({
          method: "POST",
          url: "/v1/notification-groups",
          headers: json,
          payload: { name: groupName },
        }),
      ],
      [
        "409 duplicate",
        await api.request({
          method: "POST",
          url: "/v1/notification-groups",
          headers: json,
          payload: { name: groupName },
        }),
      ],
      [
        "400 invalid",
        await api.request({
          method: "POST",
          url: "/v1/notification-groups",
          headers: json,
          payload: { name: 1 },
        }),
      ],
      [
        "400 not JSON",
        await api.request({ method: "POST", url: "/v1/notification-groups", headers: json, payload: "{" }),
      ],
      [
        "401 no key",
        await anonymous(ctx).request({ method: "GET", url: "/v1/notification-groups", headers }),
      ],
      [
        "404 workflow",
        await api.request({
          method: "PUT",
          url: "/v1/workflows/missing/status",
          headers: json,
          payload: { active: true },
        }),
      ],
      ["404 route", await api.request({ method: "GET", url: "/v1/no-such-thing", headers })],
      [
        "413 too large",
        await api.request({
          method: "POST",
          url: "/v1/notification-groups",
          headers: json,
          payload: oversized({ name: "x" }),
        }),
      ],
      [
        "415 text/plain",
        await api.request({
          method: "POST",
          url: "/v1/notification-groups",
          headers: { ...headers, "content-type": "text/plain" },
          payload: '{"name":"x"}',
        }),
      ],
    ];
  }

  test("X-Request-Id is echoed on every kind of response when the client sends one", async () => {
    const tenant = await ctx.tenant();
    for (const sent of ["req-123", "0f8b9c1e-7d4a-4b6e-9a51-2c3d4e5f6a7b", "client.trace:42@edge"]) {
      for (const [label, res] of await everyKindOfResponse(tenant, { "x-request-id": sent })) {
        assert.equal(res.headers["x-request-id"], sent, label);
      }
    }
  });

  test("X-Request-Id is generated, and different each time, when the client sends none", async () => {
    const tenant = await ctx.tenant();
    const seen = new Set<string>();
    const responses = [
      ...(await everyKindOfResponse(tenant, {})),
      ...(await everyKindOfResponse(tenant, {})),
    ];
    for (const [label, res] of responses) {
      const id = res.headers["x-request-id"];
      assert.equal(typeof id, "string", label);
      assert.ok(String(id).length >= 8, `${label}: ${String(id)}`);
      seen.add(String(id));
    }
    assert.equal(seen.size, responses.length, "every generated id is new");
  });

  test("an X-Request-Id that could forge a log line is replaced by a generated one", async () => {
    const tenant = await ctx.tenant();
    const res = await ctx.client(tenant.dev.apiKey).request({
      method: "GET",
      url: "/v1/notification-groups",
      headers: { "x-request-id": `a b ${"x".repeat(200)}` },
    });
    assert.equal(res.statusCode, 200);
    const id = String(res.headers["x-request-id"]);
    assert.ok(id.length > 0 && id.length <= 128 && !/\s/.test(id), id);
  });

  test("an unknown route is a 404 in the error body, for any method, with or without a key", async () => {
    const tenant = await ctx.tenant();
    const api = ctx.client(tenant.dev.apiKey);
    const cases: [string, string, Client][] = [
      ["GET", "/v1/no-such-thing", api],
      ["GET", "/v2/no-such-thing", api],
      ["POST", "/v1/workflows/a/b/c", api],
      ["PATCH", "/v1/workflows/x/status", api],
      ["DELETE", "/v1/notification-groups", api],
      ["GET", "/nowhere", anonymous(ctx)],
    ];
    for (const [method, url, client] of cases) {
      const res = await client.request({ method: method as "GET", url: `${url}?q=1` });
      assertErrorBody(res, 404, { path: url, message: new RegExp(`^No route for ${method} ${url}$`) });
    }
  });
});
