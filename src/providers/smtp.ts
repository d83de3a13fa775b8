import { createHash } from "node:crypto";
import net from "node:net";
import nodemailer, { type Transporter } from "nodemailer";
import { normalHost, type OutboundPolicy, OutboundRefused } from "../outbound.ts";
import { type Delivered, ProviderError } from "./domain.ts";
import { plainTextOf } from "./plain-text.ts";

/** An SMTP server and how to log in, as an integration's credentials say (Novu's `nodemailer`). */
export interface SmtpSettings {
  host: string;
  port: number;
  /** TLS from the first byte (port 465); otherwise STARTTLS when the server offers it. */
  secure: boolean;
  user: string;
  password: string;
  requireTls: boolean;
  ignoreTls: boolean;
}

export interface OutgoingEmail {
  from: { name: string; address: string };
  to: string;
  subject: string;
  html: string;
  /** The Message-ID header (with its angle brackets); the same on a resend of the same message. */
  messageId: string;
}

export interface SmtpPoolOptions {
  /** How long connecting and the server's greeting may take. */
  timeoutMs: number;
  /** Where a connection may go (src/outbound.ts): an integration's host is resolved and checked against it. */
  outbound: OutboundPolicy;
  /** Connections per integration (default 5). */
  maxConnections?: number;
}

interface Pool {
  version: string;
  transporter: Transporter;
}

// SMTP commands whose permanent (5xx) refusal is about this message, not the server: trying the
// same message again gets the same answer.
const MESSAGE_COMMANDS = /^(MAIL FROM|RCPT TO|DATA)\b/i;

/**
 * Sends email over SMTP with one pooled nodemailer transport per integration, kept between
 * messages. A pool is replaced when its integration's settings change (compared by a hash of them,
 * so another process's edit is noticed at the next message) or its host resolves elsewhere, closed
 * when the integration is deleted here, and all are closed with the app.
 *
 * The host is resolved and checked against the outbound policy before each message, and the
 * transport connects to the checked address (with the host's name for TLS), so an integration
 * cannot reach an internal service. What is recorded of a failure is the SMTP status and our own
 * words, never the server's text: a "server" that is something else would otherwise show its
 * banner.
 */
export class SmtpPools {
  readonly #pools = new Map<string, Pool>();
  readonly #options: SmtpPoolOptions;

  constructor(options: SmtpPoolOptions) {
    this.#options = options;
  }

  /** How many pools are open (one per integration that sent since its last change). */
  get size(): number {
    return this.#pools.size;
  }

  async send(integrationId: string, settings: SmtpSettings, email: OutgoingEmail): Promise<Delivered> {
    const address = await this.#address(settings);
    const transporter = this.#pool(integrationId, settings, address);
    try {
      const info = await transporter.sendMail({
        from: email.from,
        to: email.to,
        subject: email.subject,
        html: email.html,
        text: plainTextOf(email.html),
        messageId: email.messageId,
      });
      return { messageId: info.messageId, response: statusOf(info.response) };
    } catch (error) {
      throw classify(error);
    }
  }

  /**
   * Whether the server answers as an SMTP server and accepts the login (for `check: true`); throws
   * a ProviderError. A refused connection, a timeout and a greeting that is not SMTP's all answer
   * the same: which of them it was would tell what listens on an address.
   */
  async verify(settings: SmtpSettings): Promise<void> {
    const address = await this.#address(settings);
    const transporter = nodemailer.createTransport(this.#transportOptions(settings, address, false));
    try {
      await transporter.verify();
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code === "EAUTH") {
        throw new ProviderError(
          `SMTP: the server at ${settings.host}:${settings.port} refused the login`,
          true,
        );
      }
      throw new ProviderError(`SMTP: could not connect to ${settings.host}:${settings.port} over SMTP`, true);
    } finally {
      transporter.close();
    }
  }

