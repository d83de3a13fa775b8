import { createHmac } from "node:crypto";
import { callOutbound, httpTarget, type OutboundPolicy } from "./outbound.ts";

/**
 * Calls to a code-first workflow app's bridge endpoint (docs/bridge.md): the app serves its
 * workflows with @novu/framework's `serve`, and this service asks it what they are (`discover`), and
 * what each step renders or decides (`execute`, `preview`). Every call is signed with the
 * environment's secret API key, as the framework checks with `strictAuthentication`:
 *
 *   novu-signature: t=<unix ms>,v1=<hex HMAC-SHA256 of `${t}.${JSON.stringify(body)}`>
 *
 * where the body of a GET is `{}`. A call has `timeoutMs` to answer; a timeout, a network failure,
 * 408, 429 or 5xx is tried again up to `retries` times, waiting `retryBaseMs` × 2^n in between; any
 * other answer fails at once. The host goes through the outbound-address policy, as webhooks do.
 */

export type BridgeAction = "discover" | "health-check" | "execute" | "preview";

export interface BridgeOptions {
  readonly outbound: OutboundPolicy;
  /** Per call (BRIDGE_TIMEOUT_MS, 5 s). */
  readonly timeoutMs: number;
  /** How many times a retryable failure is tried again (BRIDGE_RETRIES, 3). */
  readonly retries: number;
  /** The first wait before trying again; doubled each time (BRIDGE_RETRY_BASE_MS, 1 s). */
  readonly retryBaseMs: number;
}

export const DEFAULT_BRIDGE_OPTIONS = { timeoutMs: 5_000, retries: 3, retryBaseMs: 1_000 } as const;

export interface BridgeRequest {
  /** The bridge URL as registered (`https://app.example.com/api/novu`). */
  url: string;
  action: BridgeAction;
  workflowId?: string;
  stepId?: string;
  /** POST actions' body; GET actions sign `{}`. */
  body?: Record<string, unknown>;
  /** The environment's secret API key. */
  secretKey: string;
}

/** Why a bridge call failed, after its retries; `retryable` says whether later may do better. */
export class BridgeError extends Error {
  override name = "BridgeError";
  constructor(
    message: string,
    readonly retryable: boolean,
    /** How many calls were made. */
    readonly attempts = 1,
    /** The HTTP status, when the bridge answered. */
    readonly status?: number,
  ) {
    super(message);
  }
}

const MAX_ANSWER_BYTES = 5 * 1024 * 1024;

/** The `novu-signature` header value for a body, at `now` (epoch ms). */
export function bridgeSignature(secretKey: string, body: Record<string, unknown>, now: number): string {
  const v1 = createHmac("sha256", secretKey)
    .update(`${now}.${JSON.stringify(body)}`)
    .digest("hex");
  return `t=${now},v1=${v1}`;
}

/** Why a URL cannot be a bridge URL (not http(s), credentials in it), or undefined when it can. */
export function bridgeUrlProblem(url: string, outbound: OutboundPolicy): string | undefined {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return "is not a URL";
  }
  if (target.protocol !== "http:" && target.protocol !== "https:") return "must be an http or https URL";
  if (target.username !== "" || target.password !== "") return "must not carry credentials";
  const refused = outbound.refusalOf(target.hostname);
  return refused === undefined ? undefined : `must not name an internal address: ${refused}`;
}

/**
 * One bridge call with its retries: the parsed JSON answer of a 2xx, or a BridgeError. `sleep` waits
 * between tries (real time: a retry's wait is operational, like a timeout).
 */
export async function callBridge(
  request: BridgeRequest,
  options: BridgeOptions,
  sleep: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
): Promise<unknown> {
  let attempt = 0;
  for (;;) {
    attempt++;
    try {
      return await callOnce(request, options);
    } catch (error) {
      const failure =
        error instanceof BridgeError ? error : new BridgeError(`the call failed: ${String(error)}`, false);
      if (!failure.retryable || attempt > options.retries) {
        const tries = attempt === 1 ? "" : ` (after ${attempt} attempts)`;
        throw new BridgeError(`${failure.message}${tries}`, failure.retryable, attempt, failure.status);
      }
      await sleep(options.retryBaseMs * 2 ** (attempt - 1));
    }
  }
}

async function callOnce(request: BridgeRequest, options: BridgeOptions): Promise<unknown> {
  const target = httpTarget(request.url);
  if (typeof target === "string") throw new BridgeError(`the bridge URL ${target}`, false);
  target.searchParams.set("action", request.action);
  if (request.workflowId !== undefined) target.searchParams.set("workflowId", request.workflowId);
  if (request.stepId !== undefined) target.searchParams.set("stepId", request.stepId);
  const post = request.action === "execute" || request.action === "preview";
  const body = post ? (request.body ?? {}) : {};
  const answer = await callOutbound(target, options.outbound, {
    method: post ? "POST" : "GET",
    headers: {
      accept: "application/json",
      "novu-signature": bridgeSignature(request.secretKey, body, Date.now()),
      ...(post ? { "content-type": "application/json" } : {}),
    },
    body: post ? JSON.stringify(body) : undefined,
    timeoutMs: options.timeoutMs,
    maxBytes: MAX_ANSWER_BYTES,
    overflow: "fail",
  });
  if (!answer.ok) {
    if (answer.refused) throw new BridgeError(`refused: ${answer.message}`, false);
    if (answer.timedOut)
      throw new BridgeError(`the bridge did not answer within ${options.timeoutMs} ms`, true);
    throw new BridgeError(`the bridge could not be reached: ${answer.known ?? answer.message}`, true);
  }
  const status = answer.status;
  if (status >= 200 && status < 300) {
    try {
      return JSON.parse(answer.body);
    } catch {
      throw new BridgeError(
        `the bridge answered HTTP ${status} with a body that is not JSON`,
        false,
        1,
        status,
      );
    }
  }
  const retryable = status === 408 || status === 429 || status >= 500;
  const said = frameworkError(answer.body);
  throw new BridgeError(`the bridge answered HTTP ${status}${said ? `: ${said}` : ""}`, retryable, 1, status);
}

/** The framework's own error (`{code, message}`), shortened; nothing of an answer that is not one. */
function frameworkError(body: string): string | undefined {
  if (!body.startsWith("{")) return undefined;
  try {
    const parsed = JSON.parse(body) as { code?: unknown; message?: unknown };
    if (typeof parsed.code !== "string" || typeof parsed.message !== "string") return undefined;
    const text = `${parsed.code}: ${parsed.message}`;
    return text.length > 500 ? `${text.slice(0, 497)}...` : text;
  } catch {
    return undefined;
  }
}
