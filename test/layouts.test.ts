import assert from "node:assert/strict";
import { after, test } from "node:test";
import { ManualClock } from "../src/clock.ts";
import { assertErrorBody, type ExpectedError } from "./error-body.ts";
import { uniqueName } from "./factories.ts";
import { type Client, forEachBackend } from "./harness.ts";
import { OBJECT_ID } from "./patterns.ts";
import { poll } from "./poll.ts";
import { type SmtpSink, startSmtpSink } from "./sinks.ts";

// Email layouts (Novu's /v1/layouts): CRUD in the key's environment, one default at a time, no
// deleting the default or a layout a workflow uses; and what they are for: an email step's HTML is
// sent inside its layout (the one it names, else the default), also after promotion.

const CONTENT = "<html><body><div>Hello {{organizationName}} {{{body}}}</div></body></html>";
/** The one error body, for the path the request asked for. */
function refused(
  res: Awaited<ReturnType<Client["get"]>>,
  status: number,
  expected: Omit<ExpectedError, "path"> = {},
) {
  const path = String(res.raw.req.url).split("?")[0] ?? "";
  assertErrorBody(res, status, { path, ...expected });
}

const VARIABLES = [{ name: "organizationName", type: "String", defaultValue: "Company", required: false }];

forEachBackend<ManualClock>(
  "layouts",
  (ctx) => {
    const sinks: SmtpSink[] = [];
    after(async () => {
      await Promise.all(sinks.map((s) => s.close()));
    });

    async function create(api: Client, identifier: string, more: Record<string, unknown> = {}) {
      const res = await api.post("/v1/layouts", {
        name: `Layout ${identifier}`,
        identifier,
        description: "Amazing new layout",
        content: CONTENT,
        variables: VARIABLES,
        ...more,
      });
      assert.equal(res.statusCode, 201, res.body);
      return res.json().data as { _id: string; isDefault: boolean; identifier: string };
    }
    const isDefault = async (api: Client, id: string) =>
      (await api.get(`/v1/layouts/${id}`)).json().data.isDefault;

    test("create, get, list by creation either way in pages, change, one default at a time, delete; in the key's environment only", async () => {
      const { dev, prod } = await ctx.tenant();
      const api = ctx.client(dev.apiKey);
      const orgId = (await api.get("/v1/environments/me")).json().data._organizationId;

      const bad = await api.post("/v1/layouts", {});
      refused(bad, 400, { fields: ["name", "identifier", "content"] });
      refused(
        await api.post("/v1/layouts", { name: "No body", identifier: "no-body", content: "<p>{{x}}</p>" }),
        400,
        { fields: ["content"], message: /\{\{\{body\}\}\}/ },
      );
      refused(
        await api.post("/v1/layouts", {
          name: "Broken",
          identifier: "broken",
          content: "{{{body}}} {{#if}}",
        }),
        400,
        { fields: ["content"] },
      );

      // Development starts with the default layout of onboarding; a new default takes its place, and
      // then, neither the default nor used, it can be deleted like any other.
      const [onboarded] = (await api.get("/v1/layouts")).json().data;
      assert.equal(onboarded.identifier, "novu-default-layout");
      assert.equal(onboarded.isDefault, true);
      const first = await create(api, "layout-one", { isDefault: true });
      assert.equal(await isDefault(api, onboarded._id), false);
      assert.equal((await api.delete(`/v1/layouts/${onboarded._id}`)).statusCode, 204);
      const got = await api.get(`/v1/layouts/${first._id}`);
      assert.equal(got.statusCode, 200, got.body);
      const layout = got.json().data;
      assert.deepEqual(
        { ...layout, createdAt: typeof layout.createdAt, updatedAt: typeof layout.updatedAt },
        {
          _id: first._id,
          _organizationId: orgId,
          _environmentId: dev.environmentId,
          _creatorId: layout._creatorId,
          name: "Layout layout-one",
          identifier: "layout-one",
          description: "Amazing new layout",
          channel: "email",
          content: CONTENT,
          contentType: "customHtml",
          variables: VARIABLES,
          isDefault: true,
          isDeleted: false,
          createdAt: "string",
          updatedAt: "string",
        },
      );
      assert.ok(layout._creatorId);
      // The variables are what the content reads; a default for a variable it does not read is dropped.
      ctx.clock.advance(1000);
      const extracted = await create(api, "layout-vars", {
        content: "{{{body}}} {{footer}} {{subscriber.firstName}}",
        variables: [{ name: "unused", defaultValue: "x" }],
      });
      assert.deepEqual((await api.get(`/v1/layouts/${extracted._id}`)).json().data.variables, [
        { name: "footer", type: "String", required: false },
      ]);

      refused(
        await api.post("/v1/layouts", { name: "Again", identifier: "layout-one", content: CONTENT }),
        409,
        {
          message: new RegExp(
            `^Layout with identifier: layout-one already exists under environment ${dev.environmentId}$`,
          ),
        },
      );

      // A new default takes over; so does one made default by a change, or by /default.
      ctx.clock.advance(1000);
      const second = await create(api, "layout-two", { isDefault: true });
      assert.deepEqual([await isDefault(api, first._id), await isDefault(api, second._id)], [false, true]);
      ctx.clock.advance(1000);
      const third = await create(api, "layout-three");
      assert.equal(third.isDefault, false);
      const patched = await api.patch(`/v1/layouts/${third._id}`, { isDefault: true });
      assert.equal(patched.statusCode, 200, patched.body);
      assert.deepEqual([await isDefault(api, second._id), await isDefault(api, third._id)], [false, true]);
      const setDefault = await api.post(`/v1/layouts/${first._id}/default`);
      assert.equal(setDefault.statusCode, 204, setDefault.body);
      assert.equal(setDefault.body, "");
      assert.deepEqual([await isDefault(api, first._id), await isDefault(api, third._id)], [true, false]);
      refused(await api.patch(`/v1/layouts/${first._id}`, { isDefault: false }), 409, {
        message: /^One default layout is required$/,
      });

      // Pages: oldest first unless orderBy=-1; unknown parameters are ignored.
      const names = async (query: string) => {
        const res = await api.get(`/v1/layouts?${query}`);
        assert.equal(res.statusCode, 200, res.body);
        const body = res.json();
        return { ...body, data: body.data.map((l: { identifier: string }) => l.identifier) };
      };
      assert.deepEqual(await names("unsupportedParam=whatever"), {
        page: 0,
        pageSize: 10,
        totalCount: 4,
        data: ["layout-one", "layout-vars", "layout-two", "layout-three"],
      });
      assert.deepEqual((await names("sortBy=createdAt&orderBy=-1&pageSize=2")).data, [
        "layout-three",
        "layout-two",
      ]);
      assert.deepEqual(await names("page=1&pageSize=3"), {
        page: 1,
        pageSize: 3,
        totalCount: 4,
        data: ["layout-three"],
      });
      assert.deepEqual((await names("page=2&pageSize=2")).data, []);
      for (const query of ["page=-1", "pageSize=1.5", "page=first", "pageSize=1001", "orderBy=2"]) {
        refused(await api.get(`/v1/layouts?${query}`), 400, { fields: [query.split("=")[0] ?? ""] });
      }

      // Changes: an empty change is refused; the fields sent change; a taken identifier is refused.
      const url = `/v1/layouts/${second._id}`;
      // An empty change is refused (a missing body too, in the words of any missing body).
      refused(await api.patch(url, {}), 400, { message: /^Payload can not be empty$/ });
      refused(await api.patch(url), 400, { fields: ["body"] });
      const changed = await api.patch(url, {
        name: "Renamed",
        identifier: "layout-two-renamed",
        description: "Less amazing",
        content: "{{{body}}}",
        variables: [],
      });
      assert.equal(changed.statusCode, 200, changed.body);
      const after = changed.json().data;
      assert.deepEqual(
        [
          after._id,
          after.name,
          after.identifier,
          after.description,
          after.content,
          after.variables,
          after.isDefault,
        ],
        [second._id, "Renamed", "layout-two-renamed", "Less amazing", "{{{body}}}", [], false],
      );
      refused(await api.patch(url, { identifier: "layout-one" }), 409, {
        message: new RegExp(
          `^Layout with identifier: layout-one already exists under environment ${dev.environmentId}$`,
        ),
      });
      refused(await api.patch(url, { content: "no body" }), 400, { fields: ["content"] });

      // The default cannot be deleted; another can, and is gone.
      refused(await api.delete(`/v1/layouts/${first._id}`), 409, {
        message: new RegExp(
          `^Layout with id ${first._id} is being used as your default layout, so it can not be deleted$`,
        ),
      });
      const deleted = await api.delete(url);
      assert.equal(deleted.statusCode, 204, deleted.body);
      const missing = "ab12345678901234567890ab";
      for (const [method, path] of [
        ["GET", url],
        ["DELETE", url],
        ["GET", `/v1/layouts/${missing}`],
        ["PATCH", `/v1/layouts/${missing}`],
        ["POST", `/v1/layouts/${missing}/default`],
      ] as const) {
        const res = await api.request({
          method,
          url: path,
          ...(method === "PATCH" ? { payload: { name: "x" } } : {}),
        });
        refused(res, 404, {
          message: new RegExp(
            `^Layout not found for id [0-9a-f]{24} in the environment ${dev.environmentId}$`,
          ),
        });
      }
      refused(await api.get("/v1/layouts/not-an-id"), 400, { fields: ["layoutId"] });

      // Another environment sees none of them.
      const other = ctx.client(prod.apiKey);
      assert.equal((await other.get("/v1/layouts")).json().totalCount, 0);
      refused(await other.get(`/v1/layouts/${first._id}`), 404, {});
      refused(await other.delete(`/v1/layouts/${third._id}`), 404, {});
    });

    /** An email integration (nodemailer) of the key's environment, to a fresh SMTP sink: the sink. */
    async function emailTo(...apiKeys: string[]) {
      const sink = await startSmtpSink();
      sinks.push(sink);
      for (const key of apiKeys) {
        const res = await ctx.client(key).post("/v1/integrations", {
          providerId: "nodemailer",
          channel: "email",
          active: true,
          credentials: {
            host: "127.0.0.1",
            port: String(sink.port),
            secure: false,
            ignoreTls: true,
            from: "team@example.com",
            senderName: "Team",
          },
        });
        assert.equal(res.statusCode, 201, res.body);
      }
      return sink;
    }

    /** Triggers the workflow with the key and answers the HTML of the one email it sends. */
    async function mailOf(sink: SmtpSink, apiKey: string, name: string, payload: Record<string, unknown>) {
      const before = sink.mails.length;
      const res = await ctx.client(apiKey).post("/v1/events/trigger", {
        name,
        to: { subscriberId: `onboarded-${before}`, email: "ada@example.com" },
        payload,
      });
      assert.equal(res.statusCode, 201, res.body);
      await poll(
        async () => sink.mails.length,
        (n) => n > before,
        { what: "the email" },
      );
      return String(sink.mails[before]?.parsed.html);
    }

    test("a new organization's Development has Novu's default layout, which frames an email step that names none (body, preheader, subject, branding); Production has none until it is promoted", async () => {
      const { dev, prod } = await ctx.tenant();
      const api = ctx.client(dev.apiKey);
      const listed = (await api.get("/v1/layouts")).json();
      assert.equal(listed.totalCount, 1);
      const [layout] = listed.data;
      assert.deepEqual(
        {
          name: layout.name,
          identifier: layout.identifier,
          description: layout.description,
          isDefault: layout.isDefault,
          variables: layout.variables,
          channel: layout.channel,
          contentType: layout.contentType,
          _parentId: layout._parentId,
        },
        {
          name: "Default Layout",
          identifier: "novu-default-layout",
          description: "The default layout, made with the environment",
          isDefault: true,
          variables: [],
          channel: "email",
          contentType: "customHtml",
          _parentId: undefined,
        },
      );
      assert.match(layout._creatorId, OBJECT_ID, "the environment's first key");
      assert.match(layout.content, /\{\{\{body\}\}\}/);
      assert.equal((await ctx.client(prod.apiKey).get("/v1/layouts")).json().totalCount, 0);
      // Being the default, it cannot be deleted.
      refused(await api.delete(`/v1/layouts/${layout._id}`), 409, { message: /default layout/ });

      const sink = await emailTo(dev.apiKey, prod.apiKey);
      const steps = [
        {
          template: {
            type: "email",
            subject: "Order {{orderId}}",
            preheader: "Order {{orderId}} is on its way",
            content: "<p>Order {{orderId}} shipped</p>",
          },
        },
      ];
      const made = await api.post("/v1/workflows", {
        name: uniqueName("Onboarded"),
        notificationGroupId: dev.generalGroupId,
        active: true,
        steps,
      });
      assert.equal(made.statusCode, 201, made.body);
      const name = made.json().data.triggers[0].identifier;

      // The body in the card, under the brand colour (Novu's #f47373 while none is set), the preheader
      // hidden before it, the subject as the title; payload values escaped once each; no logo yet.
      const html = await mailOf(sink, dev.apiKey, name, { orderId: "<A&1>" });
      assert.match(html, /^<!DOCTYPE html>/);
      assert.match(html, /<title>Order &lt;A&amp;1&gt;<\/title>/);
      assert.match(
        html,
        /<div style="display:none;max-height:0;overflow:hidden;">Order &lt;A&amp;1&gt; is on its way<\/div>/,
      );
      assert.match(
        html,
        /border-top:4px solid #f47373;[^>]*>\n<p>Order &lt;A&amp;1&gt; shipped<\/p>\n<\/td>/,
      );
      assert.doesNotMatch(html, /<img/);

      // The organization's branding shows: its logo above the card, its colour, font and background.
      const branded = await api.put("/v1/organizations/branding", {
        color: "#123456",
        logo: "https://cdn.example.com/logo.png",
        fontFamily: "Georgia",
        contentBackground: "#fafafa",
      });
      assert.equal(branded.statusCode, 200, branded.body);
      const brandedHtml = await mailOf(sink, dev.apiKey, name, { orderId: "B-2" });
      assert.match(brandedHtml, /<img src="https:\/\/cdn\.example\.com\/logo\.png"/);
      assert.match(
        brandedHtml,
        /background-color:#fafafa;border-top:4px solid #123456;[^"]*font-family:Georgia;[^>]*>\n<p>Order B-2 shipped<\/p>/,
      );

      // Production has no layout yet: its own workflow's email is the step's HTML as it is.
      const own = await ctx.client(prod.apiKey).post("/v1/workflows", {
        name: uniqueName("Production's own"),
        notificationGroupId: prod.generalGroupId,
        active: true,
        steps,
      });
      assert.equal(own.statusCode, 201, own.body);
      assert.equal(
        await mailOf(sink, prod.apiKey, own.json().data.triggers[0].identifier, { orderId: "P-1" }),
        "<p>Order P-1 shipped</p>",
      );

      // The layout is a change of its own: the workflow applied alone (it names no layout) leaves
      // Production's emails as they are; the layout applied, they are framed there too.
      const workflowId = made.json().data._id;
      assert.equal((await api.post(`/v1/changes/${workflowId}/apply`)).statusCode, 201);
      assert.equal(await mailOf(sink, prod.apiKey, name, { orderId: "P-2" }), "<p>Order P-2 shipped</p>");
      assert.equal((await api.post(`/v1/changes/${layout._id}/apply`)).statusCode, 201);
      const copy = (await ctx.client(prod.apiKey).get("/v1/layouts")).json().data[0];
      assert.deepEqual(
        [copy.identifier, copy.isDefault, copy._parentId],
        ["novu-default-layout", true, layout._id],
      );
      assert.match(
        await mailOf(sink, prod.apiKey, name, { orderId: "P-3" }),
        /border-top:4px solid #123456;[^>]*>\n<p>Order P-3 shipped<\/p>/,
      );
    });

    test("an email is sent inside its step's layout, else the default one, with the layout's variable defaults; a used layout cannot be deleted; promotion takes layouts along", async () => {
      const { dev, prod } = await ctx.tenant();
      const api = ctx.client(dev.apiKey);
      const sink = await emailTo(dev.apiKey, prod.apiKey);
      const [devDefault] = (await api.get("/v1/layouts")).json().data;
      const framed = await create(api, "framed", {
        content:
          '<main data-layout="framed" style="color:{{branding.color}}">{{greeting}} {{{body}}} {{orderId}}</main>',
        variables: [{ name: "greeting", defaultValue: "Hi there" }],
        isDefault: true,
      });
      const special = await create(api, "special", { content: "<section>{{subject}}|{{{body}}}</section>" });
      // The organization's branding: {{branding.*}} in layouts and emails.
      const branded = await api.put("/v1/organizations/branding", {
        color: "#123456",
        logo: "https://cdn.example.com/logo.png",
      });
      assert.equal(branded.statusCode, 200, branded.body);

      const workflowRes = await api.post("/v1/workflows", {
        name: uniqueName("Layouts"),
        notificationGroupId: dev.generalGroupId,
        active: true,
        steps: [
          {
            template: { type: "email", subject: "Default {{orderId}}", content: "<p>Order {{orderId}}</p>" },
          },
          {
            template: {
              type: "email",
              subject: "Special",
              content: '<p>Special {{orderId}}</p><img src="{{branding.logo}}">',
              _layoutId: special._id,
            },
          },
        ],
      });
      assert.equal(workflowRes.statusCode, 201, workflowRes.body);
      const workflow = workflowRes.json().data;
      const name = workflow.triggers[0].identifier;

      const send = async (client: Client, payload: Record<string, unknown>) => {
        const before = sink.mails.length;
        const res = await client.post("/v1/events/trigger", {
          name,
          to: { subscriberId: `layout-${Date.now()}-${sink.mails.length}`, email: "ada@example.com" },
          payload,
        });
        assert.equal(res.statusCode, 201, res.body);
        await poll(
          async () => sink.mails.length,
          (n) => n >= before + 2,
          { what: "two emails" },
        );
        const mails = sink.mails
          .slice(before)
          .map((m) => ({ subject: m.parsed.subject, html: String(m.parsed.html) }));
        return mails.sort((a, b) => String(a.subject).localeCompare(String(b.subject)));
      };

      const [byDefault, bySpecial] = await send(api, { orderId: "A-1" });
      assert.equal(
        byDefault?.html,
        '<main data-layout="framed" style="color:#123456">Hi there <p>Order A-1</p> A-1</main>',
      );
      assert.equal(
        bySpecial?.html,
        '<section>Special|<p>Special A-1</p><img src="https://cdn.example.com/logo.png"></section>',
      );
      const [withGreeting] = await send(api, { orderId: "<b>", greeting: "Hello" });
      assert.equal(
        withGreeting?.html,
        '<main data-layout="framed" style="color:#123456">Hello <p>Order &lt;b&gt;</p> &lt;b&gt;</main>',
      );

      // In use: refused, as the default is.
      refused(await api.delete(`/v1/layouts/${special._id}`), 409, {
        message: new RegExp(`^Layout with id ${special._id} is being used so it can not be deleted$`),
      });

      // Promoted: Production gets copies, and its emails are framed by them.
      const changes = await api.get("/v1/changes?promoted=false");
      assert.equal(changes.statusCode, 200, changes.body);
      const ids = changes.json().data.map((c: { _id: string }) => c._id);
      const applied = await api.post("/v1/changes/bulk/apply", { changeIds: ids });
      assert.equal(applied.statusCode, 201, applied.body);
      const prodApi = ctx.client(prod.apiKey);
      const copies = (await prodApi.get("/v1/layouts"))
        .json()
        .data.sort((a: { identifier: string }, b: { identifier: string }) =>
          a.identifier.localeCompare(b.identifier),
        );
      assert.deepEqual(
        copies.map((l: { identifier: string; isDefault: boolean; _parentId: string }) => [
          l.identifier,
          l.isDefault,
          l._parentId,
        ]),
        [
          ["framed", true, framed._id],
          ["novu-default-layout", false, devDefault._id],
          ["special", false, special._id],
        ],
      );
      const [prodDefault, prodSpecial] = await send(prodApi, { orderId: "P-1" });
      assert.equal(
        prodDefault?.html,
        '<main data-layout="framed" style="color:#123456">Hi there <p>Order P-1</p> P-1</main>',
      );
      assert.equal(
        prodSpecial?.html,
        '<section>Special|<p>Special P-1</p><img src="https://cdn.example.com/logo.png"></section>',
      );
      const prodSpecialId = copies[2]._id;
      refused(await prodApi.delete(`/v1/layouts/${prodSpecialId}`), 409, {
        message: /is being used/,
      });
    });
  },
  { clock: () => new ManualClock(Date.UTC(2026, 5, 1, 12)) },
);
