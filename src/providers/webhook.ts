import http from "node:http";
import https from "node:https";
import { newObjectId } from "../ids.ts";
import { lookupOf, type OutboundPolicy, OutboundRefused, type ResolvedAddress } from "../outbound.ts";
import { type ChatProviderId, type Delivered, ProviderError } from "./domain.ts";

export interface WebhookOptions {
  /** How long the whole call may take, answer included. */
  timeoutMs: number;
  /** Where the call may go (src/outbound.ts); the URL's host is resolved and checked against it. */
  outbound: OutboundPolicy;
  /** How much of the answer is read (for a message id); the rest is discarded. */
  maxResponseBytes?: number;
}

const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024;
// A provider's id for the message, as kept: short, and nothing that could carry an answer's text.
const MESSAGE_ID = /^[\w.:@-]{1,128}$/;

// Connections kept open between calls, as fetch kept them. A pooled connection was opened to an
// address the policy checked when it was opened.
const agents = {
  "http:": new http.Agent({ keepAlive: true, maxSockets: 64 }),
  "https:": new https.Agent({ keepAlive: true, maxSockets: 64 }),
};

/** The JSON body each chat provider's incoming webhook expects for a plain text message. */
export function webhookBody(providerId: ChatProviderId, text: string): Record<string, unknown> {
  switch (providerId) {
    case "discord":
      return { content: text };
    case "msteams":
      // An Office 365 connector card: Teams' incoming webhooks take `text` inside it.
      return { "@type": "MessageCard", "@context": "https://schema.org/extensions", text };
    case "slack":
    case "mattermost":
      return { text };
  }
}

/**
 * POSTs the text to a chat webhook. 2xx is delivered; a timeout, a network failure, 408, 429 or 5xx
 * is worth retrying; any other answer (4xx, a redirect) refuses this call for good, and so does an
 * address the outbound policy refuses. Redirects are not followed: a webhook URL names its
 * endpoint. What is recorded of an answer is its status, never its body (a webhook that reached
 * something it should not must not read that back to the caller), and the URL never appears in an
 * error (it is the credential).
 */
export async function postWebhook(
  providerId: ChatProviderId,
  url: string,
  text: string,
  options: WebhookOptions,
): Promise<Delivered> {
  const signal = AbortSignal.timeout(options.timeoutMs);
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    throw new ProviderError(`${providerId} webhook: the URL is not a URL`, false);
  }
  if (target.protocol !== "http:" && target.protocol !== "https:") {
    throw new ProviderError(`${providerId} webhook: the URL is not http or https`, false);
  }
  let addresses: ResolvedAddress[];
  try {
    addresses = await options.outbound.resolve(target.hostname);
  } catch (error) {
    if (error instanceof OutboundRefused) {
      throw new ProviderError(`${providerId} webhook: refused: ${error.message}`, false);
    }
    throw new ProviderError(`${providerId} webhook: ${failureOf(error, options.timeoutMs)}`, true);
  }
  const body = JSON.stringify(webhookBody(providerId, text));
  let answer: { status: number; body: string };
  try {
    answer = await post(
      target,
      body,
      addresses,
      signal,
      options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
    );
  } catch (error) {
    throw new ProviderError(`${providerId} webhook: ${failureOf(error, options.timeoutMs)}`, true);
  }
  const status = `HTTP ${answer.status}`;
  if (answer.status >= 200 && answer.status < 300) {
    return { messageId: messageIdOf(answer.body) ?? newObjectId(), response: status };
  }
  const retryable = answer.status === 408 || answer.status === 429 || answer.status >= 500;
  throw new ProviderError(`${providerId} webhook answered ${status}`, retryable, status);
}

/** One POST to the checked addresses, its answer's status and at most `max` bytes of its body. */
function post(
  target: URL,
  body: string,
  addresses: readonly ResolvedAddress[],
  signal: AbortSignal,
  max: number,
): Promise<{ status: number; body: string }> {
  const client = target.protocol === "https:" ? https : http;
  return new Promise((resolve, reject) => {
    const request = client.request(
      target,
      {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "content-length": Buffer.byteLength(body),
          "user-agent": "Tidings",
        },
        agent: agents[target.protocol as "http:" | "https:"],
        // The name was resolved and checked: connect to what was checked, not to a new answer.
        lookup: lookupOf(addresses),
        signal,
      },
      (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        response.on("data", (chunk: Buffer) => {
          if (size >= max) return;
          chunks.push(chunk);
          size += chunk.byteLength;
          if (size >= max) response.destroy();
        });
        const done = () =>
          resolve({
            status: response.statusCode ?? 0,
            body: Buffer.concat(chunks).subarray(0, max).toString("utf8"),
          });
        response.on("end", done);
        response.on("close", done);
        response.on("error", (error) => (size >= max ? done() : reject(error)));
      },
    );
    request.on("error", reject);
    request.end(body);
  });
}

// What a failed call is recorded as: its code in our words, never the remote's.
const FAILURES: Record<string, string> = {
  ECONNREFUSED: "the connection was refused",
  ECONNRESET: "the connection was reset",
  EPIPE: "the connection was closed",
  ETIMEDOUT: "the connection timed out",
  EHOSTUNREACH: "the host is unreachable",
  ENETUNREACH: "the network is unreachable",
  ENOTFOUND: "the host name does not resolve",
  EAI_AGAIN: "the host name could not be resolved for now",
  CERT_HAS_EXPIRED: "its TLS certificate has expired",
  DEPTH_ZERO_SELF_SIGNED_CERT: "its TLS certificate is self-signed",
  SELF_SIGNED_CERT_IN_CHAIN: "its TLS certificate is not trusted",
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: "its TLS certificate is not trusted",
  ERR_TLS_CERT_ALTNAME_INVALID: "its TLS certificate is for another name",
  HPE_INVALID_CONSTANT: "it does not answer HTTP",
  HPE_INVALID_STATUS: "it does not answer HTTP",
};

function failureOf(error: unknown, timeoutMs: number): string {
  const name = (error as { name?: string } | null)?.name;
  if (name === "TimeoutError" || name === "AbortError") return `no answer within ${timeoutMs} ms`;
  const code = (error as { code?: string } | null)?.code ?? "";
  const known = FAILURES[code];
  return known ? `${known} (${code})` : "the call failed";
}

/** The provider's id for the message, when its answer names one (Discord with ?wait=true, Slack's ts). */
function messageIdOf(body: string): string | undefined {
  if (!body.startsWith("{")) return undefined;
  try {
    const parsed = JSON.parse(body) as Record<string, unknown>;
    for (const field of ["id", "ts", "message_id", "messageId"]) {
      const value = parsed[field];
      if ((typeof value === "string" || typeof value === "number") && MESSAGE_ID.test(String(value))) {
        return String(value);
      }
    }
  } catch {
    // Not JSON after all: no id in it.
  }
  return undefined;
}
