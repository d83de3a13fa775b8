// Novu's current inbox client (@novu/js) against a test app: the app listening on a free port, and a
// `Novu` whose session has started (or failed to). The client is the judge of the /v1/inbox
// protocol, so the tests drive it rather than imitate it.
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import type { AddressInfo } from "node:net";
import { Novu } from "@novu/js";
import type { Client, TestContext } from "./harness.ts";

/** The hex HMAC-SHA256 of a subscriberId keyed with an API key, as a customer's server computes it. */
export const subscriberHash = (apiKey: string, subscriberId: string) =>
  createHmac("sha256", apiKey).update(subscriberId).digest("hex");

const listening = new WeakMap<object, Promise<string>>();

/** The app listening on a free port of 127.0.0.1, once per app (closed with it): its base URL. */
export function baseUrlOf(ctx: TestContext): Promise<string> {
  let url = listening.get(ctx.app);
  if (!url) {
    url = ctx.app.listen({ port: 0, host: "127.0.0.1" }).then(() => {
      const { port } = ctx.app.server.address() as AddressInfo;
      return `http://127.0.0.1:${port}`;
    });
    listening.set(ctx.app, url);
  }
  return url;
}

/** The environment's public identifier, which the inbox names. */
export async function applicationIdentifierOf(api: Client): Promise<string> {
  const res = await api.get("/v1/environments/me");
  assert.equal(res.statusCode, 200, res.body);
  return res.json().data.identifier as string;
}

/** What the session's start answered, as the client hands it to its listeners. */
export interface InboxSessionData {
  token: string;
  unreadCount: { total: number; severity: Record<"high" | "medium" | "low" | "none", number> };
  totalUnreadCount: number;
  removeNovuBranding: boolean;
  isDevelopmentMode: boolean;
  maxSnoozeDurationHours: number;
  applicationIdentifier?: string;
}

export interface OpenedInbox {
  novu: Novu;
  /** The session's answer; undefined when it failed. */
  session: InboxSessionData | undefined;
  /** The client's error when the session failed (its `status` and `body` are the server's). */
  error: (Error & { status?: number; body?: Record<string, unknown> }) | undefined;
  /** Disconnects the client's socket, if it opened one. */
  close(): Promise<void>;
}

/**
 * A `Novu` client of the app (apiUrl and socketUrl both the app's address) for a subscriber, once
 * its session has started or failed. Novu's own servers are never called: a socketUrl that is not
 * one of Novu's makes the client use socket.io on the app.
 */
export async function openInbox(
  ctx: TestContext,
  options: {
    applicationIdentifier: string;
    subscriber: { subscriberId: string } & Record<string, unknown>;
    subscriberHash?: string;
    useCache?: boolean;
    /** The schedule the page gives a subscriber that has none. */
    defaultSchedule?: Record<string, unknown>;
  },
): Promise<OpenedInbox> {
  const base = await baseUrlOf(ctx);
  const novu = new Novu({
    applicationIdentifier: options.applicationIdentifier,
    subscriber: options.subscriber as { subscriberId: string },
    ...(options.subscriberHash !== undefined ? { subscriberHash: options.subscriberHash } : {}),
    ...(options.useCache !== undefined ? { useCache: options.useCache } : {}),
    ...(options.defaultSchedule !== undefined ? { defaultSchedule: options.defaultSchedule } : {}),
    apiUrl: base,
    socketUrl: base,
    socketOptions: { reconnection: false },
  } as ConstructorParameters<typeof Novu>[0]);
  const outcome = await new Promise<{ data?: InboxSessionData; error?: unknown }>((resolve) => {
    novu.on("session.initialize.resolved", ({ data, error }: { data?: unknown; error?: unknown }) =>
      resolve({ data: data as InboxSessionData, error }),
    );
  });
  return {
    novu,
    session: outcome.error ? undefined : outcome.data,
    error: outcome.error as OpenedInbox["error"],
    close: async () => {
      await novu.socket.disconnect();
    },
  };
}
