import assert from "node:assert/strict";
import { test } from "node:test";
import { assertErrorBody } from "../../test/error-body.ts";
import { uniqueName } from "../../test/factories.ts";
import { forEachBackend } from "../../test/harness.ts";

forEachBackend("POST /v1/workflows: templates", (ctx) => {
  test("a template that does not compile is a 400 naming the field, and nothing is saved", async () => {
    const { dev } = await ctx.tenant();
    const api = ctx.client(dev.apiKey);
    const cases: [Record<string, unknown>[], string[], RegExp][] = [
      [
        [{ template: { type: "in_app", content: "Hello {{name" } }],
        ["steps[0].template.content"],
        /^steps\[0\]\.template\.content does not compile as a Handlebars template: parse error on line 1/,
      ],
      [
        [
          { template: { type: "sms", content: "Code {{code}}" } },
          { template: { type: "email", subject: "{{#if vip}}VIP", content: "ok" } },
        ],
        ["steps[1].template.subject"],
        /^steps\[1\]\.template\.subject does not compile/,
      ],
      [
        [
          {
            template: { type: "email", subject: "Hi", content: [{ type: "text", content: "{{> footer}}" }] },
          },
        ],
        ["steps[0].template.content[0].content"],
        /partials are not supported/,
      ],
      [
        [
          {
            template: { type: "in_app", content: "{{#each items}}x{{/if}}", cta: { data: { url: "/{{id" } } },
          },
        ],
        ["steps[0].template.content", "steps[0].template.cta.data.url"],
        /^steps\[0\]\.template\.content does not compile as a Handlebars template: each doesn't match if/,
      ],
      [
        [{ template: { type: "sms", content: "{{#if a b}}x{{/if}}" } }],
        ["steps[0].template.content"],
        /takes exactly one argument/,
      ],
    ];
    for (const [steps, fields, message] of cases) {
      const res = await api.post("/v1/workflows", {
        name: uniqueName("Broken template"),
        notificationGroupId: dev.generalGroupId,
        steps,
      });
      assertErrorBody(res, 400, { path: "/v1/workflows", fields, message });
    }
    const list = await api.get("/v1/workflows");
    assert.equal(list.json().totalCount, 0, "no workflow was saved");
  });

  test("templates that compile are saved and their payload variables listed from the syntax tree", async () => {
    const { dev } = await ctx.tenant();
    const res = await ctx.client(dev.apiKey).post("/v1/workflows", {
      name: uniqueName("Good templates"),
      notificationGroupId: dev.generalGroupId,
      steps: [
        {
          template: {
            type: "in_app",
            content:
              "{{#each items}}{{name}}{{/each}} {{#with user}}{{plan}}{{/with}} {{uppercase (lowercase title)}} " +
              "{{subscriber.firstName}} {{!-- {{commented}} --}}",
            cta: { data: { url: "https://example.test/{{payload.orderId}}" } },
          },
        },
      ],
    });
    assert.equal(res.statusCode, 201, res.body);
    assert.deepEqual(
      res.json().data.triggers[0].variables,
      ["items", "user", "user.plan", "title", "orderId"].map((name) => ({ name })),
    );
  });
});
