import { invalidField } from "./errors.ts";

const MAX_NAME_LENGTH = 200;
const CONTROL = /\p{Cc}/u;

/**
 * A resource's display name (a workflow's, a topic's): trimmed, 1 to 200 characters, no control
 * characters. A 400 naming the `name` field otherwise.
 */
export function displayName(raw: string): string {
  const name = raw.trim();
  const length = [...name].length;
  if (length === 0) throw invalidField("name", "must not be empty or only whitespace");
  if (length > MAX_NAME_LENGTH) throw invalidField("name", `must be at most ${MAX_NAME_LENGTH} characters`);
  if (CONTROL.test(name)) throw invalidField("name", "must not contain control characters");
  return name;
}
