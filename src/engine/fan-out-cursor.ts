/**
 * Where a fan-out stands (triggers.fanout_cursor): which source it is reading (the direct
 * recipients, then each topic in order; or every subscriber for a broadcast), the last subscriber
 * done in it, and how many of the jobs reserved at the trigger's acceptance are not yet released
 * (quotas.ts, reserveFanOutJobs).
 */
export interface FanOutCursor {
  source: number;
  after: string;
  reserved?: number;
}

export const readFanOutCursor = (text: string): FanOutCursor =>
  text === "" ? { source: 0, after: "" } : (JSON.parse(text) as FanOutCursor);

/** A fan-out not begun, holding `reserved` jobs of the environment's open-jobs quota. */
export const fanOutStart = (reserved: number): string => JSON.stringify({ source: 0, after: "", reserved });
