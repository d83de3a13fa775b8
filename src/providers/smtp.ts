import { createHash } from "node:crypto";
import nodemailer, { type Transporter } from "nodemailer";
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
 * so another process's edit is noticed at the next message), closed when the integration is
 * deleted here, and all are closed with the app.
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
    const transporter = this.#pool(integrationId, settings);
    try {
      const info = await transporter.sendMail({
        from: email.from,
        to: email.to,
        subject: email.subject,
        html: email.html,
        text: plainTextOf(email.html),
        messageId: email.messageId,
      });
      return { messageId: info.messageId, response: String(info.response ?? "") };
    } catch (error) {
      throw classify(error);
    }
  }

  /** Whether the server answers and accepts the login (for `check: true`); throws a ProviderError. */
  async verify(settings: SmtpSettings): Promise<void> {
    const transporter = nodemailer.createTransport(this.#transportOptions(settings, false));
    try {
      await transporter.verify();
    } catch (error) {
      throw classify(error);
    } finally {
      transporter.close();
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

  #pool(integrationId: string, settings: SmtpSettings): Transporter {
    const version = createHash("sha256").update(JSON.stringify(settings)).digest("hex");
    const current = this.#pools.get(integrationId);
    if (current?.version === version) return current.transporter;
    if (current) this.close(integrationId);
    const transporter = nodemailer.createTransport(this.#transportOptions(settings, true));
    this.#pools.set(integrationId, { version, transporter });
    return transporter;
  }

  #transportOptions(settings: SmtpSettings, pool: true | false) {
    const timeout = this.#options.timeoutMs;
    return {
      pool,
      host: settings.host,
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

/** A nodemailer failure as a ProviderError: permanent refusals of the message are not retried. */
function classify(error: unknown): ProviderError {
  const e = error as {
    message?: string;
    code?: string;
    command?: string;
    response?: string;
    responseCode?: number;
    permanent?: boolean;
  };
  const response = e.response ?? "";
  const command = e.command ?? "";
  const refusedForGood = e.permanent === true && MESSAGE_COMMANDS.test(command);
  const what = [e.code, command && `at ${command}`, e.message].filter(Boolean).join(" ");
  return new ProviderError(`SMTP: ${what || String(error)}`, !refusedForGood, response);
}
