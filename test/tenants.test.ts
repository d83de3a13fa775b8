import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";
import { ManualClock } from "../src/clock.ts";
import { assertErrorBody } from "./error-body.ts";
import { createSubscriber, createWorkflow } from "./factories.ts";
import { forEachBackend } from "./harness.ts";
import { drain } from "./queue-helpers.ts";

// Tenants (Novu's /v1/tenants): CRUD by identifier within the key's environment, and what a trigger
// that names one does: templates and conditions read it, the activity shows it, an unknown
// identifier runs nothing (`no_tenant_found`), an object creates or updates it.

const hexId = () => randomBytes(12).toString("hex");

forEachBackend<ManualClock>(
  "tenants",
  (ctx) => {
    test("create, get, list newest first in pages, change, delete; by identifier, in the key's environment only", async () => {
      const { dev, prod } = await ctx.tenant();
      const api = ctx.client(dev.apiKey);
      const created = await api.post("/v1/tenants", {
        identifier: "acme",
        name: "Acme",
        data: { plan: "pro", seats: 12 },
      });
      assert.equal(created.statusCode, 201, created.body);
      const acme = created.json().data;
      assert.match(acme._id, /^[0-9a-f]{24}$/);
      assert.deepEqual(
        { ...acme, _id: undefined, createdAt: undefined, updatedAt: undefined },
        {
          _id: undefined,
          identifier: "acme",
          name: "Acme",
          data: { plan: "pro", seats: 12 },
          _environmentId: dev.environmentId,
          _organizationId: (await ctx.client(dev.apiKey).get("/v1/environments/me")).json().data
            ._organizationId,
          createdAt: undefined,
          updatedAt: undefined,
        },
      );
      assert.deepEqual((await api.get("/v1/tenants/acme")).json().data, acme);

      assertErrorBody(await api.post("/v1/tenants", { identifier: "acme" }), 409, {
        message: new RegExp(
          `^Tenant with identifier: acme already exists under environment ${dev.environmentId}$`,
        ),
        path: "/v1/tenants",
      });
      for (const body of [
        { name: "No identifier" },
        { identifier: "" },
        { identifier: "  " },
        { identifier: 5 },
      ]) {
        assertErrorBody(await api.post("/v1/tenants", body), 400, {
          path: "/v1/tenants",
          fields: ["identifier"],
        });
      }
      // A minimal tenant: name and data empty.
      const bare = await api.post("/v1/tenants", { identifier: "bare" });
      assert.equal(bare.statusCode, 201, bare.body);
      assert.equal(bare.json().data.name, "");
      assert.deepEqual(bare.json().data.data, {});

      for (let i = 0; i < 3; i++) {
        ctx.clock.advance(1000);
        assert.equal((await api.post("/v1/tenants", { identifier: `t${i}` })).statusCode, 201);
      }
      const page = async (query: string) => {
        const res = await api.get(`/v1/tenants?${query}`);
        assert.equal(res.statusCode, 200, res.body);
        const body = res.json();
        return { ...body, data: body.data.map((t: { identifier: string }) => t.identifier) };
      };
      const first = await page("page=0&limit=2");
      assert.deepEqual([first.page, first.pageSize, first.totalCount, first.hasMore], [0, 2, 5, true]);
      assert.deepEqual(first.data, ["t2", "t1"]);
      const last = await page("page=2&limit=2");
      assert.equal(last.hasMore, false);
      assert.equal(last.data.length, 1);
      assert.equal((await page("")).pageSize, 10);

      ctx.clock.advance(1000);
      const changed = await api.patch("/v1/tenants/acme", { identifier: "acme-inc", data: { plan: "team" } });
      assert.equal(changed.statusCode, 200, changed.body);
      assert.equal(changed.json().data.identifier, "acme-inc");
      assert.equal(changed.json().data.name, "Acme");
      assert.deepEqual(changed.json().data.data, { plan: "team" });
      assert.notEqual(changed.json().data.updatedAt, acme.updatedAt);
      assertErrorBody(await api.get("/v1/tenants/acme"), 404, {
        message: /^Tenant acme was not found$/,
        path: "/v1/tenants/acme",
      });
      assertErrorBody(await api.patch("/v1/tenants/acme-inc", { identifier: "bare" }), 409, {
        message: /already exists/,
        path: "/v1/tenants/acme-inc",
      });
      assertErrorBody(await api.patch("/v1/tenants/nobody", { name: "x" }), 404, {
        path: "/v1/tenants/nobody",
      });
      assertErrorBody(await api.patch("/v1/tenants/acme-inc", { identifier: null }), 400, {
        path: "/v1/tenants/acme-inc",
        fields: ["identifier"],
      });

      // Production has none of Development's tenants, and may use the same identifiers.
      const other = ctx.client(prod.apiKey);
      assertErrorBody(await other.get("/v1/tenants/acme-inc"), 404, { path: "/v1/tenants/acme-inc" });
      assertErrorBody(await other.delete("/v1/tenants/acme-inc"), 404, { path: "/v1/tenants/acme-inc" });
      assert.equal((await other.get("/v1/tenants")).json().totalCount, 0);
      assert.equal((await other.post("/v1/tenants", { identifier: "acme-inc" })).statusCode, 201);

      const deleted = await api.delete("/v1/tenants/acme-inc");
      assert.equal(deleted.statusCode, 204, deleted.body);
      assertErrorBody(await api.delete("/v1/tenants/acme-inc"), 404, { path: "/v1/tenants/acme-inc" });
      assert.equal((await other.get("/v1/tenants/acme-inc")).statusCode, 200);
    });

    test("a trigger's tenant: templates and conditions read it, the activity shows it; an unknown identifier runs nothing; an object creates or updates it", async () => {
      const { dev } = await ctx.tenant();
      const api = ctx.client(dev.apiKey);
      assert.equal(
        (await api.post("/v1/tenants", { identifier: "acme", name: "Acme", data: { plan: "pro" } }))
          .statusCode,
        201,
      );
      const workflow = await createWorkflow(ctx, dev.apiKey, dev.generalGroupId, {
        active: true,
        steps: [
          {
            template: {
              type: "in_app",
              content: "{{tenant.name}} ({{tenant.data.plan}}) for {{tenant.identifier}}",
            },
            filters: [
              {
                type: "GROUP",
                value: "AND",
                children: [{ on: "tenant", field: "data.plan", operator: "EQUAL", value: "pro" }],
              },
            ],
          },
        ],
      });
      const name = workflow.triggers[0].identifier;
      const to = (await createSubscriber(ctx, dev.apiKey)).subscriberId;
      const trigger = async (tenant: unknown) => {
        ctx.clock.advance(1000);
        const transactionId = hexId();
        const res = await api.post("/v1/events/trigger", { name, to, tenant, transactionId });
        assert.equal(res.statusCode, 201, res.body);
        await drain(ctx);
        return { transactionId, status: res.json().data.status };
      };
      const feed = async () =>
        (await api.get(`/v1/subscribers/${to}/notifications/feed`))
          .json()
          .data.map((m: { content: string }) => m.content);

      const known = await trigger("acme");
      assert.equal(known.status, "processed");
      assert.deepEqual(await feed(), ["Acme (pro) for acme"]);
      const [notification] = (await api.get(`/v1/notifications?transactionId=${known.transactionId}`)).json()
        .data;
      assert.equal(notification.tenant.identifier, "acme");
      assert.equal(notification.tenant.name, "Acme");
      assert.deepEqual(notification.tenant.data, { plan: "pro" });

      // Unknown: acknowledged, nothing written or run.
      const unknown = await trigger("nobody");
      assert.equal(unknown.status, "no_tenant_found");
      assert.deepEqual(
        (await api.get(`/v1/notifications?transactionId=${unknown.transactionId}`)).json().data,
        [],
      );
      assertErrorBody(await api.get("/v1/tenants/nobody"), 404, { path: "/v1/tenants/nobody" });

      // An object creates the tenant; its data fails the condition, so nothing reaches the feed.
      const created = await trigger({ identifier: "globex", name: "Globex", data: { plan: "free" } });
      assert.equal(created.status, "processed");
      assert.deepEqual((await api.get("/v1/tenants/globex")).json().data.data, { plan: "free" });
      assert.equal((await feed()).length, 1);
      // And updates what it sends, keeping the rest.
      await trigger({ identifier: "globex", data: { plan: "pro" } });
      assert.deepEqual(await feed(), ["Globex (pro) for globex", "Acme (pro) for acme"]);
      assert.equal((await api.get("/v1/tenants/globex")).json().data.name, "Globex");
      // Without a tenant, {{tenant.*}} renders empty and a tenant condition does not hold.
      await trigger(undefined);
      assert.equal((await feed()).length, 2);

      for (const tenant of ["", { name: "No identifier" }, { identifier: "x", extra: 1 }, 5]) {
        const res = await api.post("/v1/events/trigger", { name, to, tenant });
        assert.equal(res.statusCode, 400, res.body);
        const fields = res.json().errors.map((e: { field: string }) => e.field);
        assertErrorBody(res, 400, { path: "/v1/events/trigger", fields });
        assert.ok(fields.length > 0 && fields.every((f: string) => f.startsWith("tenant")), res.body);
      }
    });
  },
  { clock: () => new ManualClock() },
);
