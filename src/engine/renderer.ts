import type { StepType } from "../workflows/domain.ts";
import {
  DEFAULT_RENDER_LIMITS,
  escapeModeFor,
  type FieldTemplate,
  INLINE_SLICE_MS,
  type RenderExceeded,
  type RenderLimits,
  type RenderResult,
  rendersInline,
  renderTemplate,
} from "./render.ts";
import { type PoolAnswer, type RenderPool, sharedRenderPool } from "./render-pool.ts";

/** A step's rendered fields, by field name, or the limit one of them ran into. */
export type StepRendering =
  | { ok: true; fields: Map<string, RenderResult>; problems: string[] }
  | {
      ok: false;
      exceeded: RenderExceeded /** The field, when the render got as far as naming it. */;
      field?: string;
    };

/**
 * Renders the template fields of a step within the render limits: the cheap ones on the event
 * loop, the rest (loops, helpers that walk the data, a cheap one that ran past its slice) together
 * on a render thread, one message for the step.
 */
export class Renderer {
  constructor(
    readonly limits: RenderLimits = DEFAULT_RENDER_LIMITS,
    readonly pool: () => RenderPool = sharedRenderPool,
  ) {}

  async render(fields: readonly FieldTemplate[], data: Record<string, unknown>): Promise<StepRendering> {
    const results = new Map<string, RenderResult>();
    const offload: FieldTemplate[] = [];
    const slice = Math.min(this.limits.timeoutMs, INLINE_SLICE_MS);
    for (const field of fields) {
      if (!rendersInline(field.source, field.escape)) {
        offload.push(field);
        continue;
      }
      const result = renderTemplate(field.source, data, {
        escape: field.escape,
        limits: this.limits,
        timeoutMs: slice,
      });
      if (result.exceeded?.limit === "time" && slice < this.limits.timeoutMs) offload.push(field);
      else if (result.exceeded) return { ok: false, exceeded: result.exceeded, field: field.field };
      else results.set(field.field, result);
    }
    if (offload.length > 0) {
      const answer = await this.#onThread(offload, data);
      // The thread was ended from outside (out of its time and grace, or of memory): the field it
      // was on is known when it was given only one.
      if ("exceeded" in answer) {
        const only = offload.length === 1 ? offload[0]?.field : undefined;
        return { ok: false, exceeded: answer.exceeded, ...(only === undefined ? {} : { field: only }) };
      }
      for (const [i, result] of answer.results.entries()) {
        const field = offload[i]?.field ?? "";
        if (result.exceeded) return { ok: false, exceeded: result.exceeded, field };
        results.set(field, result);
      }
    }
    return {
      ok: true,
      fields: results,
      problems: fields.flatMap((f) => results.get(f.field)?.problems ?? []),
    };
  }

  /**
   * The fields rendered on the event loop alone, for a caller that must not wait (inside a trigger's
   * transaction): undefined when any field needs a render thread or ran into a limit; the caller then
   * leaves the step to the queue. Only templates that loop over nothing are rendered here, whose
   * cost the output limit bounds, so the step's whole time limit applies to them rather than the
   * slice `render` gives before moving a field to a thread: the slice would send a cheap template to
   * the queue whenever the process is kept from the CPU for a few milliseconds.
   */
  renderInline(fields: readonly FieldTemplate[], data: Record<string, unknown>): StepRendering | undefined {
    const results = new Map<string, RenderResult>();
    const deadline = performance.now() + this.limits.timeoutMs;
    for (const field of fields) {
      if (!rendersInline(field.source, field.escape)) return undefined;
      const result = renderTemplate(field.source, data, {
        escape: field.escape,
        limits: this.limits,
        deadline,
      });
      if (result.exceeded) return undefined;
      results.set(field.field, result);
    }
    return {
      ok: true,
      fields: results,
      problems: fields.flatMap((f) => results.get(f.field)?.problems ?? []),
    };
  }

  /**
   * The fields rendered on a render thread. Time is the one limit a render can run into without
   * doing the work (a thread kept from the CPU by a busy host, a collection): a render out of time
   * is given a second chance, which a template that truly takes that long fails again.
   */
  async #onThread(fields: FieldTemplate[], data: Record<string, unknown>): Promise<PoolAnswer> {
    const outOfTime = (answer: PoolAnswer) =>
      "exceeded" in answer
        ? answer.exceeded.limit === "time"
        : answer.results.some((result) => result.exceeded?.limit === "time");
    const first = await this.pool().render(fields, data, this.limits);
    return outOfTime(first) ? this.pool().render(fields, data, this.limits) : first;
  }
}

/** The fields of a step's template that hold text, with the escape mode of each; other values render nothing. */
export function fieldsToRender(stepType: StepType, fields: Record<string, unknown>): FieldTemplate[] {
  return Object.entries(fields).flatMap(([field, source]) =>
    typeof source === "string" ? [{ field, source, escape: escapeModeFor(stepType, field) }] : [],
  );
}

let fallback: Renderer | undefined;

/** The renderer with the default limits, for an engine given none. */
export function defaultRenderer(): Renderer {
  fallback ??= new Renderer();
  return fallback;
}

/** The execution detail of a step whose template ran into a render limit. */
export function renderLimitDetail(stepType: string, failure: Extract<StepRendering, { ok: false }>): string {
  const which = failure.field ? ` (${failure.field})` : "";
  return `The ${stepType} step's template${which} ${failure.exceeded.reason}: nothing is sent`;
}
