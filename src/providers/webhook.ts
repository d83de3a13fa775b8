import { newObjectId } from "../ids.ts";
import { type ChatProviderId, type Delivered, ProviderError } from "./domain.ts";

export interface WebhookOptions {
  /** How long the whole call may take, answer included. */
  timeoutMs: number;
  /** How much of the answer is read (and kept for the record); the rest is discarded. */
  maxResponseBytes?: number;
}

const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024;
/** What of an answer goes into an error or an execution detail. */
const RECORDED_CHARS = 1_000;

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
 * is worth retrying; any other answer (4xx, a redirect) refuses this call for good. Redirects are
 * not followed: a webhook URL names its endpoint. The URL never appears in an error (it is the
 * credential).
 */
export async function postWebhook(
  providerId: ChatProviderId,
  url: string,
  text: string,
  options: WebhookOptions,
): Promise<Delivered> {
  let response: Response;
  const signal = AbortSignal.timeout(options.timeoutMs);
  try {
    response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", "user-agent": "Tidings" },
      body: JSON.stringify(webhookBody(providerId, text)),
      redirect: "manual",
      signal,
    });
  } catch (error) {
    throw new ProviderError(`${providerId} webhook: ${failureOf(error, options.timeoutMs)}`, true);
  }
  let body: string;
  try {
    body = await readCapped(response, options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES);
  } catch (error) {
    throw new ProviderError(
      `${providerId} webhook: HTTP ${response.status}, then ${failureOf(error, options.timeoutMs)}`,
      true,
    );
  }
  const answer = `HTTP ${response.status}${body ? `: ${body.slice(0, RECORDED_CHARS)}` : ""}`;
  if (response.status >= 200 && response.status < 300) {
    return { messageId: messageIdOf(body) ?? newObjectId(), response: answer };
  }
  const retryable = response.status === 408 || response.status === 429 || response.status >= 500;
  throw new ProviderError(`${providerId} webhook answered ${answer}`, retryable, answer);
}

function failureOf(error: unknown, timeoutMs: number): string {
  const name = (error as { name?: string } | null)?.name;
  if (name === "TimeoutError" || name === "AbortError") return `no answer within ${timeoutMs} ms`;
  // fetch's "fetch failed" says nothing; its cause says what (ECONNREFUSED, a reset...).
  const cause = (error as { cause?: { code?: string; message?: string } } | null)?.cause;
  return cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
}

/** The answer's text, at most `max` bytes of it; the rest is not read. */
async function readCapped(response: Response, max: number): Promise<string> {
  if (!response.body) return "";
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    size += value.byteLength;
    if (size >= max) {
      await reader.cancel().catch(() => {});
      break;
    }
  }
  return Buffer.concat(chunks).subarray(0, max).toString("utf8");
}

/** The provider's id for the message, when its answer names one (Discord with ?wait=true, Slack's ts). */
function messageIdOf(body: string): string | undefined {
  if (!body.startsWith("{")) return undefined;
  try {
    const parsed = JSON.parse(body) as Record<string, unknown>;
    for (const field of ["id", "ts", "message_id", "messageId"]) {
      const value = parsed[field];
      if ((typeof value === "string" && value !== "") || typeof value === "number") return String(value);
    }
  } catch {
    // Not JSON after all: no id in it.
  }
  return undefined;
}
