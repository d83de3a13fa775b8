import { api, ok } from "../../api.ts";
import { useLoad } from "../../common.tsx";
import { Check, Choice, JsonObjectField, Text, WholeNumber } from "./fields.tsx";
import {
  CONDITION_ON,
  type ConditionValue,
  type FilterValue,
  getIn,
  isObject,
  type JsonObject,
  type Metadata,
  OPERATORS,
  putIn,
  type StepDraft,
  type StepValue,
  textOf,
  typeLabel,
  UNITS,
  type Unit,
  withMetadata,
} from "./model.ts";

interface Props {
  draft: StepDraft;
  /** The step as stored (the same _id), if it is one: what emptied fields go back to. */
  original: StepValue | undefined;
  index: number;
  count: number;
  onChange: (value: StepValue) => void;
  onMove: (by: -1 | 1) => void;
  onRemove: () => void;
  onValidity: (id: string, valid: boolean) => void;
}

/** The settings of one step: what every step has, then what its type has, then its conditions. */
export function StepEditor({ draft, original, index, count, onChange, onMove, onRemove, onValidity }: Props) {
  const step = draft.value;
  const id = `step-${draft.key}`;
  const n = index + 1;
  const template = step.template as JsonObject;
  /** Sets a template field; `empty`, it is removed if the stored step did not have it. */
  const setTemplate = (path: string[], value: unknown, empty = value === undefined) =>
    onChange({
      ...step,
      template: putIn(template, path, value, empty, original?.template) as StepValue["template"],
    });
  const setMetadata = (change: Partial<Metadata>) =>
    onChange({ ...step, metadata: withMetadata(step.metadata, change) });
  const templateText = (path: string[]) => textOf(getIn(template, path));
  /** A text field of the template: emptied, it leaves the template (as it was when it had none). */
  const templateField = (path: string[], label: string, options: { rows?: number; hint?: string } = {}) => (
    <Text
      id={`${id}-${path.join("-")}`}
      label={label}
      value={templateText(path)}
      rows={options.rows}
      hint={options.hint}
      onChange={(value) => setTemplate(path, value, value === "")}
    />
  );
  const type = step.template.type;

  return (
    <section class="step-editor" aria-labelledby={`${id}-title`}>
      <div class="title-row">
        <h2 id={`${id}-title`}>
          Step {n}: {typeLabel(type)}
        </h2>
        <div class="toolbar compact">
          <button type="button" disabled={index === 0} onClick={() => onMove(-1)}>
            Move step {n} up
          </button>
          <button type="button" disabled={index === count - 1} onClick={() => onMove(1)}>
            Move step {n} down
          </button>
          <button type="button" class="danger" onClick={onRemove}>
            Remove step {n}
          </button>
        </div>
      </div>
      <div class="grid2">
        <Text
          id={`${id}-name`}
          label="Step name"
          value={step.name ?? ""}
          onChange={(name) => onChange({ ...step, name })}
        />
        <div>
          <Check
            id={`${id}-active`}
            label="Step active"
            checked={step.active !== false}
            onChange={(active) => onChange({ ...step, active })}
          />
          <Check
            id={`${id}-stop`}
            label="Stop the workflow if this step fails"
            checked={step.shouldStopOnFail === true}
            onChange={(shouldStopOnFail) => onChange({ ...step, shouldStopOnFail })}
          />
        </div>
      </div>

      {type === "in_app" && (
        <>
          {templateField(["subject"], "Subject")}
          {templateField(["content"], "Content", { rows: 3 })}
          {templateField(["avatar"], "Avatar URL")}
          {templateField(["cta", "data", "url"], "Redirect URL", {
            hint: "Where clicking the message goes (cta.data.url)",
          })}
          <div class="grid2">
            <ButtonFields
              which="primary"
              label="Primary action"
              id={id}
              template={template}
              set={setTemplate}
            />
            <ButtonFields
              which="secondary"
              label="Secondary action"
              id={id}
              template={template}
              set={setTemplate}
            />
          </div>
          <JsonObjectField
            id={`${id}-data`}
            label="Message data (JSON)"
            optional
            value={isObject(template.data) ? template.data : undefined}
            onChange={(value) => setTemplate(["data"], value)}
            onValidity={onValidity}
          />
        </>
      )}
      {type === "email" && (
        <>
          {templateField(["subject"], "Subject")}
          {templateField(["preheader"], "Preheader")}
          {templateField(["senderName"], "Sender name")}
          <LayoutChoice
            id={`${id}-layout`}
            template={template}
            onChange={(layoutId) => setTemplate(["_layoutId"], layoutId, layoutId === null)}
          />
          {Array.isArray(template.content) ? (
            <EmailBlocks
              id={id}
              blocks={template.content}
              set={(blocks) => setTemplate(["content"], blocks)}
            />
          ) : (
            templateField(["content"], "Content", { rows: 6, hint: "HTML; {{variables}} are filled in" })
          )}
          <fieldset>
            <legend>Reply callback</legend>
            <Check
              id={`${id}-reply-active`}
              label="Reply callback on"
              checked={step.replyCallback?.active === true}
              onChange={(active) =>
                onChange({
                  ...step,
                  replyCallback: putIn(
                    step.replyCallback ?? {},
                    ["active"],
                    active,
                    !active,
                    original?.replyCallback,
                  ),
                })
              }
            />
            <Text
              id={`${id}-reply-url`}
              label="Reply callback URL"
              type="url"
              value={textOf(step.replyCallback?.url)}
              onChange={(url) =>
                onChange({
                  ...step,
                  replyCallback: putIn(
                    step.replyCallback ?? {},
                    ["url"],
                    url,
                    url === "",
                    original?.replyCallback,
                  ),
                })
              }
            />
          </fieldset>
        </>
      )}
      {(type === "sms" || type === "chat") && templateField(["content"], "Content", { rows: 3 })}
      {type === "push" && (
        <>
          {templateField(["title"], "Title")}
          {templateField(["content"], "Content", { rows: 3 })}
        </>
      )}
      {type === "delay" && <DelayFields id={id} metadata={step.metadata ?? {}} set={setMetadata} />}
      {type === "digest" && <DigestFields id={id} metadata={step.metadata ?? {}} set={setMetadata} />}
      {type === "throttle" && <ThrottleFields id={id} metadata={step.metadata ?? {}} set={setMetadata} />}
      {(type === "custom" || type === "trigger") && (
        <JsonObjectField
          id={`${id}-template`}
          label="Template fields (JSON)"
          rows={8}
          value={withoutType(template)}
          onChange={(value) =>
            onChange({ ...step, template: { ...(value ?? {}), type } as StepValue["template"] })
          }
          onValidity={onValidity}
        />
      )}
      <Conditions
        id={id}
        n={n}
        filters={step.filters ?? []}
        set={(filters) => onChange({ ...step, filters })}
      />
    </section>
  );
}

