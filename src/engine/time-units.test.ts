import assert from "node:assert/strict";
import { test } from "node:test";
import type { TimeUnit } from "../workflows/domain.ts";
import { addUnits, durationMs, nextCronOccurrence } from "./time-units.ts";

const at = (iso: string) => Date.parse(iso);

test("durationMs: fixed units", () => {
  const cases: [number, Exclude<TimeUnit, "months">, number][] = [
    [0, "seconds", 0],
    [1, "seconds", 1_000],
    [90, "seconds", 90_000],
    [5, "minutes", 300_000],
    [2, "hours", 7_200_000],
    [1, "days", 86_400_000],
    [2, "weeks", 1_209_600_000],
    [1.5, "hours", 5_400_000],
  ];
  for (const [amount, unit, expected] of cases) {
    assert.equal(durationMs(amount, unit), expected, `${amount} ${unit}`);
  }
});

test("durationMs: months are measured on the calendar from an instant", () => {
  const cases: [string, number, number][] = [
    ["2026-01-15T00:00:00.000Z", 1, 31],
    ["2026-02-15T00:00:00.000Z", 1, 28],
    ["2028-02-15T00:00:00.000Z", 1, 29],
    ["2026-01-31T00:00:00.000Z", 1, 28],
    ["2026-01-15T00:00:00.000Z", 12, 365],
  ];
  for (const [from, months, days] of cases) {
    assert.equal(durationMs(months, "months", at(from)), days * 86_400_000, `${months} months from ${from}`);
  }
  assert.throws(() => durationMs(1, "months" as "days"), /needs the instant/);
});

test("addUnits: every unit, forward and back, months clamped to the month's end", () => {
  const cases: [string, number, TimeUnit, string][] = [
    ["2026-01-01T00:00:00.000Z", 30, "seconds", "2026-01-01T00:00:30.000Z"],
    ["2026-01-01T00:00:00.000Z", 90, "minutes", "2026-01-01T01:30:00.000Z"],
    ["2026-01-01T23:00:00.000Z", 2, "hours", "2026-01-02T01:00:00.000Z"],
    ["2026-03-28T12:00:00.000Z", 3, "days", "2026-03-31T12:00:00.000Z"],
    ["2026-01-01T00:00:00.000Z", 1, "weeks", "2026-01-08T00:00:00.000Z"],
    ["2026-01-15T10:20:30.400Z", 1, "months", "2026-02-15T10:20:30.400Z"],
    ["2026-01-31T08:00:00.000Z", 1, "months", "2026-02-28T08:00:00.000Z"],
    ["2028-01-31T08:00:00.000Z", 1, "months", "2028-02-29T08:00:00.000Z"],
    ["2026-03-31T00:00:00.000Z", 1, "months", "2026-04-30T00:00:00.000Z"],
    ["2026-11-30T00:00:00.000Z", 3, "months", "2027-02-28T00:00:00.000Z"],
    ["2026-12-15T00:00:00.000Z", 1, "months", "2027-01-15T00:00:00.000Z"],
    ["2026-03-31T00:00:00.000Z", -1, "months", "2026-02-28T00:00:00.000Z"],
    ["2026-01-15T00:00:00.000Z", -13, "months", "2024-12-15T00:00:00.000Z"],
    ["2026-01-01T00:00:00.000Z", -1, "days", "2025-12-31T00:00:00.000Z"],
    ["2026-01-01T00:00:00.000Z", 0, "months", "2026-01-01T00:00:00.000Z"],
  ];
  for (const [from, amount, unit, expected] of cases) {
    assert.equal(
      new Date(addUnits(at(from), amount, unit)).toISOString(),
      expected,
      `${from} + ${amount} ${unit}`,
    );
  }
});

test("addUnits: refuses what no timer could wait for", () => {
  const from = at("2026-01-01T00:00:00.000Z");
  assert.throws(() => addUnits(from, 1.5, "months"), /whole number/);
  assert.throws(() => addUnits(from, Number.NaN, "days"), /finite/);
  assert.throws(() => addUnits(from, Number.POSITIVE_INFINITY, "seconds"), /finite/);
  assert.throws(() => addUnits(from, 1_000_000_000, "weeks"), /time range/);
  assert.throws(() => addUnits(from, 1_000_000_000, "months"), /time range|out of range/);
  assert.throws(() => addUnits(Number.NaN, 1, "days"), /time range/);
});

test("nextCronOccurrence: in UTC, strictly after; six fields and @ forms; a bad expression throws its reason", () => {
  const cases: [string, string, string][] = [
    ["0 9 * * 1", "2026-06-01T08:59:59.999Z", "2026-06-01T09:00:00.000Z"],
    // An occurrence at the very moment is not the next one.
    ["0 9 * * 1", "2026-06-01T09:00:00.000Z", "2026-06-08T09:00:00.000Z"],
    ["*/15 * * * *", "2026-06-01T23:59:00.000Z", "2026-06-02T00:00:00.000Z"],
    ["30 */10 * * * *", "2026-06-01T12:00:00.000Z", "2026-06-01T12:00:30.000Z"],
    ["@daily", "2026-12-31T12:00:00.000Z", "2027-01-01T00:00:00.000Z"],
    ["0 0 29 2 *", "2026-03-01T00:00:00.000Z", "2028-02-29T00:00:00.000Z"],
  ];
  for (const [cron, from, next] of cases) {
    assert.equal(new Date(nextCronOccurrence(cron, at(from))).toISOString(), next, `${cron} after ${from}`);
  }
  assert.throws(() => nextCronOccurrence("61 * * * *", 0), /61/);
  assert.throws(() => nextCronOccurrence("every monday", 0));
});
