import type { SmtpSettings } from "../providers/index.ts";
import type { Credentials } from "./domain.ts";

export interface EmailSettings {
  smtp: SmtpSettings;
  from: string;
  senderName: string;
}

// An address as a From header takes it: one @, no spaces or angle brackets, at most 320 characters.
const ADDRESS = /^[^\s@<>",;]+@[^\s@<>",;]+$/;

const text = (value: unknown) => (typeof value === "string" ? value.trim() : "");

/**
 * A nodemailer integration's credentials as SMTP settings, or the problems with them by field
 * ("is required" for a missing one). Novu sends `port` as a string; a number is taken too.
 */
export function smtpSettingsOf(credentials: Credentials): {
  settings?: EmailSettings;
  problems: Record<string, string>;
} {
  const problems: Record<string, string> = {};
  const host = text(credentials.host);
  if (host === "") problems.host = "is required";
  const rawPort = credentials.port;
  const port =
    typeof rawPort === "number" ? rawPort : /^\d{1,5}$/.test(text(rawPort)) ? Number(rawPort) : Number.NaN;
  if (rawPort === undefined || rawPort === "") problems.port = "is required";
  else if (!(Number.isInteger(port) && port >= 1 && port <= 65_535))
    problems.port = "must be a port number (1 to 65535)";
  const from = text(credentials.from);
  if (from === "") problems.from = "is required";
  else if (from.length > 320 || !ADDRESS.test(from)) problems.from = "must be an email address";
  if (Object.keys(problems).length > 0) return { problems };
  return {
    problems,
    settings: {
      smtp: {
        host,
        port,
        secure: credentials.secure === true,
        user: text(credentials.user),
        password: typeof credentials.password === "string" ? credentials.password : "",
        requireTls: credentials.requireTls === true,
        ignoreTls: credentials.ignoreTls === true,
      },
      from,
      senderName: text(credentials.senderName),
    },
  };
}
