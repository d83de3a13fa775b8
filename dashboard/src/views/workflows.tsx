import { useState } from "preact/hooks";
import { api, ok } from "../api.ts";
import { Pager, Problem, useLoad } from "../common.tsx";
import type { StepInput, Workflow } from "../types.ts";
import { PublishToProduction } from "./publish.tsx";

const PAGE_SIZE = 10;

/** The switch of one workflow: its state is the API's, set through PUT /v1/workflows/:id/status. */
function ActiveSwitch({ workflow, onChanged }: { workflow: Workflow; onChanged: (w: Workflow) => void }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  async function toggle() {
    setBusy(true);
    setError(null);
    try {
      const { data } = await ok(
        api.PUT("/v1/workflows/{workflowId}/status", {
          params: { path: { workflowId: workflow._id } },
          body: { active: !workflow.active },
        }),
      );
      onChanged(data);
    } catch (failure) {
      setError((failure as Error).message);
    } finally {
      setBusy(false);
    }
  }
  return (
    <>
      <button
        type="button"
        role="switch"
        class="switch"
        aria-checked={workflow.active}
        aria-label={`Active: ${workflow.name}`}
        disabled={busy}
        onClick={toggle}
      >
        <span aria-hidden="true">{workflow.active ? "On" : "Off"}</span>
      </button>
      <Problem message={error} />
    </>
  );
}

