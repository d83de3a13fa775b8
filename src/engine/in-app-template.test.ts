import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { assembleInApp, inAppTemplateFields } from "./in-app-template.ts";
import { DEFAULT_RENDER_LIMITS, templateData } from "./render.ts";
import { fieldsToRender, Renderer } from "./renderer.ts";

const values = templateData({
  payload: { n: 7, name: "<Ada>", url: "https://example.com/x" },
  subscriber: { firstName: "Grace" },
});

// The engine's own path (steps/in-app.ts): the template's fields, rendered, then put together. A
// time limit no busy machine reaches: a render out of time is the renderer's test, not this one's.
const renderer = new Renderer({ ...DEFAULT_RENDER_LIMITS, timeoutMs: 60_000 });

async function renderInAppTemplate(template: Record<string, unknown>, data: Record<string, unknown>) {
  const rendering = await renderer.render(fieldsToRender("in_app", inAppTemplateFields(template)), data);
  assert.ok(rendering.ok, "no render limit is reached");
  return assembleInApp(template, rendering.fields, rendering.problems);
}

describe("the in-app step's template", () => {
  test("content (as HTML), subject, avatar, link and buttons rendered; data rendered string by string", async () => {
    const rendered = await renderInAppTemplate(
      {
        type: "in_app",
        content: "Hello {{name}}",
        subject: "Invoice {{n}} for {{subscriber.firstName}}",
        avatar: "https://cdn.example/{{n}}.png",
        cta: {
          type: "redirect",
          data: { url: "/invoices/{{n}}", target: "_blank" },
          action: {
            buttons: [
              { type: "primary", content: "Pay {{n}}", url: "{{url}}", target: "_self" },
              { type: "secondary", content: "Later" },
              { type: "primary", content: "A second primary is left out" },
              { type: "tertiary", content: "Not a button type" },
            ],
          },
        },
        data: {
          invoice: "{{n}}",
          nested: { who: "{{name}}", amount: 12, flag: true },
          list: ["a", "{{n}}"],
          none: null,
        },
      },
      values,
    );
    assert.deepEqual(rendered, {
      content: "Hello &lt;Ada&gt;",
      subject: "Invoice 7 for Grace",
      avatar: "https://cdn.example/7.png",
      cta: {
        type: "redirect",
        data: { url: "/invoices/7", target: "_blank" },
        action: {
          buttons: [
            { type: "primary", content: "Pay 7", url: "https://example.com/x", target: "_self" },
            { type: "secondary", content: "Later" },
          ],
        },
      },
      // Text, not HTML: data is read by the page's own code.
      data: { invoice: "7", nested: { who: "<Ada>", amount: 12, flag: true }, list: ["a", "7"], none: null },
      problems: [],
    });
  });

  test("what is missing or of the wrong type renders as nothing; an unknown target is left out; problems are kept", async () => {
    const rendered = await renderInAppTemplate(
      {
        type: "in_app",
        content: "{{unknownHelper 1}} there",
        subject: 42,
        cta: { data: { url: "", target: "_evil" }, action: { buttons: "no" } },
        data: "not an object",
      },
      values,
    );
    assert.equal(rendered.subject, "");
    assert.equal(rendered.avatar, "");
    assert.deepEqual(rendered.cta, { type: "redirect", data: {} });
    assert.deepEqual(rendered.data, {});
    assert.equal(rendered.problems.length, 1);
    assert.match(rendered.problems[0] ?? "", /unknownHelper/);
  });
});