/**
 * The email's layout: one of the environment's (its `_layoutId`), or "Environment default" (none
 * named). A layout named as `layoutId`, or one not in the list, still shows and is kept.
 */
function LayoutChoice({
  id,
  template,
  onChange,
}: {
  id: string;
  template: JsonObject;
  onChange: (layoutId: string | null) => void;
}) {
  const { data, error } = useLoad(
    () => ok(api.GET("/v1/layouts", { params: { query: { page: 0, pageSize: 100 } } })),
    [],
  );
  const named = [template._layoutId, template.layoutId].find((v) => typeof v === "string" && v !== "");
  const options: [string, string][] = [
    ["", "Environment default"],
    ...(data?.data ?? []).map((layout): [string, string] => [layout._id, layout.name]),
  ];
  return (
    <>
      <Choice
        id={id}
        label="Layout"
        value={typeof named === "string" ? named : ""}
        options={options}
        onChange={(layoutId) => onChange(layoutId === "" ? null : layoutId)}
      />
      {error && <p class="hint invalid">The layouts could not be listed: {error}</p>}
    </>
  );
}

function withoutType(template: JsonObject): JsonObject {
  const { type: _type, ...rest } = template;
  return rest;
}

/** An in-app button: `cta.action.buttons[]` of this type (`content` its label, `url` where it goes). */
function ButtonFields({
  which,
  label,
  id,
  template,
  set,
}: {
  which: "primary" | "secondary";
  label: string;
  id: string;
  template: JsonObject;
  set: (path: string[], value: unknown, empty?: boolean) => void;
}) {
  const buttons = getIn(template, ["cta", "action", "buttons"]);
  const list: JsonObject[] = Array.isArray(buttons) ? buttons.filter(isObject) : [];
  const at = list.findIndex((b) => b.type === which);
  const button = at === -1 ? undefined : list[at];
  function edit(field: "content" | "url", value: string) {
    const changed: JsonObject = { ...(button ?? { type: which }), [field]: value };
    if (value === "" && field === "url") delete changed.url;
    const empty = !textOf(changed.content) && !textOf(changed.url);
    const next =
      at === -1
        ? which === "primary"
          ? [changed, ...list]
          : [...list, changed]
        : list.flatMap((b, i) => (i === at ? (empty ? [] : [changed]) : [b]));
    set(["cta", "action", "buttons"], next, next.length === 0);
  }
  return (
    <fieldset>
      <legend>{label}</legend>
      <Text
        id={`${id}-${which}-label`}
        label={`${label} label`}
        value={textOf(button?.content)}
        onChange={(v) => edit("content", v)}
      />
      <Text
        id={`${id}-${which}-url`}
        label={`${label} URL`}
        value={textOf(button?.url)}
        onChange={(v) => edit("url", v)}
      />
    </fieldset>
  );
}

