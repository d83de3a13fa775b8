import assert from "node:assert/strict";
import net from "node:net";
import { after, describe, test } from "node:test";
import { type SmtpSink, startSmtpSink } from "../../test/sinks.ts";
import { outboundPolicy } from "../outbound.ts";
import { ProviderError } from "./domain.ts";
import { plainTextOf } from "./plain-text.ts";
import { type OutgoingEmail, SmtpPools, type SmtpSettings } from "./smtp.ts";

const settingsFor = (sink: { port: number }, more: Partial<SmtpSettings> = {}): SmtpSettings => ({
  host: "127.0.0.1",
  port: sink.port,
  secure: false,
  user: "",
  password: "",
  requireTls: false,
  ignoreTls: true,
  ...more,
});

let counter = 0;
const email = (more: Partial<OutgoingEmail> = {}): OutgoingEmail => ({
  from: { name: "Tidings Team", address: "team@example.com" },
  to: "ada@example.com",
  subject: "Welcome, Ada",
  html: '<h1>Hello Ada</h1><p>Your <a href="https://example.com/x">account</a> is ready.</p>',
  messageId: `<job${counter++}@example.com>`,
  ...more,
});

async function failure(call: Promise<unknown>): Promise<ProviderError> {
  try {
    await call;
  } catch (error) {
    assert.ok(error instanceof ProviderError, String(error));
    return error;
  }
  assert.fail("the call succeeded");
}

