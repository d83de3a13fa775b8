import http from "node:http";
import type { AddressInfo } from "node:net";
import { type ParsedMail, simpleParser } from "mailparser";
import { SMTPServer, type SMTPServerAddress } from "smtp-server";

/** A mail the SMTP sink accepted: the envelope as the client gave it, and the message parsed. */
export interface ReceivedMail {
  from: string;
  to: string[];
  user: string;
  parsed: ParsedMail;
  raw: string;
}

export interface SmtpSinkOptions {
  /** Listen on this port (a restart of a sink that was down); default: any free one. */
  port?: number;
  /** Only this login is accepted (AUTH PLAIN/LOGIN); default: no login needed. */
  login?: { user: string; password: string };
  /** Refuse every recipient with this reply (e.g. 550 or 451). */
  refuseRecipients?: { code: number; message: string };
  /** Let the process exit while it listens (a sink shared by a whole file, never closed). */
  unref?: boolean;
}

export interface SmtpSink {
  readonly port: number;
  readonly mails: ReceivedMail[];
  /** How many SMTP connections were opened to it. */
  readonly connections: number;
  /** Every AUTH attempt a client made (accepted or not), with the credentials it sent. */
  readonly auths: { username: string; password: string }[];
  close(): Promise<void>;
}

/** A real SMTP server on 127.0.0.1 (smtp-server) that keeps what it receives, parsed (mailparser). */
export async function startSmtpSink(options: SmtpSinkOptions = {}): Promise<SmtpSink> {
  const mails: ReceivedMail[] = [];
  const auths: { username: string; password: string }[] = [];
  let connections = 0;
  const login = options.login;
  const server = new SMTPServer({
    disabledCommands: login ? ["STARTTLS"] : ["STARTTLS", "AUTH"],
    allowInsecureAuth: true,
    // Closing does not wait for the clients' pooled connections to leave (30 s by default).
    closeTimeout: 50,
    authOptional: !login,
    logger: false,
    onConnect(_session, callback) {
      connections++;
      callback();
    },
    onAuth(auth, _session, callback) {
      auths.push({ username: auth.username ?? "", password: auth.password ?? "" });
      if (login && auth.username === login.user && auth.password === login.password) {
        callback(null, { user: auth.username });
      } else {
        callback(Object.assign(new Error("Invalid username or password"), { responseCode: 535 }));
      }
    },
    onRcptTo(_address: SMTPServerAddress, _session, callback) {
      const refuse = options.refuseRecipients;
      if (refuse) callback(Object.assign(new Error(refuse.message), { responseCode: refuse.code }));
      else callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", () => {
        const raw = Buffer.concat(chunks).toString("utf8");
        simpleParser(raw)
          .then((parsed) => {
            mails.push({
              from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
              to: session.envelope.rcptTo.map((r) => r.address),
              user: String(session.user ?? ""),
              parsed,
              raw,
            });
            callback();
          })
          .catch((error: Error) => callback(error));
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => resolve());
  });
  if (options.unref) server.server.unref();
  const port = (server.server.address() as AddressInfo).port;
  return {
    port,
    mails,
    auths,
    get connections() {
      return connections;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A request the webhook sink received. */
export interface ReceivedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: unknown;
}

/** How the sink answers a request: a status and body, or no answer at all ("hang"). */
export type Answer = { status: number; body?: string; contentType?: string } | "hang";

export interface WebhookSink {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly requests: ReceivedRequest[];
  /** Sets how the next requests are answered (default 200 "ok"). */
  answer(answer: Answer | ((request: ReceivedRequest) => Answer)): void;
  close(): Promise<void>;
}

/** A local HTTP server standing for Slack, Discord, Teams or Mattermost: records each POST, answers as told. */
export async function startWebhookSink(): Promise<WebhookSink> {
  const requests: ReceivedRequest[] = [];
  let answer: Answer | ((request: ReceivedRequest) => Answer) = { status: 200, body: "ok" };
  const hanging = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // Not JSON: kept as text.
      }
      const request = { method: req.method ?? "", path: req.url ?? "", headers: req.headers, body };
      requests.push(request);
      const chosen = typeof answer === "function" ? answer(request) : answer;
      if (chosen === "hang") {
        hanging.add(res);
        return;
      }
      res.writeHead(chosen.status, { "content-type": chosen.contentType ?? "text/plain" });
      res.end(chosen.body ?? "");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    answer(next) {
      answer = next;
    },
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
