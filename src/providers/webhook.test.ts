import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { startWebhookSink, type WebhookSink } from "../../test/sinks.ts";
import { outboundPolicy } from "../outbound.ts";
import { ProviderError } from "./domain.ts";
import { postWebhook, webhookBody } from "./webhook.ts";

// The sinks listen on loopback, which the policy refuses unless allowed.
const outbound = outboundPolicy(["127.0.0.1/32"]);

describe("chat webhooks against a local HTTP server", () => {
  let sink: WebhookSink;
  before(async () => {
    sink = await startWebhookSink();
  });
  after(async () => {
    await sink.close();
  });

  const failure = async (call: Promise<unknown>): Promise<ProviderError> => {
    try {
      await call;
    } catch (error) {
      assert.ok(error instanceof ProviderError, String(error));
      return error;
    }
    assert.fail("the call succeeded");
  };

  test("each provider gets the body shape it expects, as JSON", async () => {
    sink.answer({ status: 200, body: "ok" });
    const before = sink.requests.length;
    for (const provider of ["slack", "discord", "msteams", "mattermost"] as const) {
      await postWebhook(provider, `${sink.url}/${provider}`, "Hello *there*", { timeoutMs: 2000, outbound });
    }
    const got = sink.requests.slice(before);
    assert.deepEqual(
      got.map((r) => [r.method, r.path, r.headers["content-type"]]),
      [
        ["POST", "/slack", "application/json"],
        ["POST", "/discord", "application/json"],
        ["POST", "/msteams", "application/json"],
        ["POST", "/mattermost", "application/json"],
      ],
    );
    assert.deepEqual(got[0]?.body, { text: "Hello *there*" });
    assert.deepEqual(got[1]?.body, { content: "Hello *there*" });
    assert.deepEqual(got[2]?.body, {
      "@type": "MessageCard",
      "@context": "https://schema.org/extensions",
      text: "Hello *there*",
    });
    assert.deepEqual(got[3]?.body, { text: "Hello *there*" });
    assert.deepEqual(webhookBody("slack", "x"), { text: "x" });
  });

  test("the provider's message id when its answer has one, else a generated one", async () => {
    sink.answer({ status: 200, body: JSON.stringify({ id: "1234567890" }), contentType: "application/json" });
    const named = await postWebhook("discord", sink.url, "hi", { timeoutMs: 2000, outbound });
    assert.equal(named.messageId, "1234567890");
    assert.equal(named.response, "HTTP 200", "the status, never the body");
    sink.answer({ status: 200, body: "ok" });
    const generated = await postWebhook("slack", sink.url, "hi", { timeoutMs: 2000, outbound });
    assert.match(generated.messageId, /^[0-9a-f]{24}$/);
    assert.equal(generated.response, "HTTP 200");
    // An "id" that is text rather than an id is not taken: it would carry the answer back.
    sink.answer({ status: 200, body: JSON.stringify({ id: "root:x:0:0:root:/root:/bin/bash here" }) });
    const wordy = await postWebhook("discord", sink.url, "hi", { timeoutMs: 2000, outbound });
    assert.match(wordy.messageId, /^[0-9a-f]{24}$/);
  });

  test("5xx, 429 and 408 can be retried; other 4xx and redirects cannot", async () => {
    for (const [status, retryable] of [
      [500, true],
      [503, true],
      [429, true],
      [408, true],
      [400, false],
      [403, false],
      [404, false],
      [410, false],
      [302, false],
    ] as const) {
      sink.answer({ status, body: `status ${status}` });
      const error = await failure(postWebhook("slack", sink.url, "hi", { timeoutMs: 2000, outbound }));
      assert.equal(error.retryable, retryable, `HTTP ${status}`);
      assert.equal(error.response, `HTTP ${status}`);
      assert.doesNotMatch(error.message, /status \d/, "the answer's body is not in the error");
    }
  });

  test("no answer within the timeout: retryable, and the error says so", async () => {
    sink.answer("hang");
    const started = Date.now();
    const error = await failure(postWebhook("slack", sink.url, "hi", { timeoutMs: 150, outbound }));
    assert.ok(Date.now() - started < 1000, "the timeout cut the call short");
    assert.equal(error.retryable, true);
    assert.match(error.message, /no answer within 150 ms/);
    sink.answer({ status: 200, body: "ok" });
  });

  test("nothing listening: retryable, with the reason and never the URL", async () => {
    const closed = await startWebhookSink();
    await closed.close();
    const secretUrl = `${closed.url}/services/T000/B000/SECRETTOKEN`;
    const error = await failure(postWebhook("slack", secretUrl, "hi", { timeoutMs: 2000, outbound }));
    assert.equal(error.retryable, true);
    assert.match(error.message, /the connection was refused \(ECONNREFUSED\)/);
    assert.doesNotMatch(`${error.message} ${error.response}`, /SECRETTOKEN/);
  });

  test("an answer larger than the cap is read only up to the cap, and none of it is recorded", async () => {
    sink.answer({ status: 500, body: "x".repeat(200_000) });
    const error = await failure(
      postWebhook("slack", sink.url, "hi", { timeoutMs: 2000, outbound, maxResponseBytes: 1024 }),
    );
    assert.equal(error.response, "HTTP 500");
    assert.doesNotMatch(error.message, /x{10}/);
    sink.answer({ status: 200, body: "ok" });
  });

  test("an address the policy refuses gets no request: refused for good, with the reason", async () => {
    sink.answer({ status: 200, body: "ok" });
    const before = sink.requests.length;
    const port = new URL(sink.url).port;
    // Names that resolve to the sink's loopback address, through a table standing for DNS.
    const resolver = async () => [{ address: "127.0.0.1", family: 4 as const }];
    const strict = outboundPolicy([], resolver);
    for (const url of [
      sink.url,
      `http://localhost:${port}/`,
      `http://hooks.internal.test:${port}/`,
      `http://[::ffff:127.0.0.1]:${port}/`,
    ]) {
      const error = await failure(postWebhook("slack", url, "hi", { timeoutMs: 2000, outbound: strict }));
      assert.equal(error.retryable, false, url);
      assert.match(error.message, /^slack webhook: refused: .*TIDINGS_OUTBOUND_ALLOW/, url);
    }
    assert.equal(sink.requests.length, before, "the local listener got no request");
  });

  test("the connection goes to the address that was checked, resolved once", async () => {
    sink.answer({ status: 200, body: "ok" });
    let asked = 0;
    // A name only this table knows: the system's resolver would fail it, so a delivery proves the
    // connection used the checked address rather than a second lookup (which could answer anything).
    const resolver = async () => {
      asked++;
      return [{ address: "127.0.0.1", family: 4 as const }];
    };
    const policy = outboundPolicy(["127.0.0.1/32"], resolver);
    const before = sink.requests.length;
    const sent = await postWebhook("slack", `http://rebinding.test:${new URL(sink.url).port}/p`, "hi", {
      timeoutMs: 2000,
      outbound: policy,
    });
    assert.equal(sent.response, "HTTP 200");
    assert.equal(sink.requests.length, before + 1);
    assert.equal(sink.requests.at(-1)?.headers.host, `rebinding.test:${new URL(sink.url).port}`);
    assert.equal(asked, 1);
  });
});
