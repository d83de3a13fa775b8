import type { FieldError } from "../errors.ts";

/**
 * A subscriber's weekly schedule (docs/engine.md, "Subscribers, topics and preferences"): the hours
 * of each day when it wants to be reached outside its inbox. Pure functions, table-tested; the
 * moment and the timezone are given, never read here.
 */

export const WEEKDAYS = [
  "monday",
  "tuesday",
  "wednesday",
  "thursday",
  "friday",
  "saturday",
  "sunday",
] as const;
export type Weekday = (typeof WEEKDAYS)[number];

/** Clock times as the inbox writes them: `hh:mm AM` / `hh:mm PM`. */
export interface TimeRange {
  start: string;
  end: string;
}

export interface DaySchedule {
  isEnabled: boolean;
  hours?: TimeRange[];
}

export type WeeklySchedule = Partial<Record<Weekday, DaySchedule>>;

export interface Schedule {
  isEnabled: boolean;
  weeklySchedule?: WeeklySchedule;
}

// Novu's inbox accepts `9:00 AM`, `09:00 AM`, `09:00am`: one or two digits of hour 1-12, minutes,
// an optional space, AM or PM in any case.
const CLOCK_TIME = /^(0?[1-9]|1[0-2]):([0-5][0-9])\s?(AM|PM)$/i;

/** Minutes since midnight of a 12-hour clock time, or undefined when it is not one. */
export function minutesOf(time: string): number | undefined {
  const match = CLOCK_TIME.exec(time);
  if (!match) return undefined;
  const hour = Number(match[1]) % 12;
  const pm = (match[3] as string).toUpperCase() === "PM";
  return (hour + (pm ? 12 : 0)) * 60 + Number(match[2]);
}

/** The canonical spelling of a clock time (`09:00 AM`), as the inbox itself writes it. */
export function clockTime(minutes: number): string {
  const hour24 = Math.floor(minutes / 60) % 24;
  const hour = hour24 % 12 === 0 ? 12 : hour24 % 12;
  const minute = minutes % 60;
  return `${String(hour).padStart(2, "0")}:${String(minute).padStart(2, "0")} ${hour24 < 12 ? "AM" : "PM"}`;
}

export const MAX_RANGES_PER_DAY = 24;

/** The schedule as sent, checked and spelt canonically; each problem names its field under `prefix`. */
export function readSchedule(input: Schedule, prefix: string, errors: FieldError[]): Schedule {
  const schedule: Schedule = { isEnabled: input.isEnabled };
  const weekly = input.weeklySchedule;
  if (weekly === undefined) return schedule;
  const days = Object.keys(weekly);
  const unknown = days.filter((day) => !(WEEKDAYS as readonly string[]).includes(day));
  if (unknown.length > 0) {
    errors.push({
      field: `${prefix}weeklySchedule`,
      message: `has days that are not weekdays: ${unknown.join(", ")} (use ${WEEKDAYS.join(", ")})`,
    });
    return schedule;
  }
  if (input.isEnabled && days.length === 0) {
    errors.push({
      field: `${prefix}weeklySchedule`,
      message: "must name at least one day when the schedule is enabled",
    });
  }
  const out: WeeklySchedule = {};
  for (const day of WEEKDAYS) {
    const given = weekly[day];
    if (given === undefined) continue;
    const hours = given.hours?.map((range, i) => {
      const at = `${prefix}weeklySchedule.${day}.hours[${i}]`;
      const start = minutesOf(range.start);
      const end = minutesOf(range.end);
      if (start === undefined)
        errors.push({ field: `${at}.start`, message: "must be a time such as 09:00 AM" });
      if (end === undefined) errors.push({ field: `${at}.end`, message: "must be a time such as 05:00 PM" });
      return { start: clockTime(start ?? 0), end: clockTime(end ?? 0) };
    });
    out[day] = hours === undefined ? { isEnabled: given.isEnabled } : { isEnabled: given.isEnabled, hours };
  }
  schedule.weeklySchedule = out;
  return schedule;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timezone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timezone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat("en-US", {
      timeZone: timezone,
      weekday: "long",
      hour: "2-digit",
      minute: "2-digit",
      hourCycle: "h23",
    });
    formatters.set(timezone, formatter);
  }
  return formatter;
}

// A zone's name, never an offset (`+02:00`), which newer runtimes also accept as a timeZone.
const ZONE_NAME = /^[A-Za-z][A-Za-z0-9_+/-]{0,63}$/;

/** Whether `timezone` is an IANA zone name this runtime knows (`Europe/Paris`, `UTC`). */
export function isTimezone(timezone: string): boolean {
  if (!ZONE_NAME.test(timezone)) return false;
  try {
    formatterFor(timezone);
    return true;
  } catch {
    return false;
  }
}

/**
 * The weekday and minutes since midnight of `now` (epoch ms) on the clocks of `timezone`; UTC when
 * the timezone is empty or unknown.
 */
export function localTime(now: number, timezone: string): { weekday: Weekday; minutes: number } {
  const zone = isTimezone(timezone) ? timezone : "UTC";
  const parts = formatterFor(zone).formatToParts(new Date(now));
  const part = (type: string) => parts.find((p) => p.type === type)?.value ?? "";
  return {
    weekday: part("weekday").toLowerCase() as Weekday,
    minutes: Number(part("hour")) * 60 + Number(part("minute")),
  };
}

const previousDay = (day: Weekday): Weekday => WEEKDAYS[(WEEKDAYS.indexOf(day) + 6) % 7] as Weekday;

/**
 * Whether `now` falls within the schedule, read on the subscriber's clocks. No schedule, one turned
 * off, or one without a weekly schedule: always. Otherwise the day must be on and one of its ranges
 * must hold the minute, both ends included. A range that ends before it starts runs past midnight:
 * from its start to midnight on its day, and on to its end the next morning (whatever that next day
 * says).
 */
export function isWithinSchedule(schedule: Schedule | undefined, now: number, timezone: string): boolean {
  if (!schedule?.isEnabled || !schedule.weeklySchedule) return true;
  const weekly = schedule.weeklySchedule;
  const { weekday, minutes } = localTime(now, timezone);
  const ranges = (day: Weekday) => {
    const found = weekly[day];
    return found?.isEnabled ? (found.hours ?? []) : [];
  };
  const bounds = (range: TimeRange) => ({
    start: minutesOf(range.start) ?? 0,
    end: minutesOf(range.end) ?? 0,
  });
  for (const range of ranges(weekday)) {
    const { start, end } = bounds(range);
    if (end >= start ? start <= minutes && minutes <= end : minutes >= start) return true;
  }
  for (const range of ranges(previousDay(weekday))) {
    const { start, end } = bounds(range);
    if (end < start && minutes <= end) return true;
  }
  return false;
}
