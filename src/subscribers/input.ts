import { badRequest, type FieldError } from "../errors.ts";
import type { OutboundPolicy } from "../outbound.ts";
import {
  CHANNEL_MASK,
  type ChannelCredentials,
  maskedWebhookUrl,
  type ProfileField,
  type SubscriberProfile,
} from "./domain.ts";
import { isTimezone } from "./schedule.ts";
import type { ChannelInputValue, CreateSubscriberInput, CredentialsInputValue } from "./schemas.ts";

/**
 * The rules a subscriber's fields follow, beyond their JSON types (which the route schemas check):
 * pure functions, so a single create can refuse a request and a bulk can refuse one entry alike.
 */

export const MAX_SUBSCRIBER_ID_LENGTH = 128;
export const MAX_DATA_BYTES = 64 * 1024;

const CONTROL = /\p{Cc}/u;
const LONE_SURROGATE = /\p{Cs}/u;
// The HTML living standard's "valid email address", with at least one dot in the domain.
const EMAIL =
  /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;
// A BCP 47 language tag as clients send them: a language, then subtags (`en`, `en-US`, `zh-Hant-TW`,
// and `pt_BR`, which Novu accepts too).
const LOCALE = /^[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{1,8})*$/;

/** What is wrong with a subscriberId, or undefined when it is a valid one. */
export function subscriberIdProblem(value: string): string | undefined {
  if (value.trim() === "") return "must not be empty";
  if ([...value].length > MAX_SUBSCRIBER_ID_LENGTH)
    return `must be at most ${MAX_SUBSCRIBER_ID_LENGTH} characters`;
  if (CONTROL.test(value)) return "must not contain control characters";
  if (LONE_SURROGATE.test(value)) return "must be valid Unicode text";
  return undefined;
}

export type ProfileInput = {
  [K in Exclude<ProfileField, "data">]?: string | null | undefined;
} & { data?: Record<string, unknown> | null | undefined };

/**
 * The profile fields sent, checked and normalised: null clears a field (Novu clients send it so),
 * an email is trimmed. Problems are collected, each naming its field under `prefix`.
 */
export function readProfile(input: ProfileInput, prefix: string, errors: FieldError[]): SubscriberProfile {
  const profile: SubscriberProfile = {};
  const fail = (field: string, message: string) => errors.push({ field: `${prefix}${field}`, message });
  for (const field of ["firstName", "lastName", "phone", "avatar"] as const) {
    const value = input[field];
    if (value === undefined) continue;
    if (value !== null && CONTROL.test(value)) fail(field, "must not contain control characters");
    profile[field] = value ?? "";
  }
  if (input.email !== undefined) {
    const email = (input.email ?? "").trim();
    if (email !== "" && (!EMAIL.test(email) || email.length > 254)) fail("email", "must be an email address");
    profile.email = email;
  }
  if (input.locale !== undefined) {
    const locale = input.locale ?? "";
    if (locale !== "" && !LOCALE.test(locale)) fail("locale", "must be a language tag such as en or en-US");
    profile.locale = locale;
  }
  if (input.timezone !== undefined) {
    const timezone = input.timezone ?? "";
    if (timezone !== "" && !isTimezone(timezone))
      fail("timezone", "must be an IANA timezone such as Europe/Paris or America/New_York");
    profile.timezone = timezone;
  }
  if (input.data !== undefined) {
    const data = input.data ?? {};
    if (Buffer.byteLength(JSON.stringify(data)) > MAX_DATA_BYTES)
      fail("data", `must be at most ${MAX_DATA_BYTES / 1024} KiB as JSON`);
    profile.data = data;
  }
  return profile;
}

/**
 * A channel's credentials, checked: a webhookUrl must be an http(s) URL and, with `outbound`, must
 * not name an internal address the policy refuses (written as an IP, or localhost; a name that
 * resolves to one is refused when the step sends).
 */
