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
 * The process logger: JSON lines, secrets redacted, written to `out`, or to stdout.
 *
 * Stdout is written through pino's own destination, asynchronously: a line goes out at once when
 * no write is under way, and lines that come meanwhile go out together in the next write, rather
 * than one blocking write(2) each (a request's line and its write were a tenth of a request's CPU
 * under load). pino flushes what is left when the process exits (an uncaught error, a signal's
 * graceful stop, process.exit); only a SIGKILL can lose the lines of the write under way.
 */
export function createLogger(level: string, out: { write(chunk: string): unknown } = stdoutLog()): Logger {
  return pino(loggerOptions(level), out);
}

/** Stdout as the logger writes it; what else goes to stdout goes through it too, in order. */
export function stdoutLog(): { write(chunk: string): unknown } {
  return pino.destination({ dest: 1, sync: false });
}
