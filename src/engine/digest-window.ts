import type { StepMetadata } from "../workflows/domain.ts";
import { addUnits } from "./time-units.ts";

export type DigestDecision =
  /** Backoff found no recent event for the key: the event goes on at once, alone (total_count 1). */
  | { mode: "immediate" }
  /** The event is digested; a window opened now closes at `windowEndsAt` (epoch ms). */
  | { mode: "digest"; windowEndsAt: number };

export type DigestSettings = Pick<
  StepMetadata,
  "amount" | "unit" | "backoff" | "backoffAmount" | "backoffUnit"
>;

export interface DigestInput {
  metadata: DigestSettings;
  /**
   * When the previous event for the same workflow, subscriber and digest key arrived (epoch ms), or
   * undefined when there was none. Only backoff reads it.
   */
  previousEventAt?: number | undefined;
  now: number;
}

/**
 * What happens to an event arriving at a digest step. Without backoff every event is digested. With
 * backoff, an event is digested only when another event for the key arrived within the last
 * `backoffAmount` × `backoffUnit` (boundary included, as Novu's `$gte`); a lone event is not kept
 * waiting. A previous event stamped after `now` (clock skew between processes) counts as recent.
 *
 * `windowEndsAt` is for a window this event opens; an event joining a window already open keeps that
 * window's end (the caller knows whether one is open, this function does not).
 */
export function digestDecision({ metadata, previousEventAt, now }: DigestInput): DigestDecision {
  if (metadata.backoff) {
    const recentFrom = addUnits(now, -metadata.backoffAmount, metadata.backoffUnit);
    const recent = previousEventAt !== undefined && previousEventAt >= recentFrom;
    if (!recent) return { mode: "immediate" };
  }
  return { mode: "digest", windowEndsAt: addUnits(now, metadata.amount, metadata.unit) };
}