export function readCredentials(
  input: CredentialsInputValue,
  prefix: string,
  errors: FieldError[],
  outbound?: OutboundPolicy,
) {
  if (input.webhookUrl !== undefined && input.webhookUrl !== "") {
    let url: URL | undefined;
    try {
      url = new URL(input.webhookUrl);
    } catch {
      url = undefined;
    }
    if (url?.protocol !== "https:" && url?.protocol !== "http:") {
      errors.push({ field: `${prefix}webhookUrl`, message: "must be an http or https URL" });
    } else {
      const refused = outbound?.refusalOf(url.hostname);
      if (refused !== undefined) {
        errors.push({
          field: `${prefix}webhookUrl`,
          message: `must not name an internal address: ${refused}`,
        });
      }
    }
  }
  input.deviceTokens?.forEach((token, i) => {
    if (CONTROL.test(token))
      errors.push({ field: `${prefix}deviceTokens[${i}]`, message: "must not contain control characters" });
  });
}

export function throwIfAny(errors: FieldError[]): void {
  const first = errors[0];
  if (first) {
    const more = errors.length > 1 ? ` (and ${errors.length - 1} more: see errors)` : "";
    throw badRequest(`${first.field} ${first.message}${more}`, errors);
  }
}

export interface Entry {
  subscriberId: string;
  profile: SubscriberProfile;
  channels: ChannelInputValue[];
}

/** A create or upsert entry, checked; its problems (if any) are added to `errors`. */
export function readEntry(
  input: CreateSubscriberInput,
  prefix: string,
  errors: FieldError[],
  outbound?: OutboundPolicy,
): Entry {
  const idProblem = subscriberIdProblem(input.subscriberId);
  if (idProblem) errors.push({ field: `${prefix}subscriberId`, message: idProblem });
  const profile = readProfile(input, prefix, errors);
  const channels = input.channels ?? [];
  channels.forEach((channel, i) => {
    readCredentials(channel.credentials, `${prefix}channels[${i}].credentials.`, errors, outbound);
  });
  return { subscriberId: input.subscriberId, profile, channels };
}

export const fieldsOf = (profile: SubscriberProfile) => Object.keys(profile).sort() as ProfileField[];

const unique = (values: readonly string[]) => [...new Set(values)];

/** A provider's credentials as they stand: what the subscriber has for it, opened. */
export interface CurrentCredentials {
  integrationIdentifier: string;
  credentials: ChannelCredentials;
}

/**
 * One provider's credentials after a set. `replace` (PUT): they become exactly what was sent.
 * `merge` (PATCH): a sent webhookUrl replaces the old one, sent device tokens join the old ones (an
 * empty list clears them, as Novu does). Sent back as answers show them, a credential keeps its
 * value: a webhookUrl equal to the stored one's mask is the stored one, and masked device tokens
 * stand for the stored tokens (so a client that reads a subscriber and writes it back loses nothing).
 */
export function nextCredentials(
  current: CurrentCredentials | undefined,
  input: ChannelInputValue,
  mode: "replace" | "merge",
): CurrentCredentials {
  const sent = input.credentials;
  const stored = current?.credentials ?? { webhookUrl: "", deviceTokens: [] };
  const webhookUrl =
    sent.webhookUrl !== undefined &&
    stored.webhookUrl !== "" &&
    sent.webhookUrl === maskedWebhookUrl(stored.webhookUrl)
      ? stored.webhookUrl
      : sent.webhookUrl;
  const tokens = sent.deviceTokens;
  const sentTokens = tokens?.filter((token) => token !== CHANNEL_MASK) ?? [];
  const keepsStored = tokens?.includes(CHANNEL_MASK) ?? false;
  if (mode === "replace" || !current) {
    return {
      integrationIdentifier: input.integrationIdentifier ?? "",
      credentials: {
        webhookUrl: webhookUrl ?? "",
        deviceTokens: unique([...(keepsStored ? stored.deviceTokens : []), ...sentTokens]),
      },
    };
  }
  return {
    integrationIdentifier: input.integrationIdentifier ?? current.integrationIdentifier,
    credentials: {
      webhookUrl: webhookUrl ?? stored.webhookUrl,
      deviceTokens:
        tokens === undefined
          ? stored.deviceTokens
          : tokens.length === 0
            ? []
            : unique([...stored.deviceTokens, ...sentTokens]),
    },
  };
}
