import { randomUUID } from "node:crypto";
import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { ApiError, errorBody } from "../errors.ts";
import { isDatabaseUnavailable } from "../store/store.ts";
import { describeValidation } from "./validation.ts";

/** The request path without its query string: what the error body's `path` shows. */
export function pathOf(request: Pick<FastifyRequest, "raw" | "url">): string {
  const url = request.raw.url ?? request.url;
  const q = url.indexOf("?");
  return q === -1 ? url : url.slice(0, q);
}

// Fastify's own client errors, each with the sentence we answer instead of Fastify's wording.
const FASTIFY_CLIENT_ERRORS: Record<string, (error: FastifyError) => string> = {
  FST_ERR_CTP_EMPTY_JSON_BODY: () => "The request body must be a JSON object, and it is empty",
  FST_ERR_CTP_INVALID_JSON_BODY: () => "The request body is not valid JSON",
  FST_ERR_CTP_BODY_TOO_LARGE: () => "The request body is too large",
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () => "Content-Type must be application/json",
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => "Content-Length does not match the body",
  FST_ERR_CTP_INVALID_TYPE: () => "Content-Type is invalid",
};

export function sendError(request: FastifyRequest, reply: FastifyReply, error: FastifyError | Error) {
  const path = pathOf(request);
  if (error instanceof ApiError) {
    if (error.headers) reply.headers(error.headers);
    return reply
      .code(error.statusCode)
      .send(
        errorBody(error.statusCode, error.message, path, { errors: error.errors, details: error.details }),
      );
  }
  const fastifyError = error as FastifyError;
  if (fastifyError.validation) {
    const { message, errors } = describeValidation(
      fastifyError.validation,
      fastifyError.validationContext ?? "body",
    );
    return reply.code(400).send(errorBody(400, message, path, { errors }));
  }
  const status = fastifyError.statusCode;
  if (status !== undefined && status >= 400 && status < 500) {
    // A client error raised by Fastify or one of its plugins (bad JSON, too large, rate limited...).
    const describe = fastifyError.code ? FASTIFY_CLIENT_ERRORS[fastifyError.code] : undefined;
    // JSON.parse's own SyntaxError (not wrapped by Fastify) says the same thing.
    const message = describe
      ? describe(fastifyError)
      : error instanceof SyntaxError
        ? "The request body is not valid JSON"
        : fastifyError.message;
    return reply.code(status).send(errorBody(status, message, path));
  }
  // A bug or an outage: say nothing about internals; the errorId finds the log line.
  if (status === 503 || isDatabaseUnavailable(error)) {
    return sendUnavailable(request, reply, "The service is unavailable; try again shortly", "error", {
      err: error,
    });
  }
  const errorId = randomUUID();
  request.log.error({ err: error, errorId }, "request failed");
  return reply.code(500).send(errorBody(500, "Internal server error", path, { errorId }));
}

/**
 * A 503 in the one error body, with Retry-After and an errorId that the log line (at `level`) carries
 * too, as every 5xx does (contract part 4): outages, draining, the request deadline, /health.
 */
export function sendUnavailable(
  request: FastifyRequest,
  reply: FastifyReply,
  message: string,
  level: "warn" | "error" = "warn",
  logged: Record<string, unknown> = {},
) {
  const errorId = randomUUID();
  request.log[level]({ ...logged, errorId }, message);
  return reply
    .code(503)
    .header("retry-after", "1")
    .send(errorBody(503, message, pathOf(request), { errorId }));
}

/**
 * Fastify's `frameworkErrors` option: errors raised before routing (a path that is not valid
 * percent-encoding, a path segment longer than the router allows). Without it Fastify answers in its
 * own body shape and without X-Request-Id, because no hook has run yet. Both mean a malformed path,
 * which the contract answers with a 400 (a malformed id in a path).
 */
export function handleFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  reply.header("x-request-id", request.id);
  const path = pathOf(request);
  if (error.code === "FST_ERR_BAD_URL") {
    return reply.code(400).send(errorBody(400, "The request path is not valid percent-encoded text", path));
  }
  if (error.code === "FST_ERR_MAX_PARAM_LENGTH") {
    return reply.code(400).send(errorBody(400, "A segment of the request path is too long", path));
  }
  return sendError(request, reply, error);
}
