import assert from "node:assert/strict";
import { test } from "node:test";
import { type DigestDecision, type DigestSettings, digestDecision } from "./digest-window.ts";

const NOW = Date.parse("2026-01-31T12:00:00.000Z");
const S = 1_000;
const MIN = 60 * S;

const regular: DigestSettings = {
  amount: 10,
  unit: "minutes",
  backoff: false,
  backoffAmount: 0,
  backoffUnit: "seconds",
};
const backoff: DigestSettings = { ...regular, backoff: true, backoffAmount: 5, backoffUnit: "minutes" };

test("digestDecision: a table of windows and backoffs", () => {
  const cases: {
    label: string;
    metadata: DigestSettings;
    previousEventAt?: number;
    expected: DigestDecision;
  }[] = [
    {
      label: "no backoff, first event: a window of amount × unit",
      metadata: regular,
      expected: { mode: "digest", windowEndsAt: NOW + 10 * MIN },
    },
    {
      label: "no backoff: a previous event changes nothing",
      metadata: regular,
      previousEventAt: NOW - 1 * S,
      expected: { mode: "digest", windowEndsAt: NOW + 10 * MIN },
    },
    {
      label: "no backoff, an old previous event: still digested",
      metadata: regular,
      previousEventAt: NOW - 365 * 24 * 60 * MIN,
      expected: { mode: "digest", windowEndsAt: NOW + 10 * MIN },
    },
    { label: "backoff, no previous event: at once", metadata: backoff, expected: { mode: "immediate" } },
    {
      label: "backoff, previous event inside the backoff window: digested",
      metadata: backoff,
      previousEventAt: NOW - 4 * MIN,
      expected: { mode: "digest", windowEndsAt: NOW + 10 * MIN },
    },
    {
      label: "backoff, previous event exactly at the window's start: digested (boundary included)",
      metadata: backoff,
      previousEventAt: NOW - 5 * MIN,
      expected: { mode: "digest", windowEndsAt: NOW + 10 * MIN },
    },
    {
      label: "backoff, previous event 1 ms before the window: at once",
      metadata: backoff,
      previousEventAt: NOW - 5 * MIN - 1,
      expected: { mode: "immediate" },
    },
    {
      label: "backoff, previous event stamped in the future (clock skew): digested",
      metadata: backoff,
      previousEventAt: NOW + 2 * S,
      expected: { mode: "digest", windowEndsAt: NOW + 10 * MIN },
    },
    {
      label: "backoff of zero: only an event at this very instant counts",
      metadata: { ...backoff, backoffAmount: 0 },
      previousEventAt: NOW - 1,
      expected: { mode: "immediate" },
    },
    {
      label: "backoff in months: calendar months back (Dec 31 is within one month of Jan 31)",
      metadata: { ...backoff, backoffAmount: 1, backoffUnit: "months" },
      previousEventAt: Date.parse("2025-12-31T12:00:00.000Z"),
      expected: { mode: "digest", windowEndsAt: NOW + 10 * MIN },
    },
    {
      label: "backoff in months: just over one calendar month back",
      metadata: { ...backoff, backoffAmount: 1, backoffUnit: "months" },
      previousEventAt: Date.parse("2025-12-31T11:59:59.999Z"),
      expected: { mode: "immediate" },
    },
    {
      label: "a window in months ends on the calendar (Jan 31 + 1 month = Feb 28)",
      metadata: { ...regular, amount: 1, unit: "months" },
      expected: { mode: "digest", windowEndsAt: Date.parse("2026-02-28T12:00:00.000Z") },
    },
    {
      label: "a window in seconds",
      metadata: { ...regular, amount: 30, unit: "seconds" },
      expected: { mode: "digest", windowEndsAt: NOW + 30 * S },
    },
    {
      label: "a window of zero closes at once",
      metadata: { ...regular, amount: 0 },
      expected: { mode: "digest", windowEndsAt: NOW },
    },
  ];
  for (const c of cases) {
    assert.deepEqual(
      digestDecision({ metadata: c.metadata, previousEventAt: c.previousEventAt, now: NOW }),
      c.expected,
      c.label,
    );
  }
});