/** The blocks of Novu's email editor: each block's text, a button's URL too. */
function EmailBlocks({
  id,
  blocks,
  set,
}: {
  id: string;
  blocks: unknown[];
  set: (blocks: unknown[]) => void;
}) {
  const edit = (i: number, field: string, value: string) =>
    set(blocks.map((b, j) => (j === i && isObject(b) ? { ...b, [field]: value } : b)));
  return (
    <fieldset>
      <legend>Content blocks</legend>
      {blocks.map((block, i) =>
        isObject(block) ? (
          <div key={i} class="grid2">
            <Text
              id={`${id}-block-${i}`}
              label={`Block ${i + 1} (${textOf(block.type) || "text"})`}
              rows={block.type === "button" ? undefined : 3}
              value={textOf(block.content)}
              onChange={(v) => edit(i, "content", v)}
            />
            {block.type === "button" && (
              <Text
                id={`${id}-block-${i}-url`}
                label={`Block ${i + 1} URL`}
                value={textOf(block.url)}
                onChange={(v) => edit(i, "url", v)}
              />
            )}
          </div>
        ) : null,
      )}
    </fieldset>
  );
}

const unitOf = (unit: string | undefined): Unit =>
  UNITS.includes(unit as Unit) ? (unit as Unit) : "seconds";

/**
 * An amount and its unit, side by side: "Amount" and "Unit", or with `label` before them ("Backoff
 * amount", "Backoff unit"); their ids are `id` with `-amount` and `-unit`.
 */
function DurationInputs({
  id,
  label,
  amount,
  unit,
  onAmount,
  onUnit,
}: {
  id: string;
  label?: string;
  amount: number | undefined;
  unit: string | undefined;
  onAmount: (amount: number) => void;
  onUnit: (unit: Unit) => void;
}) {
  return (
    <>
      <WholeNumber
        id={`${id}-amount`}
        label={label ? `${label} amount` : "Amount"}
        value={amount ?? 0}
        onChange={onAmount}
      />
      <Choice
        id={`${id}-unit`}
        label={label ? `${label} unit` : "Unit"}
        value={unitOf(unit)}
        options={UNITS}
        onChange={onUnit}
      />
    </>
  );
}

/** What each step type's fields are given: their ids' prefix, the step's metadata and its setter. */
interface StepFieldsProps {
  id: string;
  metadata: Metadata;
  set: (m: Partial<Metadata>) => void;
}

/** The step's own amount and unit (a delay's, a digest's window, a throttle's window). */
function StepDuration({ id, metadata, set }: StepFieldsProps) {
  return (
    <DurationInputs
      id={id}
      amount={metadata.amount}
      unit={metadata.unit}
      onAmount={(amount) => set({ amount })}
      onUnit={(unit) => set({ unit })}
    />
  );
}

