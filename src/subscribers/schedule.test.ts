import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { FieldError } from "../errors.ts";
import {
  clockTime,
  isTimezone,
  isWithinSchedule,
  localTime,
  minutesOf,
  readSchedule,
  type Schedule,
  type WeeklySchedule,
} from "./schedule.ts";

// docs/engine.md, "Subscribers, topics and preferences": the weekly schedule, read on the subscriber's clocks.

// Monday 1 June 2026, 00:00 UTC.
const MONDAY = Date.UTC(2026, 5, 1);
const at = (day: number, hour: number, minute = 0) => MONDAY + ((day * 24 + hour) * 60 + minute) * 60_000;

const nineToFive = { isEnabled: true, hours: [{ start: "09:00 AM", end: "05:00 PM" }] };
const weekdays: WeeklySchedule = {
  monday: nineToFive,
  tuesday: nineToFive,
  wednesday: nineToFive,
  thursday: nineToFive,
  friday: nineToFive,
  saturday: { isEnabled: false, hours: [{ start: "09:00 AM", end: "05:00 PM" }] },
};
const office: Schedule = { isEnabled: true, weeklySchedule: weekdays };
// Monday nights 10 PM to 2 AM, nothing else.
const nights: Schedule = {
  isEnabled: true,
  weeklySchedule: { monday: { isEnabled: true, hours: [{ start: "10:00 PM", end: "02:00 AM" }] } },
};

describe("clock times", () => {
  const cases: [string, number | undefined][] = [
    ["09:00 AM", 540],
    ["9:00 AM", 540],
    ["09:00am", 540],
    ["12:00 AM", 0],
    ["12:30 AM", 30],
    ["12:00 PM", 720],
    ["01:15 PM", 795],
    ["11:59 PM", 1439],
    ["13:00 PM", undefined],
    ["00:30 AM", undefined],
    ["9:60 AM", undefined],
    ["09:00", undefined],
    ["17:00", undefined],
    ["", undefined],
  ];
  for (const [text, minutes] of cases) {
    test(`${JSON.stringify(text)} → ${minutes}`, () => assert.equal(minutesOf(text), minutes));
  }
  test("the canonical spelling, as the inbox writes it", () => {
    assert.deepEqual([0, 30, 540, 720, 795, 1439].map(clockTime), [
      "12:00 AM",
      "12:30 AM",
      "09:00 AM",
      "12:00 PM",
      "01:15 PM",
      "11:59 PM",
    ]);
  });
});

describe("reading a schedule", () => {
  test("times are spelt canonically; days keep their order and what they say", () => {
    const errors: FieldError[] = [];
    const read = readSchedule(
      {
        isEnabled: true,
        weeklySchedule: {
          friday: { isEnabled: true, hours: [{ start: "9:00am", end: "5:30 pm" }] },
          monday: { isEnabled: false },
        },
      },
      "schedule.",
      errors,
    );
    assert.deepEqual(errors, []);
    assert.deepEqual(read, {
      isEnabled: true,
      weeklySchedule: {
        monday: { isEnabled: false },
        friday: { isEnabled: true, hours: [{ start: "09:00 AM", end: "05:30 PM" }] },
      },
    });
  });
  const refused: [string, Schedule, string, RegExp][] = [
    [
      "a 24-hour time",
      {
        isEnabled: true,
        weeklySchedule: { monday: { isEnabled: true, hours: [{ start: "17:00", end: "05:00 PM" }] } },
      },
      "schedule.weeklySchedule.monday.hours[0].start",
      /09:00 AM/,
    ],
    [
      "an end that is not a time",
      {
        isEnabled: false,
        weeklySchedule: { sunday: { isEnabled: true, hours: [{ start: "09:00 AM", end: "late" }] } },
      },
      "schedule.weeklySchedule.sunday.hours[0].end",
      /05:00 PM/,
    ],
    [
      "a day that is not a weekday",
      { isEnabled: true, weeklySchedule: { funday: { isEnabled: true } } as WeeklySchedule },
      "schedule.weeklySchedule",
      /funday/,
    ],
    [
      "an enabled schedule without days",
      { isEnabled: true, weeklySchedule: {} },
      "schedule.weeklySchedule",
      /at least one day/,
    ],
  ];
  for (const [name, schedule, field, message] of refused) {
    test(`refuses ${name}, naming the field`, () => {
      const errors: FieldError[] = [];
      readSchedule(schedule, "schedule.", errors);
      assert.equal(errors[0]?.field, field);
      assert.match(errors[0]?.message ?? "", message);
    });
  }
  test("a disabled schedule may have no days", () => {
    const errors: FieldError[] = [];
    assert.deepEqual(readSchedule({ isEnabled: false, weeklySchedule: {} }, "", errors), {
      isEnabled: false,
      weeklySchedule: {},
    });
    assert.deepEqual(errors, []);
  });
});

