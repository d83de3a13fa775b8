import { newObjectId, newUuid } from "../ids.ts";
import type { FilterResource, StepInputValue, StepResource } from "./schemas.ts";

type FilterInput = NonNullable<StepInputValue["filters"]>[number];

function normalizeFilter(filter: FilterInput): FilterResource {
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
 * Turns the steps of a request into stored steps with every field the seed lists. A step that
 * names the `_id` of one of the workflow's current steps keeps its ids; any other gets new ones.
 */
export function normalizeSteps(
  inputs: readonly StepInputValue[],
  current: readonly StepResource[] = [],
): StepResource[] {
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
