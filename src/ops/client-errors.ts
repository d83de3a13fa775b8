import { randomUUID } from "node:crypto";
import type { Socket } from "node:net";
import type { FastifyReply, FastifyRequest } from "fastify";
import { errorBody } from "../errors.ts";
import { pathOf } from "../http/error-handler.ts";

const MESSAGES: Record<string, [number, string]> = {
  ERR_HTTP_REQUEST_TIMEOUT: [408, "The request was not received within the time allowed"],
  HPE_HEADER_OVERFLOW: [431, "The request headers are too large"],
  HPE_INVALID_HEADER_TOKEN: [400, "A request header is malformed"],
  HPE_INVALID_METHOD: [400, "The request method is malformed"],
  HPE_INVALID_URL: [400, "The request URL is malformed"],
};

/**
 * Requests too broken for Fastify to route (malformed request line or headers, headers too large,
 * too slow to arrive) are answered here, on the raw socket, still in the one error body.
 */
export function clientErrorHandler(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === "ECONNRESET" || socket.destroyed) return;
  const [status, message] = MESSAGES[error.code ?? ""] ?? [400, "The request is not valid HTTP"];
  if (socket.writable) {
    const body = JSON.stringify(errorBody(status, message, ""));
    const reason =
      status === 408 ? "Request Timeout" : status === 431 ? "Request Header Fields Too Large" : "Bad Request";
    socket.write(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        // Every response carries a request id (contract part 4); one that never parsed gets a new one.
        `X-Request-Id: ${randomUUID()}\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

/**
 * HTTP/1.1 requires a Host header (RFC 9112). Node's own check answers an empty 400; the server
 * turns that check off (`requireHostHeader: false`) and this onRequest hook answers it instead.
 */
export function requireHost(request: FastifyRequest, reply: FastifyReply, done: () => void): void {
  if (request.raw.httpVersion === "1.1" && request.headers.host === undefined) {
    reply.header("connection", "close");
    reply.code(400).send(errorBody(400, "The Host header is missing", pathOf(request)));
    return;
  }
  done();
}
