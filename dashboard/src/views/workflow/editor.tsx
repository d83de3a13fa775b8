import { useState } from "preact/hooks";
import { api, ok } from "../../api.ts";
import { Problem, useLoad, when } from "../../common.tsx";
import type { Workflow } from "../../types.ts";
import { ActiveSwitch } from "./active-switch.tsx";
import { CodeStep, codeOf } from "./code-step.tsx";
import { Check, Choice, JsonObjectField, Text } from "./fields.tsx";
import {
  CHANNELS,
  createBody,
  draftOf,
  examplePayload,
  type JsonObject,
  NEW_SETTINGS,
  newStep,
  pageMessage,
  parseTags,
  SEVERITIES,
  type Settings,
  type Severity,
  STEP_TYPES,
  type StepDraft,
  type StepType,
  type StepValue,
  same,
  settingsOf,
  stepNamed,
  summary,
  typeLabel,
  updateBody,
} from "./model.ts";
import { StepPreview } from "./preview.tsx";
import { StepEditor } from "./step-editor.tsx";
import { TestSend } from "./test-send.tsx";
import "./workflow.css";

/** The step types a new step can have, as the page offers them. */
const ADDABLE = STEP_TYPES.filter(([type]) => type !== "trigger");

/** What the page says after it moved to a workflow it just created. */
let flash: string | null = null;

/**
 * A workflow's page (id null: a new one): its settings, its steps as a flow from the trigger to the
 * last step, the selected step's settings with its preview beside them, and "Send test". Each
 * workflow's page starts afresh.
 */
export function WorkflowEditor({ id }: { id: string | null }) {
  return <Editor key={id ?? ""} id={id} />;
}

