import { useEffect, useState } from "preact/hooks";
import { api, ok } from "../../api.ts";
import { controlValuesOf, isChannel, isObject, type JsonObject, textOf } from "./model.ts";

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
  stepSummary = "",
  subscriber,
  code,
}: {
  workflowId: string;
  stepId: string | undefined;
  type: string;
  payloadText: string;
  label: string;
  /** The step's template as the form has it, when it differs from the stored one. */
  edited?: JsonObject | undefined;
  /** The step in a line (model.ts's summary), for the steps that render nothing. */
  stepSummary?: string;
  /** The subscriber to render for (its fields), else the API's example one. */
  subscriber?: JsonObject | undefined;
  /**
   * A step defined in code: rendered by its app's bridge (POST /v1/bridge/preview), with these
   * control values (the stored ones when undefined).
   */
  code?: { controls: JsonObject | undefined } | undefined;
}) {
  const [state, setState] = useState<{ preview?: JsonObject; problem?: string }>({});
  const parsed = parsePayload(payloadText);
  const payloadKey = "payload" in parsed ? JSON.stringify(parsed.payload) : null;
  const controlsKey = edited && isChannel(type) ? JSON.stringify(controlValuesOf(edited)) : null;
  const subscriberKey = subscriber ? JSON.stringify(subscriber) : null;
  const codeKey = code ? JSON.stringify(code.controls ?? null) : null;
  useEffect(() => {
    if (!stepId || codeKey === null || payloadKey === null) return;
    let current = true;
    const timer = setTimeout(() => {
      const controls: unknown = JSON.parse(codeKey);
      ok(
        api.POST("/v1/bridge/preview/{workflowId}/{stepId}", {
          params: { path: { workflowId, stepId } },
          body: {
            payload: JSON.parse(payloadKey),
            ...(subscriberKey === null ? {} : { subscriber: JSON.parse(subscriberKey) }),
            ...(isObject(controls) ? { controls } : {}),
          },
        }),
      ).then(
        ({ data }) => current && setState({ preview: isObject(data.outputs) ? data.outputs : {} }),
        (error: Error) => current && setState({ problem: error.message }),
      );
    }, 250);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [workflowId, stepId, codeKey, payloadKey, subscriberKey]);
  useEffect(() => {
    if (!stepId || !isChannel(type) || payloadKey === null || codeKey !== null) return;
    let current = true;
    const timer = setTimeout(() => {
      ok(
        api.POST("/v2/workflows/{workflowId}/step/{stepId}/preview", {
          params: { path: { workflowId, stepId } },
          body: {
            previewPayload: {
              payload: JSON.parse(payloadKey),
              ...(subscriberKey === null ? {} : { subscriber: JSON.parse(subscriberKey) }),
            },
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
  }, [workflowId, stepId, type, payloadKey, controlsKey, subscriberKey, codeKey]);

  let body = null;
  if (code) {
    if (!stepId) body = null;
    else if ("problem" in parsed) body = <p class="hint">{parsed.problem}</p>;
    else if (state.problem) body = <p class="hint invalid">{state.problem}</p>;
    else if (!state.preview) body = <p class="hint">Rendering…</p>;
    else if (isChannel(type)) body = <Rendered type={type} preview={state.preview} />;
    else body = <pre>{JSON.stringify(state.preview, null, 2)}</pre>;
    return (
      <section class="preview" aria-label={label}>
        <h3>{label}</h3>
        <p class="hint">Rendered by the app's bridge.</p>
        {body}
      </section>
    );
  }
  const said = stepSummary.split(" · ")[0] ?? "";
  const plain = said.charAt(0).toUpperCase() + said.slice(1);
  if (type === "delay") body = <p>{plain}, then the next step runs.</p>;
  else if (type === "digest")
    body = <p>{plain}: the steps after it run once for all the events collected.</p>;
  else if (type === "throttle")
    body = <p>{plain}: runs past that end here, and the steps after it do not run for them.</p>;
  else if (!isChannel(type))
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