/** A delay: for a time (amount and unit), or until the date at a payload path (`type: scheduled`). */
function DelayFields({ id, metadata, set }: StepFieldsProps) {
  const scheduled = metadata.type === "scheduled";
  return (
    <fieldset>
      <legend>Delay</legend>
      <Choice
        id={`${id}-delay-kind`}
        label="Wait"
        value={scheduled ? "scheduled" : "regular"}
        options={[
          ["regular", "For a time"],
          ["scheduled", "Until a date in the payload"],
        ]}
        onChange={(kind) =>
          kind === "scheduled"
            ? set({ type: "scheduled", delayPath: metadata.delayPath ?? "" })
            : set({
                type: "regular",
                delayPath: undefined,
                amount: (metadata.amount ?? 0) > 0 ? metadata.amount : 5,
                unit: metadata.unit && metadata.unit !== "seconds" ? metadata.unit : "minutes",
              })
        }
      />
      {scheduled ? (
        <Text
          id={`${id}-delay-path`}
          label="Date field"
          value={metadata.delayPath ?? ""}
          hint="The payload path of the ISO date to wait for, e.g. sendAt or order.deliverAt"
          onChange={(delayPath) => set({ delayPath })}
        />
      ) : (
        <div class="inline">
          <StepDuration id={id} metadata={metadata} set={set} />
        </div>
      )}
    </fieldset>
  );
}

/**
 * A throttle: how many runs (threshold) its window (amount × unit) lets through, and the payload path
 * whose value gets a window of its own. An emptied key leaves the metadata.
 */
function ThrottleFields({ id, metadata, set }: StepFieldsProps) {
  return (
    <fieldset>
      <legend>Throttle</legend>
      <div class="inline">
        <WholeNumber
          id={`${id}-threshold`}
          label="Threshold"
          value={metadata.threshold ?? 1}
          onChange={(threshold) => set({ threshold })}
        />
        <StepDuration id={id} metadata={metadata} set={set} />
      </div>
      <Text
        id={`${id}-throttle-key`}
        label="Throttle key"
        value={metadata.throttleKey ?? ""}
        hint="A payload path: each value there is counted on its own (empty: one count for the subscriber)"
        onChange={(throttleKey) => set({ throttleKey: throttleKey === "" ? undefined : throttleKey })}
      />
    </fieldset>
  );
}

/** A digest: its window, the payload path it groups by, and its backoff. */
function DigestFields({ id, metadata, set }: StepFieldsProps) {
  const backoff = metadata.backoff === true || metadata.type === "backoff";
  return (
    <fieldset>
      <legend>Digest</legend>
      <div class="inline">
        <StepDuration id={id} metadata={metadata} set={set} />
      </div>
      <Text
        id={`${id}-digest-key`}
        label="Digest key"
        value={metadata.digestKey ?? ""}
        hint="A payload path: events with the same value there are digested together (empty: all of them)"
        onChange={(digestKey) => set({ digestKey })}
      />
      <Check
        id={`${id}-backoff`}
        label="Backoff: send the first event at once, digest only those that follow within the backoff"
        checked={backoff}
        onChange={(on) =>
          set(
            on
              ? {
                  backoff: true,
                  backoffAmount: (metadata.backoffAmount ?? 0) > 0 ? metadata.backoffAmount : 1,
                  backoffUnit: metadata.backoffUnit ?? "minutes",
                }
              : { backoff: false, ...(metadata.type === "backoff" ? { type: "regular" as const } : {}) },
          )
        }
      />
      {backoff && (
        <div class="inline">
          <DurationInputs
            id={`${id}-backoff`}
            label="Backoff"
            amount={metadata.backoffAmount}
            unit={metadata.backoffUnit}
            onAmount={(backoffAmount) => set({ backoffAmount })}
            onUnit={(backoffUnit) => set({ backoffUnit })}
          />
        </div>
      )}
      <Check
        id={`${id}-update-mode`}
        label="Update mode"
        checked={metadata.updateMode === true}
        onChange={(updateMode) => set({ updateMode })}
      />
    </fieldset>
  );
}

