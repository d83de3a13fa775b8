import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { renderInAppTemplate } from "./in-app-template.ts";
import { templateData } from "./render.ts";

const values = templateData({
  payload: { n: 7, name: "<Ada>", url: "https://example.com/x" },
  subscriber: { firstName: "Grace" },
});

describe("the in-app step's template", () => {
  test("content (as HTML), subject, avatar, link and buttons rendered; data rendered string by string", () => {
    const rendered = renderInAppTemplate(
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

  test("what is missing or of the wrong type renders as nothing; an unknown target is left out; problems are kept", () => {
    const rendered = renderInAppTemplate(
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
