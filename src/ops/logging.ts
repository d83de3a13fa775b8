import { Writable } from "node:stream";
import pino, { type Logger } from "pino";

/**
 * Secrets never reach a log line. Two layers: pino `redact` removes the headers that carry them
 * wherever a request's headers are logged, and every finished line is scrubbed of anything shaped
 * like one of our API keys (`tid_sk_...`), wherever it came from: a URL, an error message, a body.
 */
export const logRedaction = {
  paths: [
    "req.headers.authorization",
    'req.headers["idempotency-key"]',
    "req.headers.cookie",
    "req.headers['x-api-key']",
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
    req: (req: { method: string; url: string; id: string }) => ({
      method: req.method,
      url: redactUrl(req.url),
      id: req.id,
    }),
    err: pino.stdSerializers.err,
  },
});

/** A stream that scrubs each line before handing it to `out` (stdout by default). */
export function scrubbingStream(out: { write(chunk: string): unknown } = process.stdout): Writable {
  return new Writable({
    decodeStrings: false,
    write(chunk: string | Buffer, _encoding, done) {
      out.write(scrubLine(typeof chunk === "string" ? chunk : chunk.toString("utf8")));
      done();
    },
  });
}

/** The process logger: JSON lines, secrets redacted, written to `out` (stdout by default). */
export function createLogger(level: string, out?: { write(chunk: string): unknown }): Logger {
  return pino(loggerOptions(level), scrubbingStream(out));
}