/**
 * The step's filters: it runs when any group passes (or none exist); a group combines its
 * conditions with all (AND) or any (OR), negated when asked.
 */
function Conditions({
  id,
  n,
  filters,
  set,
}: {
  id: string;
  n: number;
  filters: FilterValue[];
  set: (filters: FilterValue[]) => void;
}) {
  const setFilter = (i: number, change: Partial<FilterValue>) =>
    set(filters.map((f, j) => (j === i ? { ...f, ...change } : f)));
  const setCondition = (i: number, c: number, change: Partial<ConditionValue>) =>
    setFilter(i, {
      children: (filters[i]?.children ?? []).map((child, k) => (k === c ? { ...child, ...change } : child)),
    });
  const blank: ConditionValue = { on: "payload", field: "", operator: "EQUAL", value: "" };
  return (
    <fieldset class="conditions">
      <legend>Conditions of step {n}</legend>
      {filters.length === 0 && <p class="hint">None: the step always runs.</p>}
      {filters.map((filter, i) => {
        const g = `${id}-g${i}`;
        const group = filters.length > 1 ? `Group ${i + 1} ` : "";
        return (
          <div class="condition-group" key={i}>
            <div class="inline">
              <Choice<"AND" | "OR">
                id={`${g}-match`}
                label={`${group}Match`}
                value={filter.value ?? "AND"}
                options={[
                  ["AND", "all conditions"],
                  ["OR", "any condition"],
                ]}
                onChange={(value) => setFilter(i, { value })}
              />
              <Check
                id={`${g}-negated`}
                label={`${group}Negated`}
                checked={filter.isNegated === true}
                onChange={(isNegated) => setFilter(i, { isNegated })}
              />
            </div>
            {(filter.children ?? []).map((child, c) => {
              const name = `Condition ${filters.length > 1 ? `${i + 1}.` : ""}${c + 1}`;
              const label = (text: string) => (
                <>
                  <span class="visually-hidden">{name} </span>
                  {text}
                </>
              );
              return (
                <div class="inline condition" key={c}>
                  <Choice
                    id={`${g}-c${c}-on`}
                    label={label("On")}
                    value={child.on ?? "subscriber"}
                    options={CONDITION_ON}
                    onChange={(on) => setCondition(i, c, { on })}
                  />
                  <Text
                    id={`${g}-c${c}-field`}
                    label={label("Field")}
                    value={child.field ?? ""}
                    onChange={(field) => setCondition(i, c, { field })}
                  />
                  <Choice
                    id={`${g}-c${c}-operator`}
                    label={label("Operator")}
                    value={child.operator ?? "EQUAL"}
                    options={OPERATORS}
                    onChange={(operator) => setCondition(i, c, { operator })}
                  />
                  <Text
                    id={`${g}-c${c}-value`}
                    label={label("Value")}
                    value={child.value ?? ""}
                    onChange={(value) => setCondition(i, c, { value })}
                  />
                  <button
                    type="button"
                    onClick={() =>
                      setFilter(i, { children: (filter.children ?? []).filter((_, k) => k !== c) })
                    }
                  >
                    Remove {name.toLowerCase()}
                  </button>
                </div>
              );
            })}
            <div class="toolbar compact">
              <button
                type="button"
                onClick={() => setFilter(i, { children: [...(filter.children ?? []), blank] })}
              >
                Add condition{group ? ` to group ${i + 1}` : ""}
              </button>
              <button type="button" onClick={() => set(filters.filter((_, j) => j !== i))}>
                Remove {group ? `group ${i + 1}` : "all conditions"}
              </button>
            </div>
          </div>
        );
      })}
      {filters.length === 0 ? (
        <button
          type="button"
          onClick={() => set([{ isNegated: false, type: "GROUP", value: "AND", children: [blank] }])}
        >
          Add condition
        </button>
      ) : (
        <button
          type="button"
          onClick={() =>
            set([...filters, { isNegated: false, type: "GROUP", value: "AND", children: [blank] }])
          }
        >
          Add condition group
        </button>
      )}
    </fieldset>
  );
}
