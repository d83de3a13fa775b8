import { CronExpressionParser } from "cron-parser";
import type { TimeUnit } from "../workflows/domain.ts";

/** The units of fixed length. A month is not one of them: its length depends on where it starts. */
export type FixedTimeUnit = Exclude<TimeUnit, "months">;

const UNIT_MS: Record<FixedTimeUnit, number> = {
  seconds: 1_000,
  minutes: 60_000,
  hours: 3_600_000,
  days: 86_400_000,
  weeks: 604_800_000,
};

// The ECMAScript time range: a Date outside ±8.64e15 ms is invalid, so no timer could be set for it.
const MAX_INSTANT = 8.64e15;

function validInstant(ms: number, what: string): number {
  if (!Number.isFinite(ms) || Math.abs(ms) > MAX_INSTANT) {
    throw new RangeError(`${what} falls outside the representable time range`);
  }
  return ms;
}

/**
 * The instant `amount` units after `fromMs` (before it for a negative amount). Days and weeks are
 * fixed multiples of 24 hours (UTC has no daylight saving), months are calendar months in UTC: the
 * same day of the month and time of day, clamped to the month's last day (Jan 31 + 1 month = Feb 28
 * or 29), so a monthly delay lands where a person would expect it.
 */
export function addUnits(fromMs: number, amount: number, unit: TimeUnit): number {
  if (!Number.isFinite(amount)) throw new RangeError(`amount must be a finite number, got ${amount}`);
  validInstant(fromMs, "the starting instant");
  if (unit !== "months") return validInstant(fromMs + amount * UNIT_MS[unit], `${amount} ${unit} on`);
  if (!Number.isInteger(amount)) throw new RangeError(`months must be a whole number, got ${amount}`);
  const from = new Date(fromMs);
  const monthIndex = from.getUTCFullYear() * 12 + from.getUTCMonth() + amount;
  if (!Number.isSafeInteger(monthIndex)) throw new RangeError(`${amount} months on is out of range`);
  const year = Math.floor(monthIndex / 12);
  const month = monthIndex - year * 12;
  // Day 0 of the next month is the last day of this one.
  const lastDay = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  const day = Math.min(from.getUTCDate(), lastDay);
  const target = new Date(fromMs);
  target.setUTCFullYear(year, month, day);
  return validInstant(target.getTime(), `${amount} months on`);
}

/**
 * How long `amount` units last. Fixed units need no anchor; months do (28 to 31 days), so the
 * type asks for the instant they start from and the answer is the calendar distance from there.
 */
export function durationMs(amount: number, unit: FixedTimeUnit): number;
export function durationMs(amount: number, unit: TimeUnit, fromMs: number): number;
export function durationMs(amount: number, unit: TimeUnit, fromMs?: number): number {
  if (unit === "months") {
    if (fromMs === undefined) throw new RangeError("a duration in months needs the instant it starts from");
    return addUnits(fromMs, amount, unit) - fromMs;
  }
  if (!Number.isFinite(amount)) throw new RangeError(`amount must be a finite number, got ${amount}`);
  return amount * UNIT_MS[unit];
}

/**
 * The first instant strictly after `fromMs` that the cron expression names, evaluated in UTC (five
 * fields, or six with seconds first; `@daily` and the like). Throws with the parser's reason when the
 * expression does not parse or names no instant.
 */
export function nextCronOccurrence(expression: string, fromMs: number): number {
  const cron = CronExpressionParser.parse(expression.trim(), { currentDate: new Date(fromMs), tz: "UTC" });
  return validInstant(cron.next().getTime(), `The next occurrence of "${expression}"`);
}