function Editor({ id }: { id: string | null }) {
  const groups = useLoad(() => ok(api.GET("/v1/notification-groups")), []);
  const [stored, setStored] = useState<Workflow | null>(null);
  const [settings, setSettings] = useState<Settings>(NEW_SETTINGS);
  const [tagsText, setTagsText] = useState("");
  const [steps, setSteps] = useState<StepDraft[]>([]);
  const [selected, setSelected] = useState(0);
  const [invalid, setInvalid] = useState<ReadonlySet<string>>(new Set());
  const [error, setError] = useState<string | null>(null);
  const [status, setStatus] = useState<string | null>(() => {
    const said = flash;
    flash = null;
    return said;
  });
  const [testing, setTesting] = useState(false);
  const [payloadText, setPayloadText] = useState("{}");
  /** A code workflow's control values as typed, by step id (what its previews render with). */
  const [controls, setControls] = useState<Record<string, JsonObject>>({});

  function show(workflow: Workflow, resetPayload: boolean) {
    setStored(workflow);
    setSettings(settingsOf(workflow));
    setTagsText(workflow.tags.join(", "));
    setSteps(workflow.steps.map(draftOf));
    setControls(
      Object.fromEntries(workflow.steps.map((s) => [s._id, codeOf(s)?.controlValues ?? {}] as const)),
    );
    if (resetPayload) setPayloadText(JSON.stringify(examplePayload(workflow), null, 2));
  }

  const loaded = useLoad(async () => {
    if (id === null) return null;
    const { data } = await ok(
      api.GET("/v1/workflows/{workflowId}", { params: { path: { workflowId: id } } }),
    );
    show(data, true);
    setSelected(0);
    return data;
  }, [id]);

  const groupId = settings.notificationGroupId || groups.data?.data[0]?._id || "";
  const set = (change: Partial<Settings>) => setSettings({ ...settings, ...change });
  const onValidity = (field: string, valid: boolean) =>
    setInvalid((current) => {
      if (valid !== current.has(field)) return current;
      const next = new Set(current);
      if (valid) next.delete(field);
      else next.add(field);
      return next;
    });
  const originalOf = (draft: StepDraft): StepValue | undefined =>
    stored?.steps.find((s) => draft.value._id !== undefined && s._id === draft.value._id) as
      | StepValue
      | undefined;

  async function save(event: Event) {
    event.preventDefault();
    setError(null);
    setStatus(null);
    if (invalid.size > 0) {
      setError("A JSON field is not a valid JSON object: correct it, or empty it, before saving.");
      return;
    }
    const current = { ...settings, notificationGroupId: groupId };
    try {
      if (stored === null) {
        const { data } = await ok(api.POST("/v1/workflows", { body: createBody(current, steps) }));
        flash = "Workflow created.";
        location.hash = `#/workflows/${encodeURIComponent(data._id)}`;
        return;
      }
      const body = updateBody(stored, current, steps);
      if (Object.keys(body).length === 0) {
        setStatus("No changes to save.");
        return;
      }
      const { data } = await ok(
        api.PUT("/v1/workflows/{workflowId}", { params: { path: { workflowId: stored._id } }, body }),
      );
      show(data, false);
      setStatus("Workflow saved.");
    } catch (failure) {
      const message = (failure as Error).message;
      const step = stepNamed(message);
      if (step !== undefined && step < steps.length) setSelected(step);
      setError(pageMessage(message));
    }
  }

  function addStep(type: StepType) {
    setSteps([...steps, newStep(type)]);
    setSelected(steps.length);
  }
  function moveStep(index: number, by: -1 | 1) {
    const next = [...steps];
    const [moved] = next.splice(index, 1);
    if (!moved) return;
    next.splice(index + by, 0, moved);
    setSteps(next);
    setSelected(index + by);
  }
  function removeStep(index: number) {
    setSteps(steps.filter((_, i) => i !== index));
    setSelected(Math.max(0, Math.min(index, steps.length - 2)));
  }

  const current = steps[selected];
  /** A workflow defined in code (synced from its app's bridge): its steps are the app's. */
  const isCode = stored?.origin === "external";
  const storedStep = stored?.steps[selected];
  const identifier = stored?.triggers[0]?.identifier;
  const title = id === null ? "New workflow" : `Edit workflow ${loaded.data?.name ?? ""}`;
  return (
    <section aria-labelledby="editor-title" class="workflow-page">
      <p>
        <a href="#/workflows">Back to workflows</a>
      </p>
      <div class="title-row">
        <h1 id="editor-title">{title}</h1>
        {isCode && <span class="tag">Defined in code</span>}
        {stored && (
          <div class="toolbar">
            <ActiveSwitch workflow={stored} onChanged={(w) => setStored({ ...stored, active: w.active })} />
            <button type="button" onClick={() => setTesting(true)}>
              Send test
            </button>
          </div>
        )}
      </div>
      {stored && (
        <p class="hint">
          Last updated {when(stored.updatedAt)}
          {stored.active ? "" : " · inactive: a trigger is recorded but runs nothing"}
        </p>
      )}
      <Problem message={loaded.error ?? groups.error} />
      <form onSubmit={save} aria-labelledby="editor-title">
        <fieldset class="settings">
          <legend>Workflow settings</legend>
          <div class="grid3">
            <Text
              id="workflow-name"
              label="Name"
              value={settings.name}
              required
              onChange={(name) => set({ name })}
            />
            {stored && !isCode && (
              <Text
                id="workflow-identifier"
                label="Trigger identifier"
                value={settings.identifier}
                hint="What a trigger names the workflow by"
                onChange={(value) => set({ identifier: value })}
              />
            )}
            <Choice
              id="workflow-group"
              label="Group"
              value={groupId}
              options={(groups.data?.data ?? []).map((g) => [g._id, g.name] as const)}
              onChange={(notificationGroupId) => set({ notificationGroupId })}
            />
            <Choice<Severity>
              id="workflow-severity"
              label="Severity"
              value={settings.severity}
              options={SEVERITIES}
              onChange={(severity) => set({ severity })}
            />
            <Text
              id="workflow-tags"
              label="Tags"
              value={tagsText}
              hint="Separated by commas"
              onChange={(text) => {
                setTagsText(text);
                const tags = parseTags(text);
                if (!same(tags, settings.tags)) set({ tags });
              }}
            />
            <Text
              id="workflow-description"
              label="Description"
              value={settings.description}
              onChange={(description) => set({ description })}
            />
          </div>
          <div class="grid3">
            <fieldset>
              <legend>Channels on by default</legend>
              <div class="checks">
                {CHANNELS.map(([channel, label]) => (
                  <Check
                    key={channel}
                    id={`workflow-channel-${channel}`}
                    label={label}
                    checked={settings.preferenceSettings[channel]}
                    onChange={(on) =>
                      set({ preferenceSettings: { ...settings.preferenceSettings, [channel]: on } })
                    }
                  />
                ))}
              </div>
            </fieldset>
            <div>
              <Check
                id="workflow-critical"
                label="Critical: sent whatever the subscriber's preferences"
                checked={settings.critical}
                onChange={(critical) => set({ critical })}
              />
            </div>
            <JsonObjectField
              id="workflow-data"
              label="Workflow data (JSON)"
              rows={3}
              value={settings.data}
              onChange={(data) => set({ data: data ?? {} })}
              onValidity={onValidity}
            />
          </div>
        </fieldset>

        <div class="flow-layout">
          <nav class="flow-pane" aria-label="Flow">
            <h2>Flow</h2>
            <ol class="flow">
              <li class="flow-node trigger">
                <span class="channel">Trigger</span>
                <span class="flow-summary">
                  {identifier ? <code>{identifier}</code> : "identifier made from the name"}
                  {stored?.triggers[0]?.variables.length ? (
                    <> · payload: {stored.triggers[0].variables.map((v) => v.name).join(", ")}</>
                  ) : null}
                </span>
              </li>
              {steps.map((draft, index) => (
                <li
                  key={draft.key}
                  class={`flow-node type-${draft.value.template.type}${draft.value.active === false ? " off" : ""}`}
                >
                  <button
                    type="button"
                    aria-current={index === selected ? "step" : undefined}
                    onClick={() => setSelected(index)}
                  >
                    <span class="channel">
                      Step {index + 1}: {typeLabel(draft.value.template.type)}
                    </span>
                    <span class="flow-summary">
                      {isCode ? `${draft.value.name ?? ""} · from code` : summary(draft.value)}
                    </span>
                  </button>
                </li>
              ))}
            </ol>
            {isCode ? (
              <p class="hint">The steps are the app's: change them in its code and sync again.</p>
            ) : (
              <>
                {steps.length === 0 && <p class="hint">No steps yet: add the first.</p>}
                <div class="add-steps">
                  {ADDABLE.map(([type, label]) => (
                    <button key={type} type="button" onClick={() => addStep(type)}>
                      Add {label === "SMS" ? label : label.toLowerCase()} step
                    </button>
                  ))}
                </div>
              </>
            )}
          </nav>
          {current ? (
            <>
              <div class="step-pane">
                {isCode && stored && storedStep ? (
                  <CodeStep
                    key={storedStep._id}
                    workflow={stored}
                    step={storedStep}
                    index={selected}
                    controls={controls[storedStep._id] ?? {}}
                    onControls={(value) => setControls({ ...controls, [storedStep._id]: value })}
                    onSaved={(workflow) => {
                      // The steps as stored now; the settings as typed (not saved yet) stay.
                      setStored(workflow);
                      setSteps(workflow.steps.map(draftOf));
                    }}
                  />
                ) : (
                  <StepEditor
                    key={current.key}
                    draft={current}
                    original={originalOf(current)}
                    index={selected}
                    count={steps.length}
                    onChange={(value) =>
                      setSteps(steps.map((s) => (s.key === current.key ? { ...s, value } : s)))
                    }
                    onMove={(by) => moveStep(selected, by)}
                    onRemove={() => removeStep(selected)}
                    onValidity={onValidity}
                  />
                )}
              </div>
              <aside class="preview-pane" aria-label="Preview">
                {stored && (
                  <StepPreview
                    workflowId={stored._id}
                    stepId={originalOf(current)?._id}
                    type={current.value.template.type}
                    payloadText={payloadText}
                    label={`Preview of step ${selected + 1}`}
                    stepSummary={summary(current.value)}
                    code={isCode && storedStep ? { controls: controls[storedStep._id] } : undefined}
                    edited={
                      same(current.value.template, originalOf(current)?.template)
                        ? undefined
                        : (current.value.template as JsonObject)
                    }
                  />
                )}
                {!stored && <p class="hint">Save the workflow to preview its steps.</p>}
                {stored && <p class="hint">Rendered with the payload of “Send test”.</p>}
              </aside>
            </>
          ) : null}
        </div>
        <div class="save-bar">
          <button type="submit" class="primary">
            Save
          </button>
          <Problem message={error} />
          <p role="status" aria-live="polite">
            {status}
          </p>
        </div>
      </form>
      {testing && stored && (
        <TestSend
          workflow={stored}
          payloadText={payloadText}
          onPayloadText={setPayloadText}
          onClose={() => setTesting(false)}
          unsaved={
            Object.keys(updateBody(stored, { ...settings, notificationGroupId: groupId }, steps)).length > 0
          }
        />
      )}
    </section>
  );
}
