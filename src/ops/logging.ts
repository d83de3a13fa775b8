import pino, { type Logger } from "pino";

/**
 * Secrets never reach a log line. Three layers: a request (`req`, however it is logged) is written
 * as its method, its URL with secret-looking query values redacted, and its id, and nothing else
 * (the serializer below: an allow-list, so its headers never reach the line); pino `redact` removes
 * the headers that carry secrets wherever headers are logged otherwise; and every finished line is
 * scrubbed of anything shaped like one of our API keys (`tid_sk_...`), wherever it came from: a URL,
 * an error message, a body.
 *
 * No `req.headers.*` path: the serializer leaves no headers for it to find, and each such path cost
 * every request's line a copy of its `req` and the path parsed anew (@pinojs/redact).
 */
export const logRedaction = {
  paths: [
    "headers.authorization",
    'headers["idempotency-key"]',
    // postgres.js errors carry the statement's parameters; they may hold an idempotency key.
    "err.parameters",
    "err.args",
  ],
  censor: "[REDACTED]",
};

const KEY_SHAPE = /tid_sk_[A-Za-z0-9_-]*/g;

/** Keeps secrets that were put in a query string out of the logs. */
export function redactUrl(url: string): string {
  // Every request's URL passes here: most have nothing either pattern could match.
  if (!url.includes("?") && !url.includes("&") && !url.includes("tid_sk_")) return url;
  return url
    .replace(/([?&][^=&]*(?:key|token|secret|auth|password)[^=&]*=)[^&]*/gi, "$1[REDACTED]")
    .replace(KEY_SHAPE, "tid_sk_[REDACTED]");
}

export function scrubLine(line: string): string {
  // Most lines hold no key: skip the regex for them (this runs for every line written).
  return line.includes("tid_sk_") ? line.replace(KEY_SHAPE, "tid_sk_[REDACTED]") : line;
}

export const loggerOptions = (level: string): pino.LoggerOptions => ({
  level,
  redact: logRedaction,
  serializers: {
    // An allow-list: see logRedaction.
    req: (req: { method: string; url: string; id: string }) => ({
      method: req.method,
      url: redactUrl(req.url),
      id: req.id,
    }),
    err: pino.stdSerializers.err,
  },
  // Each finished line is scrubbed just before it is written, wherever it goes.
  hooks: { streamWrite: scrubLine },
});

/**
 * The process logger: JSON lines, secrets redacted, written to `out`, by default stdout in batches
 * (see stdoutLog).
 */
export function createLogger(level: string, out: { write(chunk: string): unknown } = stdoutLog()): Logger {
  return pino(loggerOptions(level), out);
}

/**
 * Stdout for the log: the lines written during one turn of the event loop go out together at its
 * end, in one write, and whatever else goes to stdout through it comes after the lines before it.
 * A request's line used to be a write(2) of its own through a Node stream, a tenth of a request's
 * CPU under load; a turn that completes thirty requests now writes once. Lines still pending when
 * the process exits (process.exit, an uncaught error, a signal's graceful stop) are written then;
 * only a SIGKILL can lose them, those of its last turn.
 */
export function stdoutLog(out: { write(chunk: string): unknown } = process.stdout): {
  write(chunk: string): void;
} {
  let pending: string[] = [];
  const flush = () => {
    if (pending.length === 0) return;
    const text = pending.length === 1 ? (pending[0] as string) : pending.join("");
    pending = [];
    out.write(text);
  };
  process.on("exit", flush);
  return {
    write(chunk) {
      if (pending.push(chunk) === 1) setImmediate(flush);
    },
  };
}