describe("timezones", () => {
  test("IANA names are zones; offsets, unknown names and empty text are not", () => {
    for (const zone of ["UTC", "Europe/Paris", "America/Argentina/Buenos_Aires", "Etc/GMT+2"])
      assert.ok(isTimezone(zone), zone);
    for (const zone of ["", "+02:00", "Mars/Olympus", "Europe/Paris; drop", "x".repeat(80)])
      assert.ok(!isTimezone(zone), zone);
  });
  test("the local weekday and minute of a moment, UTC when the zone is unknown", () => {
    // Monday 02:30 UTC is Sunday 22:30 in New York (EDT), Monday 11:30 in Tokyo.
    const moment = at(0, 2, 30);
    assert.deepEqual(localTime(moment, "UTC"), { weekday: "monday", minutes: 150 });
    assert.deepEqual(localTime(moment, "America/New_York"), { weekday: "sunday", minutes: 22 * 60 + 30 });
    assert.deepEqual(localTime(moment, "Asia/Tokyo"), { weekday: "monday", minutes: 11 * 60 + 30 });
    assert.deepEqual(localTime(moment, ""), { weekday: "monday", minutes: 150 });
    assert.deepEqual(localTime(moment, "Mars/Olympus"), { weekday: "monday", minutes: 150 });
  });
});

describe("whether a moment is within the schedule", () => {
  const cases: [string, Schedule | undefined, number, string, boolean][] = [
    ["no schedule: always", undefined, at(6, 3), "UTC", true],
    ["a schedule turned off: always", { ...office, isEnabled: false }, at(6, 3), "UTC", true],
    ["enabled without a weekly schedule: always", { isEnabled: true }, at(6, 3), "UTC", true],
    ["Monday 10:00 in office hours", office, at(0, 10), "UTC", true],
    ["the first minute of the range counts", office, at(0, 9), "UTC", true],
    ["the last minute of the range counts", office, at(0, 17), "UTC", true],
    ["a minute after it does not", office, at(0, 17, 1), "UTC", false],
    ["before it does not", office, at(0, 8, 59), "UTC", false],
    ["Saturday: the day is off, whatever its hours", office, at(5, 10), "UTC", false],
    ["Sunday: the day is not in the schedule", office, at(6, 10), "UTC", false],
    // 14:00 UTC on Monday is 10:00 in New York (EDT, UTC-4), 23:00 in Tokyo.
    ["read on the subscriber's clocks: New York", office, at(0, 14), "America/New_York", true],
    ["read on the subscriber's clocks: Tokyo", office, at(0, 14), "Asia/Tokyo", false],
    // The subscriber's weekday, not UTC's: a Sunday in UTC that is a Monday there, a Saturday that is a Friday.
    ["Sunday 22:00 UTC is Monday 10:00 in Auckland", office, at(6, 22), "Pacific/Auckland", true],
    ["Saturday 00:00 UTC is Friday 17:00 in Los Angeles", office, at(5, 0), "America/Los_Angeles", true],
    ["Monday 10:00 UTC is midnight in Honolulu", office, at(0, 10), "Pacific/Honolulu", false],
    ["an unknown timezone reads UTC", office, at(0, 10), "Mars/Olympus", true],
    ["an overnight range from its start on its day", nights, at(0, 23), "UTC", true],
    ["an overnight range until its end the next morning", nights, at(1, 1, 59), "UTC", true],
    ["the end minute of an overnight range counts", nights, at(1, 2), "UTC", true],
    ["and not after", nights, at(1, 2, 1), "UTC", false],
    ["nor the early hours of its own day", nights, at(0, 1), "UTC", false],
    ["nor the evening before its start", nights, at(0, 21, 59), "UTC", false],
  ];
  for (const [name, schedule, moment, timezone, within] of cases) {
    test(name, () => assert.equal(isWithinSchedule(schedule, moment, timezone), within));
  }
});