  /** The address to connect to for the settings' host, checked against the outbound policy. */
  async #address(settings: SmtpSettings): Promise<string> {
    try {
      const [first] = await this.#options.outbound.resolve(settings.host);
      if (!first) throw new OutboundRefused(`${settings.host} has no address`);
      return first.address;
    } catch (error) {
      if (error instanceof OutboundRefused) throw new ProviderError(`SMTP: refused: ${error.message}`, false);
      throw new ProviderError(`SMTP: could not resolve ${settings.host}`, true);
    }
  }

  /** Closes the integration's pool, if it has one (it was changed or deleted). */
  close(integrationId: string): void {
    const pool = this.#pools.get(integrationId);
    if (!pool) return;
    this.#pools.delete(integrationId);
    pool.transporter.close();
  }

  closeAll(): void {
    for (const id of [...this.#pools.keys()]) this.close(id);
  }

  #pool(integrationId: string, settings: SmtpSettings, address: string): Transporter {
    const version = createHash("sha256")
      .update(JSON.stringify([settings, address]))
      .digest("hex");
    const current = this.#pools.get(integrationId);
    if (current?.version === version) return current.transporter;
    if (current) this.close(integrationId);
    const transporter = nodemailer.createTransport(this.#transportOptions(settings, address, true));
    this.#pools.set(integrationId, { version, transporter });
    return transporter;
  }

  #transportOptions(settings: SmtpSettings, address: string, pool: true | false) {
    const timeout = this.#options.timeoutMs;
    const named = net.isIP(normalHost(settings.host)) === 0;
    return {
      pool,
      // The checked address, and the host's name for TLS (SNI and the certificate's name).
      host: address,
      ...(named ? { servername: settings.host } : {}),
      port: settings.port,
      secure: settings.secure,
      requireTLS: settings.requireTls,
      ignoreTLS: settings.ignoreTls,
      ...(settings.user !== "" ? { auth: { user: settings.user, pass: settings.password } } : {}),
      maxConnections: this.#options.maxConnections ?? 5,
      // nodemailer waits two minutes to connect by default; a provider that slow is down.
      connectionTimeout: timeout,
      greetingTimeout: timeout,
      socketTimeout: Math.max(timeout * 3, 30_000),
      // Never through a proxy or a sendmail binary named by the environment: the settings say it all.
      disableFileAccess: true,
      disableUrlAccess: true,
    } as const;
  }
}

/** The status of an SMTP reply ("250"), without the server's words. */
function statusOf(response: unknown): string {
  const code = /^\s*(\d{3})\b/.exec(String(response ?? ""))?.[1];
  return code ? `SMTP ${code}` : "";
}

// nodemailer's error codes, in our words.
const FAILURES: Record<string, string> = {
  ECONNECTION: "could not connect over SMTP",
  ESOCKET: "could not connect over SMTP",
  EDNS: "could not resolve the host",
  ETIMEDOUT: "the server did not answer in time",
  EPROTOCOL: "the server does not speak SMTP as expected",
  ETLS: "TLS could not be set up",
  EAUTH: "the login was refused",
  ENOAUTH: "the server needs a login",
  EENVELOPE: "the sender or a recipient was refused",
  EMESSAGE: "the message was refused",
  EMAXLIMIT: "the server's limits were reached",
  ESTREAM: "the message could not be sent",
};

/**
 * A nodemailer failure as a ProviderError: its code, the SMTP command and reply status, in our
 * words; permanent refusals of the message are not retried.
 */
function classify(error: unknown): ProviderError {
  const e = error as {
    code?: string;
    command?: string;
    responseCode?: number;
    permanent?: boolean;
  };
  const command = /^[A-Z]+(?: [A-Z]+)?/.exec(e.command ?? "")?.[0] ?? "";
  const refusedForGood = e.permanent === true && MESSAGE_COMMANDS.test(command);
  const status = typeof e.responseCode === "number" ? `SMTP ${e.responseCode}` : "";
  const what = [
    e.code && (FAILURES[e.code] ?? "the delivery failed"),
    command && `at ${command}`,
    status && `(${status})`,
    e.code && `[${e.code}]`,
  ].filter(Boolean);
  return new ProviderError(`SMTP: ${what.join(" ") || "the delivery failed"}`, !refusedForGood, status);
}
