import type { ComponentChildren } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { isObject, type JsonObject, same } from "./model.ts";

/** A labelled text box (a textarea when `rows` is given). */
export function Text({
  id,
  label,
  value,
  onChange,
  rows,
  type = "text",
  hint,
  required,
}: {
  id: string;
  label: ComponentChildren;
  value: string;
  onChange: (value: string) => void;
  rows?: number;
  type?: "text" | "url";
  hint?: string;
  required?: boolean;
}) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {rows ? (
        <textarea
          id={id}
          rows={rows}
          value={value}
          aria-describedby={hint ? `${id}-hint` : undefined}
          onInput={(e) => onChange(e.currentTarget.value)}
        />
      ) : (
        <input
          id={id}
          type={type}
          value={value}
          required={required}
          aria-describedby={hint ? `${id}-hint` : undefined}
          onInput={(e) => onChange(e.currentTarget.value)}
        />
      )}
      {hint && (
        <small id={`${id}-hint`} class="hint">
          {hint}
        </small>
      )}
    </div>
  );
}

/** A whole number of at least 0; an empty box is 0. */
export function WholeNumber({
  id,
  label,
  value,
  onChange,
}: {
  id: string;
  label: ComponentChildren;
  value: number;
  onChange: (value: number) => void;
}) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input
        id={id}
        type="number"
        min={0}
        step={1}
        value={value}
        onInput={(e) => {
          const n = Number(e.currentTarget.value);
          onChange(Number.isFinite(n) ? Math.trunc(n) : 0);
        }}
      />
    </div>
  );
}

export function Choice<T extends string>({
  id,
  label,
  value,
  options,
  onChange,
}: {
  id: string;
  label: ComponentChildren;
  value: T;
  options: readonly (readonly [T, string])[] | readonly T[];
  onChange: (value: T) => void;
}) {
  const pairs = options.map((o) => (typeof o === "string" ? ([o, o] as const) : o));
  // A stored value the list does not know is still shown, and kept.
  const all = pairs.some(([v]) => v === value) ? pairs : [[value, value] as const, ...pairs];
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <select id={id} value={value} onChange={(e) => onChange(e.currentTarget.value as T)}>
        {all.map(([v, text]) => (
          <option key={v} value={v}>
            {text}
          </option>
        ))}
      </select>
    </div>
  );
}

export function Check({
  id,
  label,
  checked,
  onChange,
}: {
  id: string;
  label: ComponentChildren;
  checked: boolean;
  onChange: (checked: boolean) => void;
}) {
  return (
    <div class="check">
      <input id={id} type="checkbox" checked={checked} onChange={(e) => onChange(e.currentTarget.checked)} />
      <label for={id}>{label}</label>
    </div>
  );
}

const show = (value: JsonObject | undefined) => (value === undefined ? "" : JSON.stringify(value, null, 2));

/**
 * A JSON object in a text box. Each edit that parses to an object is passed on; one that does not
 * is marked invalid and reported through `onValidity`, and the last good value stays. Empty text is
 * `undefined` when `optional`, else `{}`.
 */
export function JsonObjectField({
  id,
  label,
  value,
  onChange,
  onValidity,
  optional,
  rows = 4,
}: {
  id: string;
  label: ComponentChildren;
  value: JsonObject | undefined;
  onChange: (value: JsonObject | undefined) => void;
  onValidity: (id: string, valid: boolean) => void;
  optional?: boolean;
  rows?: number;
}) {
  const [text, setText] = useState(() => show(value));
  const [problem, setProblem] = useState<string | null>(null);
  const typed = useRef(text);
  // A value changed from outside (a reload after saving) replaces the text, unless it says the same.
  useEffect(() => {
    let current: unknown;
    try {
      current = typed.current.trim() === "" ? (optional ? undefined : {}) : JSON.parse(typed.current);
    } catch {
      current = Symbol("unparsed");
    }
    if (same(current, value)) return;
    typed.current = show(value);
    setText(typed.current);
    setProblem(null);
    onValidity(id, true);
  }, [value]);
  useEffect(() => () => onValidity(id, true), []);
  function edit(next: string) {
    typed.current = next;
    setText(next);
    if (next.trim() === "") {
      setProblem(null);
      onValidity(id, true);
      onChange(optional ? undefined : {});
      return;
    }
    try {
      const parsed: unknown = JSON.parse(next);
      if (!isObject(parsed)) throw new Error("not an object");
      setProblem(null);
      onValidity(id, true);
      if (!same(parsed, value)) onChange(parsed);
    } catch {
      setProblem("Not a JSON object yet: the last valid value is kept.");
      onValidity(id, false);
    }
  }
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <textarea
        id={id}
        class="code"
        rows={rows}
        spellcheck={false}
        value={text}
        aria-invalid={problem ? true : undefined}
        aria-describedby={problem ? `${id}-problem` : undefined}
        onInput={(e) => edit(e.currentTarget.value)}
      />
      {problem && (
        <small id={`${id}-problem`} class="hint invalid">
          {problem}
        </small>
      )}
    </div>
  );
}