describe("SMTP through pooled nodemailer transports, against smtp-server", () => {
  const sinks: SmtpSink[] = [];
  // The sinks listen on loopback, which the policy refuses unless allowed.
  const pools = new SmtpPools({ timeoutMs: 2000, outbound: outboundPolicy(["127.0.0.1/32"]) });
  after(async () => {
    pools.closeAll();
    await Promise.all(sinks.map((s) => s.close()));
  });
  const sink = async (options?: Parameters<typeof startSmtpSink>[0]) => {
    const started = await startSmtpSink(options);
    sinks.push(started);
    return started;
  };

  test("a message arrives as sent: From with the name, To, subject, HTML and a text part, our Message-ID", async () => {
    const server = await sink({ login: { user: "mailer", password: "s3cret-pass" } });
    const sent = await pools.send(
      "integration-a",
      settingsFor(server, { user: "mailer", password: "s3cret-pass" }),
      {
        ...email(),
        messageId: "<abc123@example.com>",
      },
    );
    assert.equal(sent.messageId, "<abc123@example.com>");
    assert.equal(sent.response, "SMTP 250", "the status, never the server's words");
    assert.equal(server.mails.length, 1);
    const [mail] = server.mails;
    assert.ok(mail);
    assert.equal(mail.user, "mailer", "logged in with the integration's user");
    assert.equal(mail.from, "team@example.com");
    assert.deepEqual(mail.to, ["ada@example.com"]);
    assert.equal(mail.parsed.from?.text, '"Tidings Team" <team@example.com>');
    assert.equal(mail.parsed.subject, "Welcome, Ada");
    assert.equal(mail.parsed.messageId, "<abc123@example.com>");
    assert.match(String(mail.parsed.html), /<h1>Hello Ada<\/h1>/);
    assert.match(String(mail.parsed.text), /HELLO ADA/);
    assert.match(String(mail.parsed.text), /account \[https:\/\/example\.com\/x\]/);
  });

  test("pooled: many messages share a few connections", async () => {
    const server = await sink();
    const settings = settingsFor(server);
    await Promise.all(Array.from({ length: 40 }, () => pools.send("integration-b", settings, email())));
    assert.equal(server.mails.length, 40);
    assert.ok(server.connections <= 5, `${server.connections} connections for 40 messages`);
    await Promise.all(Array.from({ length: 10 }, () => pools.send("integration-b", settings, email())));
    assert.ok(server.connections <= 5, "the pool was kept between messages");
  });

  test("changed settings replace the pool; close() drops it", async () => {
    const first = await sink();
    const second = await sink();
    await pools.send("integration-c", settingsFor(first), email());
    const before = pools.size;
    await pools.send("integration-c", settingsFor(second), email());
    assert.equal(pools.size, before, "one pool per integration, replaced");
    assert.equal(first.mails.length, 1);
    assert.equal(second.mails.length, 1);
    pools.close("integration-c");
    assert.equal(pools.size, before - 1);
  });

  test("a server that is down: retryable, connection refused", async () => {
    const down = await startSmtpSink();
    await down.close();
    const error = await failure(pools.send("integration-d", settingsFor(down), email()));
    assert.equal(error.retryable, true);
    assert.match(error.message, /^SMTP: could not connect over SMTP/);
  });

  test("a recipient refused for good (550) is not retried; refused for now (451) is", async () => {
    const refusing = await sink({ refuseRecipients: { code: 550, message: "No such user here" } });
    const permanent = await failure(pools.send("integration-e", settingsFor(refusing), email()));
    assert.equal(permanent.retryable, false);
    assert.equal(permanent.response, "SMTP 550");
    assert.doesNotMatch(permanent.message, /No such user here/, "the server's words are not kept");
    const busy = await sink({ refuseRecipients: { code: 451, message: "Try again later" } });
    const transient = await failure(pools.send("integration-f", settingsFor(busy), email()));
    assert.equal(transient.retryable, true);
    assert.equal(transient.response, "SMTP 451");
  });

  test("a wrong password is retried (the integration can be fixed) and never appears in the error", async () => {
    const server = await sink({ login: { user: "mailer", password: "right" } });
    const error = await failure(
      pools.send(
        "integration-g",
        settingsFor(server, { user: "mailer", password: "wrong-Pa55word" }),
        email(),
      ),
    );
    assert.equal(error.retryable, true);
    assert.match(error.message, /the login was refused .*\[EAUTH\]/);
    assert.doesNotMatch(`${error.message} ${error.response}`, /wrong-Pa55word/);
  });

  test("verify() answers for a live server and throws for a dead one", async () => {
    const server = await sink();
    await pools.verify(settingsFor(server));
    const down = await startSmtpSink();
    await down.close();
    await failure(pools.verify(settingsFor(down)));
  });

  test("an SMTP host the policy refuses gets no connection: refused for good, with the reason", async () => {
    const server = await sink();
    // A name that resolves to the sink's loopback address, through a table standing for DNS.
    const resolver = async () => [{ address: "127.0.0.1", family: 4 as const }];
    const strict = new SmtpPools({ timeoutMs: 2000, outbound: outboundPolicy([], resolver) });
    try {
      for (const host of ["127.0.0.1", "localhost", "mail.internal.test"]) {
        const error = await failure(strict.send("integration-h", settingsFor(server, { host }), email()));
        assert.equal(error.retryable, false, host);
        assert.match(error.message, /^SMTP: refused: .*TIDINGS_OUTBOUND_ALLOW/, host);
        await failure(strict.verify(settingsFor(server, { host })));
      }
      assert.equal(server.connections, 0, "the local listener got no connection");
      // Allowed, the name is connected to at the address it was checked at.
      const allowed = new SmtpPools({
        timeoutMs: 2000,
        outbound: outboundPolicy(["127.0.0.1/32"], resolver),
      });
      await allowed.send("integration-h", settingsFor(server, { host: "mail.internal.test" }), email());
      allowed.closeAll();
      assert.equal(server.mails.length, 1);
    } finally {
      strict.closeAll();
    }
  });

  test("the check answers one failure for nothing listening, a silent listener and one that is not SMTP", async () => {
    const quick = new SmtpPools({ timeoutMs: 300, outbound: outboundPolicy(["127.0.0.1/32"]) });
    const banner = "SSH-2.0-OpenSSH_9.6 internal-banner-7f3a";
    const listeners: net.Server[] = [];
    const listen = async (onConnection: (socket: net.Socket) => void) => {
      const server = net.createServer(onConnection);
      listeners.push(server);
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      return (server.address() as net.AddressInfo).port;
    };
    try {
      const down = await startSmtpSink();
      await down.close();
      const ports = [
        down.port,
        await listen(() => {}), // accepts, says nothing: a timeout
        await listen((socket) => socket.write(`${banner}\r\n`)),
        await listen((socket) => socket.end("HTTP/1.1 400 Bad Request\r\n\r\n")),
      ];
      for (const port of ports) {
        const error = await failure(quick.verify(settingsFor({ port })));
        assert.equal(error.message, `SMTP: could not connect to 127.0.0.1:${port} over SMTP`);
        assert.equal(error.response, "");
      }
    } finally {
      for (const server of listeners) server.close();
    }
  });

  test("plain text from HTML: text kept, tags gone, links spelled out", () => {
    assert.equal(plainTextOf("<p>Hi <b>Ada</b></p><p>Bye</p>"), "Hi Ada\n\nBye");
    assert.equal(plainTextOf('<a href="https://x.example">https://x.example</a>'), "https://x.example");
  });
});
