import { badRequest } from "../errors.ts";
import { newObjectId, newUuid } from "../ids.ts";
import type { Filter, Step } from "./domain.ts";
import type { StepInputValue } from "./schemas.ts";
import { stepTemplateErrors } from "./templates.ts";

type FilterInput = NonNullable<StepInputValue["filters"]>[number];

function normalizeFilter(filter: FilterInput): Filter {
  return {
    isNegated: filter.isNegated ?? false,
    type: filter.type ?? "BOOLEAN",
    value: filter.value ?? "AND",
    children: (filter.children ?? []).map((child) => ({
      field: child.field ?? "",
      value: child.value ?? "",
      operator: child.operator ?? "EQUAL",
      on: child.on ?? "subscriber",
    })),
  };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * A template that does not compile is the author's 400 when saving, not a failed delivery later.
 * Called before any transaction opens: parsing a large workflow takes a while, and on SQLite an
 * open transaction holds the only connection.
 */
export function requireCompilingTemplates(inputs: readonly StepInputValue[]): void {
  const errors = stepTemplateErrors(inputs);
  const first = errors[0];
  if (first) throw badRequest(`${first.field} ${first.message}`, errors);
}

/**
 * Turns the steps of a request into stored steps with every field the seed lists. A step that
 * names the `_id` of one of the workflow's current steps keeps its ids; any other gets new ones.
 */
export function normalizeSteps(inputs: readonly StepInputValue[], current: readonly Step[] = []): Step[] {
  const known = new Map(current.map((step) => [step._id, step]));
  return inputs.map((input) => {
    const previous = input._id ? known.get(input._id) : undefined;
    const metadata = input.metadata ?? {};
    return {
      _id: previous?._id ?? newObjectId(),
      uuid: input.uuid ?? previous?.uuid ?? newUuid(),
      name: input.name ?? previous?.name ?? input.template.type,
      _templateId: previous?._templateId ?? input._templateId ?? newObjectId(),
      active: input.active ?? true,
      shouldStopOnFail: input.shouldStopOnFail ?? false,
      template: { ...input.template },
      filters: (input.filters ?? []).map(normalizeFilter),
      _parentId: isPlainObject(input._parentId) ? input._parentId : {},
      metadata: {
        amount: metadata.amount ?? 0,
        unit: metadata.unit ?? "seconds",
        digestKey: metadata.digestKey ?? "",
        type: metadata.type ?? "regular",
        backoff: metadata.backoff ?? false,
        backoffAmount: metadata.backoffAmount ?? 0,
        backoffUnit: metadata.backoffUnit ?? "seconds",
        updateMode: metadata.updateMode ?? false,
      },
      replyCallback: input.replyCallback ?? {},
    };
  });
}
