// The value sets Novu accepts (contract part 7). A value outside them is a 400 naming the field.
/** How much a workflow's notifications matter, as Novu's inbox shows and filters them. */
export const SEVERITIES = ["high", "medium", "low", "none"] as const;
export const STEP_TYPES = [
  "in_app",
  "email",
  "sms",
  "chat",
  "push",
  "digest",
  "delay",
  "trigger",
  "custom",
  "throttle",
] as const;
export const FILTER_TYPES = [
  "BOOLEAN",
  "TEXT",
  "DATE",
  "NUMBER",
  "STATEMENT",
  "LIST",
  "MULTI_LIST",
  "GROUP",
] as const;
export const FILTER_VALUES = ["AND", "OR"] as const;
export const FILTER_OPERATORS = [
  "LARGER",
  "SMALLER",
  "LARGER_EQUAL",
  "SMALLER_EQUAL",
  "EQUAL",
  "NOT_EQUAL",
  "ALL_IN",
  "ANY_IN",
  "NOT_IN",
  "BETWEEN",
  "NOT_BETWEEN",
  "LIKE",
  "NOT_LIKE",
  "IN",
  "IS_DEFINED",
] as const;
export const FILTER_ON = [
  "subscriber",
  "payload",
  "webhook",
  "previousStep",
  "isOnline",
  "isOnlineInLast",
  "tenant",
] as const;
export const TIME_UNITS = ["seconds", "minutes", "hours", "days", "weeks", "months"] as const;
export const METADATA_TYPES = ["regular", "backoff", "timed", "scheduled"] as const;
/** Trigger identifiers: letters, digits, hyphens and underscores. */
export const IDENTIFIER_PATTERN = "^[A-Za-z0-9_-]{1,100}$";
/** The step types of Novu's v2 API that Tidings runs; its own `trigger` steps show as `custom`. */
export const V2_STEP_TYPES = [
  "in_app",
  "email",
  "sms",
  "push",
  "chat",
  "delay",
  "digest",
  "custom",
  "throttle",
] as const;
