import { useEffect, useState } from "preact/hooks";
import { api, ok } from "../../api.ts";
import { isChannel, isObject, type JsonObject, textOf } from "./model.ts";

/** The payload typed as JSON: an object, or why it is not one. */
export function parsePayload(text: string): { payload: JsonObject } | { problem: string } {
  if (text.trim() === "") return { payload: {} };
  try {
    const value: unknown = JSON.parse(text);
    return isObject(value) ? { payload: value } : { problem: "The payload must be a JSON object." };
  } catch (error) {
    return { problem: `The payload is not valid JSON: ${(error as Error).message}` };
  }
}

/** An email's HTML as the text a reader sees (parsed inertly: nothing in it runs or loads). */
function textOfHtml(html: string): string {
  const doc = new DOMParser().parseFromString(html, "text/html");
  return (doc.body.textContent ?? "").replace(/\n{3,}/g, "\n\n").trim();
}

const linkOf = (value: unknown) => (isObject(value) ? textOf(value.url) : "");

function Rendered({ type, preview }: { type: string; preview: JsonObject }) {
  const rows: [string, string][] = [];
  const add = (label: string, value: string) => {
    if (value) rows.push([label, value]);
  };
  if (type === "email") {
    add("Subject", textOf(preview.subject));
    add("Body", textOfHtml(textOf(preview.body)));
  } else {
    add(type === "push" ? "Title" : "Subject", textOf(preview.subject));
    add("Body", textOf(preview.body));
    add("Redirect", linkOf(preview.redirect));
    for (const [key, label] of [
      ["primaryAction", "Primary action"],
      ["secondaryAction", "Secondary action"],
    ] as const) {
      const action = preview[key];
      if (isObject(action)) {
        const target = linkOf(action.redirect);
        add(label, `${textOf(action.label)}${target ? ` → ${target}` : ""}`);
      }
    }
    if (isObject(preview.data)) add("Data", JSON.stringify(preview.data));
  }
  return (
    <>
      <dl class="rendered">
        {rows.map(([label, value]) => (
          <div key={label}>
            <dt>{label}</dt>
            <dd>{value}</dd>
          </div>
        ))}
      </dl>
      {type === "email" && textOf(preview.body) && (
        <details>
          <summary>HTML</summary>
          <pre>{textOf(preview.body)}</pre>
        </details>
      )}
    </>
  );
}

/**
 * A saved step rendered as a run would render it (POST /v2/workflows/:id/step/:stepId/preview) with
 * the payload of the test form: what the subscriber would see.
 */
export function StepPreview({
  workflowId,
  stepId,
  type,
  payloadText,
  label,
  edited,
}: {
  workflowId: string;
  stepId: string | undefined;
  type: string;
  payloadText: string;
  label: string;
  /** The step's template as the form has it, when it differs from the stored one. */
  edited?: JsonObject | undefined;
}) {
  const [state, setState] = useState<{ preview?: JsonObject; problem?: string }>({});
  const parsed = parsePayload(payloadText);
  const payloadKey = "payload" in parsed ? JSON.stringify(parsed.payload) : null;
  const controlsKey = edited && isChannel(type) ? JSON.stringify(controlValuesOf(edited)) : null;
  useEffect(() => {
    if (!stepId || !isChannel(type) || payloadKey === null) return;
    let current = true;
    const timer = setTimeout(() => {
      ok(
        api.POST("/v2/workflows/{workflowId}/step/{stepId}/preview", {
          params: { path: { workflowId, stepId } },
          body: {
            previewPayload: { payload: JSON.parse(payloadKey) },
            ...(controlsKey === null ? {} : { controlValues: JSON.parse(controlsKey) }),
          },
        }),
      ).then(
        ({ data }) => current && setState({ preview: data.result.preview }),
        (error: Error) => current && setState({ problem: error.message }),
      );
    }, 250);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [workflowId, stepId, type, payloadKey, controlsKey]);

  let body = null;
  if (!isChannel(type))
    body = <p class="hint">This step sends nothing itself: there is nothing to preview.</p>;
  else if (!stepId) body = <p class="hint">Save the workflow to preview this step.</p>;
  else if ("problem" in parsed) body = <p class="hint">{parsed.problem}</p>;
  else if (state.problem) body = <p class="hint invalid">{state.problem}</p>;
  else if (state.preview) body = <Rendered type={type} preview={state.preview} />;
  else body = <p class="hint">Rendering…</p>;
  return (
    <section class="preview" aria-label={label}>
      <h3>{label}</h3>
      {edited && isChannel(type) && stepId && <p class="hint">With the changes not saved yet.</p>}
      {body}
    </section>
  );
}

const nonEmpty = (value: unknown) => (typeof value === "string" && value !== "" ? value : undefined);
const link = (url: unknown, target: unknown) => {
  const href = nonEmpty(url);
  if (href === undefined) return undefined;
  return typeof target === "string" && target !== "" ? { url: href, target } : { url: href };
};

/** An email's body as Novu's v2 API shows it: its HTML, or the editor's blocks as paragraphs and links. */
function emailBody(content: unknown): string {
  if (!Array.isArray(content)) return typeof content === "string" ? content : "";
  return content
    .map((block: unknown) => {
      const { type, content: inner, url } = isObject(block) ? block : {};
      const body = typeof inner === "string" ? inner : "";
      return type === "button"
        ? `<p><a href="${typeof url === "string" ? url : ""}">${body}</a></p>`
        : `<p>${body}</p>`;
    })
    .join("\n");
}

/**
 * A channel step's template as the control values of Novu's v2 API (src/workflows/controls.ts reads
 * a stored step the same way): what the preview route renders instead of the stored step, so the
 * preview shows the form's changes before they are saved. A value equal to the stored step's leaves
 * that part as stored.
 */
export function controlValuesOf(template: JsonObject): JsonObject {
  const values: JsonObject = {};
  const put = (key: string, value: unknown) => {
    if (value !== undefined) values[key] = value;
  };
  const cta = isObject(template.cta) ? template.cta : {};
  switch (template.type) {
    case "in_app": {
      put("subject", nonEmpty(template.subject));
      put("body", nonEmpty(template.content) ?? "");
      put("avatar", nonEmpty(template.avatar));
      const action = isObject(cta.action) ? cta.action : {};
      const buttons = Array.isArray(action.buttons) ? action.buttons.filter(isObject) : [];
      for (const type of ["primary", "secondary"] as const) {
        const button = buttons.find((b) => b.type === type);
        if (!button) continue;
        const target = link(button.url, button.target);
        put(`${type}Action`, {
          label: typeof button.content === "string" ? button.content : "",
          ...(target ? { redirect: target } : {}),
        });
      }
      put("redirect", isObject(cta.data) ? link(cta.data.url, cta.data.target) : undefined);
      put("data", isObject(template.data) ? template.data : undefined);
      break;
    }
    case "email": {
      put("subject", nonEmpty(template.subject) ?? "");
      put("body", emailBody(template.content));
      put("preheader", nonEmpty(template.preheader));
      const name = nonEmpty(template.senderName);
      put("from", name === undefined ? undefined : { name });
      break;
    }
    case "push":
      put("subject", nonEmpty(template.title));
      put("body", nonEmpty(template.content) ?? "");
      break;
    default:
      put("body", nonEmpty(template.content) ?? "");
  }
  return values;
}
