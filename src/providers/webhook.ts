import { newObjectId } from "../ids.ts";
import { callOutbound, httpTarget, type OutboundPolicy } from "../outbound.ts";
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
  const target = httpTarget(url);
  if (typeof target === "string") throw new ProviderError(`${providerId} webhook: the URL ${target}`, false);
  const answer = await callOutbound(target, options.outbound, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(webhookBody(providerId, text)),
    timeoutMs: options.timeoutMs,
    maxBytes: options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
    overflow: "truncate",
  });
  if (!answer.ok) {
    if (answer.refused) throw new ProviderError(`${providerId} webhook: refused: ${answer.message}`, false);
    // Never the error's own text: it may hold the URL, which is the credential.
    const why = answer.timedOut
      ? `no answer within ${options.timeoutMs} ms`
      : (answer.known ?? "the call failed");
    throw new ProviderError(`${providerId} webhook: ${why}`, true);
  }
  const status = `HTTP ${answer.status}`;
  if (answer.status >= 200 && answer.status < 300) {
    return { messageId: messageIdOf(answer.body) ?? newObjectId(), response: status };
  }
  const retryable = answer.status === 408 || answer.status === 429 || answer.status >= 500;
  throw new ProviderError(`${providerId} webhook answered ${status}`, retryable, status);
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
