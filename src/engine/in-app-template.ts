import type { MessageButton, MessageCta } from "./domain.ts";

/** What an in-app step's template renders to: the message's own fields, and what went wrong. */
export interface RenderedInApp {
  content: string;
  subject: string;
  avatar: string;
  cta: MessageCta;
  data: Record<string, unknown>;
  problems: string[];
}

// Where a link may open, as Novu's inbox accepts it; anything else is left out.
const TARGETS = new Set(["_self", "_blank", "_parent", "_top", "_unfencedTop"]);
const BUTTON_TYPES = new Set(["primary", "secondary"]);
const MAX_DATA_DEPTH = 16;

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);

// An in-app step's template as Novu's in-app step reads it (docs/engine.md, "The inbox"): `content`
// (as HTML), `subject` and `avatar`, where the message leads (`cta.data.url`, with its `target`), its
// action buttons (`cta.action.buttons`: a primary and a secondary, each with its `content` and `url`
// rendered), and `data`, an object whose every string is a template. A value of the wrong type
// renders as nothing; the problems of every field are collected. The fields are rendered by the
// renderer, within its limits (renderer.ts), and put together here.

/**
 * The template's text fields by the name each renders under (`content`, `cta.data.url`,
 * `data.order.id`...): what a renderer with limits renders in one go before `assembleInApp`.
 */
export function inAppTemplateFields(template: Record<string, unknown>): Record<string, string> {
  const fields: Record<string, string> = {};
  buildInApp(template, (field, value) => {
    if (typeof value === "string") fields[field] = value;
    return "";
  });
  return fields;
}

/** The message's fields from texts rendered elsewhere, by the names `inAppTemplateFields` gave. */
export function assembleInApp(
  template: Record<string, unknown>,
  texts: ReadonlyMap<string, { text: string }>,
  problems: string[],
): RenderedInApp {
  const built = buildInApp(template, (field, value) =>
    typeof value === "string" ? (texts.get(field)?.text ?? "") : "",
  );
  return { ...built, problems };
}

/** The message's fields, each text field through `render`: one walk of the template for all uses. */
function buildInApp(
  template: Record<string, unknown>,
  render: (field: string, value: unknown) => string,
): Omit<RenderedInApp, "problems"> {
  const cta = isObject(template.cta) ? template.cta : {};
  const link = isObject(cta.data) ? cta.data : {};
  const url = render("cta.data.url", link.url);
  const target = typeof link.target === "string" && TARGETS.has(link.target) ? link.target : undefined;
  const action = isObject(cta.action) ? cta.action : {};
  const buttons: MessageButton[] = [];
  if (Array.isArray(action.buttons)) {
    for (const [i, button] of action.buttons.entries()) {
      if (!isObject(button) || typeof button.type !== "string" || !BUTTON_TYPES.has(button.type)) continue;
      // One of each, the first of its type: the inbox shows a primary and a secondary action.
      if (buttons.some((b) => b.type === button.type)) continue;
      const buttonUrl = render(`cta.action.buttons[${i}].url`, button.url);
      buttons.push({
        type: button.type as MessageButton["type"],
        content: render(`cta.action.buttons[${i}].content`, button.content),
        ...(buttonUrl !== "" ? { url: buttonUrl } : {}),
        ...(typeof button.target === "string" && TARGETS.has(button.target) ? { target: button.target } : {}),
      });
    }
  }

  return {
    content: render("content", template.content),
    subject: render("subject", template.subject),
    avatar: render("avatar", template.avatar),
    cta: {
      type: typeof cta.type === "string" ? cta.type : "redirect",
      data: { ...(url !== "" ? { url } : {}), ...(target !== undefined ? { target } : {}) },
      ...(buttons.length > 0 ? { action: { buttons } } : {}),
    },
    data: isObject(template.data) ? renderData(template.data, "data", render, 0) : {},
  };
}

/** Every string of `value` rendered, everything else kept as it is. */
function renderData(
  value: Record<string, unknown>,
  path: string,
  render: (field: string, value: unknown) => string,
  depth: number,
): Record<string, unknown> {
  const rendered: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value))
    rendered[key] = renderValue(item, `${path}.${key}`, render, depth);
  return rendered;
}

function renderValue(
  value: unknown,
  path: string,
  render: (field: string, value: unknown) => string,
  depth: number,
): unknown {
  if (typeof value === "string") return render(path, value);
  if (depth >= MAX_DATA_DEPTH) return value;
  if (Array.isArray(value))
    return value.map((item, i) => renderValue(item, `${path}[${i}]`, render, depth + 1));
  if (isObject(value)) return renderData(value, path, render, depth + 1);
  return value;
}
