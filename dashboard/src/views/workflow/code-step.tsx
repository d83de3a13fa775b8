import { useState } from "preact/hooks";
import { api, ok } from "../../api.ts";
import { Problem } from "../../common.tsx";
import type { Workflow } from "../../types.ts";
import { JsonObjectField } from "./fields.tsx";
import { isObject, type JsonObject, typeLabel } from "./model.ts";

type Step = Workflow["steps"][number];

/** A step's code part (`code: {type, controlValues}`), present on the steps of workflows defined in code. */
export function codeOf(step: unknown): { type: string; controlValues: JsonObject } | undefined {
  const code = isObject(step) ? step.code : undefined;
  if (!isObject(code)) return undefined;
  return {
    type: typeof code.type === "string" ? code.type : "",
    controlValues: isObject(code.controlValues) ? code.controlValues : {},
  };
}

/**
 * A step of a workflow defined in code: what it is, as text (its app owns it), and its control
 * values, the one part of it kept here, edited as JSON and stored through
 * PUT /v1/bridge/controls/:workflowId/:stepId. `onControls` tells the preview what is typed.
 */
export function CodeStep({
  workflow,
  step,
  index,
  controls,
  onControls,
  onSaved,
}: {
  workflow: Workflow;
  step: Step;
  index: number;
  controls: JsonObject;
  onControls: (controls: JsonObject) => void;
  onSaved: (workflow: Workflow) => void;
}) {
  const [valid, setValid] = useState(true);
  const [status, setStatus] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const id = `code-step-${step._id}`;
  const code = codeOf(step);

  async function save() {
    setStatus(null);
    setError(null);
    try {
      const { data } = await ok(
        api.PUT("/v1/bridge/controls/{workflowId}/{stepId}", {
          params: { path: { workflowId: workflow._id, stepId: step._id } },
          body: { controls },
        }),
      );
      onSaved(data);
      setStatus("Control values saved.");
    } catch (failure) {
      setError((failure as Error).message);
    }
  }

  return (
    <section class="step-editor" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>
        Step {index + 1}: {typeLabel(String(step.template.type))}
      </h2>
      <p class="hint">
        Defined in code: the app's bridge renders this step; only its control values are kept here.
      </p>
      <dl class="rendered">
        <div>
          <dt>Step id</dt>
          <dd>
            <code>{step.name}</code>
          </dd>
        </div>
        <div>
          <dt>Type in the app</dt>
          <dd>{code?.type ?? String(step.template.type)}</dd>
        </div>
      </dl>
      <JsonObjectField
        id={`${id}-controls`}
        label="Control values"
        rows={6}
        value={controls}
        onChange={(value) => onControls(value ?? {})}
        onValidity={(_field, ok) => setValid(ok)}
      />
      <div class="toolbar compact">
        <button type="button" disabled={!valid} onClick={save}>
          Save control values
        </button>
      </div>
      <Problem message={error} />
      <p role="status" aria-live="polite">
        {status}
      </p>
    </section>
  );
}
