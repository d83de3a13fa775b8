import { type OutboundPolicy, outboundPolicy } from "../outbound.ts";
import { SmtpPools } from "../providers/index.ts";
import { SecretBox } from "../store/secret-box.ts";
import type { Credentials } from "./domain.ts";
import type { Seal, Unseal } from "./repository.ts";

/**
 * What integrations need beyond the database: the box that seals credentials, the SMTP pools (to
 * close one when its integration changes), how long a chat webhook may take, and where the service
 * may connect on a caller's behalf. One per process; the app (or main.ts) closes it after the
 * worker has stopped.
 */
export interface IntegrationTools {
  /** Undefined when the process was given no key (tests that build the app bare): integrations answer 503. */
  readonly box: SecretBox | undefined;
  readonly pools: SmtpPools;
  readonly webhookTimeoutMs: number;
  /** The outbound-address policy (TIDINGS_OUTBOUND_ALLOW): what SMTP hosts and chat webhooks may reach. */
  readonly outbound: OutboundPolicy;
  close(): void;
}

export function openIntegrationTools(options: {
  secretKey: Buffer | undefined;
  webhookTimeoutMs: number;
  smtpTimeoutMs: number;
  /** Internal hosts and networks that may be reached all the same (TIDINGS_OUTBOUND_ALLOW); none by default. */
  outboundAllow?: readonly string[] | undefined;
}): IntegrationTools {
  const outbound = outboundPolicy(options.outboundAllow ?? []);
  const pools = new SmtpPools({ timeoutMs: options.smtpTimeoutMs, outbound });
  return {
    box: options.secretKey ? new SecretBox(options.secretKey) : undefined,
    pools,
    webhookTimeoutMs: options.webhookTimeoutMs,
    outbound,
    close: () => pools.closeAll(),
  };
}

/** Seal and open with the tools' box; without one, integrations cannot be used at all. */
export function sealing(tools: IntegrationTools): { seal: Seal; unseal: Unseal } {
  const box = tools.box;
  if (!box) {
    // A server set up without a key (only a bare buildApp can be): a 503 whose log line says why.
    throw Object.assign(
      new Error("integrations are unavailable: this app was built without a key for their credentials"),
      { statusCode: 503 },
    );
  }
  return {
    seal: (credentials, id) => box.seal(JSON.stringify(credentials), id),
    unseal: (sealed, id) => {
      try {
        return JSON.parse(box.open(sealed, id)) as Credentials;
      } catch {
        // Sealed with another key (TIDINGS_SECRET_KEY changed): shown as no credentials, never sent.
        return undefined;
      }
    },
  };
}