export function Workflows() {
  const [page, setPage] = useState(0);
  const [query, setQuery] = useState("");
  const { data, error, reload, setError } = useLoad(
    () =>
      ok(
        api.GET("/v1/workflows", {
          params: { query: { page, limit: PAGE_SIZE, query: query || undefined } },
        }),
      ),
    [page, query],
  );
  const [rows, setRows] = useState<Record<string, Workflow>>({});

  async function remove(workflow: Workflow) {
    if (!confirm(`Delete the workflow “${workflow.name}”?`)) return;
    try {
      await ok(api.DELETE("/v1/workflows/{workflowId}", { params: { path: { workflowId: workflow._id } } }));
      await reload();
    } catch (failure) {
      setError((failure as Error).message);
    }
  }

  const list = (data?.data ?? []).map((w) => rows[w._id] ?? w);
  return (
    <section aria-labelledby="workflows-title">
      <div class="title-row">
        <h1 id="workflows-title">Workflows</h1>
        <button type="button" onClick={() => (location.hash = "#/workflows/new")}>
          New workflow
        </button>
      </div>
      <search>
        <label for="workflow-search">Search workflows</label>
        <input
          id="workflow-search"
          type="search"
          value={query}
          onInput={(event) => {
            setQuery(event.currentTarget.value);
            setPage(0);
          }}
        />
      </search>
      <Problem message={error} />
      <table>
        <caption class="visually-hidden">Workflows, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Trigger identifier</th>
            <th scope="col">Steps</th>
            <th scope="col">Active</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {list.map((workflow) => (
            <tr key={workflow._id}>
              <td>
                <a href={`#/workflows/${encodeURIComponent(workflow._id)}`}>{workflow.name}</a>
              </td>
              <td>
                <code>{workflow.triggers[0]?.identifier}</code>
              </td>
              <td>{workflow.steps.map((s) => s.template.type).join(", ")}</td>
              <td>
                <ActiveSwitch workflow={workflow} onChanged={(w) => setRows({ ...rows, [w._id]: w })} />
              </td>
              <td>
                <button type="button" onClick={() => remove(workflow)} aria-label={`Delete ${workflow.name}`}>
                  Delete
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {data && data.data.length === 0 && <p>No workflows{query ? " match" : " yet"}.</p>}
      {data && (
        <Pager
          label="Workflow"
          page={page}
          hasMore={(page + 1) * PAGE_SIZE < data.totalCount}
          onPage={setPage}
        />
      )}
      <PublishToProduction onPublished={reload} />
    </section>
  );
}

const STEP_TYPES = [
  ["in_app", "in-app"],
  ["email", "email"],
  ["sms", "SMS"],
  ["chat", "chat"],
  ["push", "push"],
  ["delay", "delay"],
  ["digest", "digest"],
] as const;
type StepType = (typeof STEP_TYPES)[number][0];
const UNITS = ["seconds", "minutes", "hours", "days", "weeks", "months"] as const;
const OPERATORS = [
  "EQUAL",
  "NOT_EQUAL",
  "LARGER",
  "SMALLER",
  "LIKE",
  "NOT_LIKE",
  "IN",
  "IS_DEFINED",
] as const;
const FILTER_ON = ["payload", "subscriber", "isOnline"] as const;

interface FilterDraft {
  on: (typeof FILTER_ON)[number];
  field: string;
  operator: (typeof OPERATORS)[number];
  value: string;
}
interface StepDraft {
  key: number;
  _id?: string;
  type: StepType;
  subject: string;
  content: string;
  amount: number;
  unit: (typeof UNITS)[number];
  digestKey: string;
  filters: FilterDraft[];
}

let nextKey = 1;
const typeLabel = (type: string) => STEP_TYPES.find(([t]) => t === type)?.[1] ?? type;
const isTimed = (type: StepType) => type === "delay" || type === "digest";

function draftOf(step: Workflow["steps"][number]): StepDraft {
  const template = step.template as Record<string, unknown>;
  const type = (STEP_TYPES.some(([t]) => t === template.type) ? template.type : "in_app") as StepType;
  return {
    key: nextKey++,
    _id: step._id,
    type,
    subject: typeof template.subject === "string" ? template.subject : "",
    content: typeof template.content === "string" ? template.content : "",
    amount: step.metadata.amount,
    unit: (UNITS as readonly string[]).includes(step.metadata.unit)
      ? (step.metadata.unit as StepDraft["unit"])
      : "seconds",
    digestKey: step.metadata.digestKey,
    filters: step.filters.flatMap((filter) =>
      filter.children.map((child) => ({
        on: (FILTER_ON as readonly string[]).includes(child.on) ? (child.on as FilterDraft["on"]) : "payload",
        field: child.field,
        operator: (OPERATORS as readonly string[]).includes(child.operator)
          ? (child.operator as FilterDraft["operator"])
          : "EQUAL",
        value: child.value,
      })),
    ),
  };
}

function inputOf(step: StepDraft): StepInput {
  const template: StepInput["template"] = isTimed(step.type)
    ? { type: step.type }
    : { type: step.type, content: step.content, ...(step.type === "email" ? { subject: step.subject } : {}) };
  return {
    ...(step._id ? { _id: step._id } : {}),
    template,
    ...(isTimed(step.type)
      ? {
          metadata: {
            amount: step.amount,
            unit: step.unit,
            ...(step.type === "digest" ? { type: "regular" as const, digestKey: step.digestKey } : {}),
          },
        }
      : {}),
    filters:
      step.filters.length === 0
        ? []
        : [
            {
              isNegated: false,
              type: "GROUP",
              value: "AND",
              children: step.filters.map((f) => ({
                on: f.on,
                field: f.field,
                operator: f.operator,
                value: f.value,
              })),
            },
          ],
  };
}

function StepEditor({
  step,
  index,
  onChange,
  onRemove,
}: {
  step: StepDraft;
  index: number;
  onChange: (step: StepDraft) => void;
  onRemove: () => void;
}) {
  const id = `step-${step.key}`;
  const set = (change: Partial<StepDraft>) => onChange({ ...step, ...change });
  const setFilter = (i: number, change: Partial<FilterDraft>) =>
    set({ filters: step.filters.map((f, j) => (j === i ? { ...f, ...change } : f)) });
  return (
    <fieldset class="step">
      <legend>
        Step {index + 1}: {typeLabel(step.type)}
      </legend>
      {step.type === "email" && (
        <div class="field">
          <label for={`${id}-subject`}>Subject</label>
          <input
            id={`${id}-subject`}
            type="text"
            value={step.subject}
            onInput={(e) => set({ subject: e.currentTarget.value })}
          />
        </div>
      )}
      {!isTimed(step.type) && (
        <div class="field">
          <label for={`${id}-content`}>Content</label>
          <textarea
            id={`${id}-content`}
            rows={3}
            value={step.content}
            onInput={(e) => set({ content: e.currentTarget.value })}
          />
        </div>
      )}
      {isTimed(step.type) && (
        <div class="inline">
          <div class="field">
            <label for={`${id}-amount`}>Amount</label>
            <input
              id={`${id}-amount`}
              type="number"
              min={0}
              value={step.amount}
              onInput={(e) => set({ amount: Number(e.currentTarget.value) })}
            />
          </div>
          <div class="field">
            <label for={`${id}-unit`}>Unit</label>
            <select
              id={`${id}-unit`}
              value={step.unit}
              onChange={(e) => set({ unit: e.currentTarget.value as StepDraft["unit"] })}
            >
              {UNITS.map((u) => (
                <option key={u} value={u}>
                  {u}
                </option>
              ))}
            </select>
          </div>
          {step.type === "digest" && (
            <div class="field">
              <label for={`${id}-digest-key`}>Digest key</label>
              <input
                id={`${id}-digest-key`}
                type="text"
                value={step.digestKey}
                onInput={(e) => set({ digestKey: e.currentTarget.value })}
              />
            </div>
          )}
        </div>
      )}
      <fieldset class="filters">
        <legend>Conditions of step {index + 1} (all must hold)</legend>
        {step.filters.map((filter, i) => (
          <div class="inline" key={i}>
            <div class="field">
              <label for={`${id}-f${i}-on`}>On</label>
              <select
                id={`${id}-f${i}-on`}
                value={filter.on}
                onChange={(e) => setFilter(i, { on: e.currentTarget.value as FilterDraft["on"] })}
              >
                {FILTER_ON.map((o) => (
                  <option key={o} value={o}>
                    {o}
                  </option>
                ))}
              </select>
            </div>
            <div class="field">
              <label for={`${id}-f${i}-field`}>Field</label>
              <input
                id={`${id}-f${i}-field`}
                type="text"
                value={filter.field}
                onInput={(e) => setFilter(i, { field: e.currentTarget.value })}
              />
            </div>
            <div class="field">
              <label for={`${id}-f${i}-operator`}>Operator</label>
              <select
                id={`${id}-f${i}-operator`}
                value={filter.operator}
                onChange={(e) => setFilter(i, { operator: e.currentTarget.value as FilterDraft["operator"] })}
              >
                {OPERATORS.map((o) => (
                  <option key={o} value={o}>
                    {o}
                  </option>
                ))}
              </select>
            </div>
            <div class="field">
              <label for={`${id}-f${i}-value`}>Value</label>
              <input
                id={`${id}-f${i}-value`}
                type="text"
                value={filter.value}
                onInput={(e) => setFilter(i, { value: e.currentTarget.value })}
              />
            </div>
            <button
              type="button"
              aria-label={`Remove condition ${i + 1} of step ${index + 1}`}
              onClick={() => set({ filters: step.filters.filter((_, j) => j !== i) })}
            >
              Remove
            </button>
          </div>
        ))}
        <button
          type="button"
          onClick={() =>
            set({ filters: [...step.filters, { on: "payload", field: "", operator: "EQUAL", value: "" }] })
          }
        >
          Add condition to step {index + 1}
        </button>
      </fieldset>
      <button type="button" onClick={onRemove}>
        Remove step {index + 1}
      </button>
    </fieldset>
  );
}

type Severity = "high" | "medium" | "low" | "none";

/** What Novu's inbox shows of a workflow's notifications, and filters them by. */
const SEVERITIES: [Severity, string][] = [
  ["none", "None"],
  ["low", "Low"],
  ["medium", "Medium"],
  ["high", "High"],
];

/** Create (id null) or edit a workflow: name, group, severity, and its steps with content, metadata and filters. */
export function WorkflowEditor({ id }: { id: string | null }) {
  const groups = useLoad(() => ok(api.GET("/v1/notification-groups")), []);
  const [name, setName] = useState("");
  const [groupId, setGroupId] = useState("");
  const [severity, setSeverity] = useState<Severity>("none");
  const [steps, setSteps] = useState<StepDraft[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [status, setStatus] = useState<string | null>(null);
  const loaded = useLoad(async () => {
    if (id === null) return null;
    const { data } = await ok(
      api.GET("/v1/workflows/{workflowId}", { params: { path: { workflowId: id } } }),
    );
    setName(data.name);
    setGroupId(data._notificationGroupId);
    setSeverity(data.severity);
    setSteps(data.steps.map(draftOf));
    return data;
  }, [id]);

  const chosenGroup = groupId || groups.data?.data[0]?._id || "";

  async function save(event: Event) {
    event.preventDefault();
    setError(null);
    setStatus(null);
    const body = { name, notificationGroupId: chosenGroup, severity, steps: steps.map(inputOf) };
    try {
      if (id === null) {
        const { data } = await ok(api.POST("/v1/workflows", { body }));
        location.hash = `#/workflows/${encodeURIComponent(data._id)}`;
        setStatus("Workflow created.");
      } else {
        const { data } = await ok(
          api.PUT("/v1/workflows/{workflowId}", { params: { path: { workflowId: id } }, body }),
        );
        setSteps(data.steps.map(draftOf));
        setStatus("Workflow saved.");
      }
    } catch (failure) {
      setError((failure as Error).message);
    }
  }

  const addStep = (type: StepType) =>
    setSteps([
      ...steps,
      {
        key: nextKey++,
        type,
        subject: "",
        content: "",
        amount: 1,
        unit: "minutes",
        digestKey: "",
        filters: [],
      },
    ]);

  return (
    <section aria-labelledby="editor-title">
      <p>
        <a href="#/workflows">Back to workflows</a>
      </p>
      <h1 id="editor-title">{id === null ? "New workflow" : `Edit workflow ${loaded.data?.name ?? ""}`}</h1>
      <Problem message={loaded.error ?? groups.error} />
      <form onSubmit={save}>
        <div class="field">
          <label for="workflow-name">Name</label>
          <input
            id="workflow-name"
            type="text"
            required
            value={name}
            onInput={(e) => setName(e.currentTarget.value)}
          />
        </div>
        <div class="field">
          <label for="workflow-group">Group</label>
          <select id="workflow-group" value={chosenGroup} onChange={(e) => setGroupId(e.currentTarget.value)}>
            {(groups.data?.data ?? []).map((g) => (
              <option key={g._id} value={g._id}>
                {g.name}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="workflow-severity">Severity</label>
          <select
            id="workflow-severity"
            value={severity}
            onChange={(e) => setSeverity(e.currentTarget.value as Severity)}
          >
            {SEVERITIES.map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </div>
        <h2>Steps</h2>
        {steps.length === 0 && <p>No steps yet.</p>}
        {steps.map((step, index) => (
          <StepEditor
            key={step.key}
            step={step}
            index={index}
            onChange={(changed) => setSteps(steps.map((s) => (s.key === step.key ? changed : s)))}
            onRemove={() => setSteps(steps.filter((s) => s.key !== step.key))}
          />
        ))}
        <div class="toolbar">
          {STEP_TYPES.map(([type, label]) => (
            <button key={type} type="button" onClick={() => addStep(type)}>
              Add {label} step
            </button>
          ))}
        </div>
        <Problem message={error} />
        {status && (
          <p role="status" aria-live="polite">
            {status}
          </p>
        )}
        <button type="submit" class="primary">
          Save
        </button>
      </form>
    </section>
  );
}
