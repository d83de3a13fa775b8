import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { runTs, startServer, stopServer, waitFor } from "./processes.ts";

// The key that seals integration credentials, as the process meets it at start-up (README
// "Email and chat: integrations"): generated once for the embedded default, required with
// DATABASE_URL, refused when malformed.

test("with DATABASE_URL and no TIDINGS_SECRET_KEY the service refuses to start, saying why", async () => {
  // It stops before it connects: the address need not answer.
  const finished = await runTs("src/main.ts", [], {
    DATABASE_URL: "postgres://nobody@127.0.0.1:9/none",
    TIDINGS_SECRET_KEY: "",
  });
  assert.equal(finished.code, 2, finished.stderr);
  assert.match(finished.stderr, /^tidings: TIDINGS_SECRET_KEY must be set when DATABASE_URL is/m);
  assert.match(finished.stderr, /openssl rand -base64 32/);
});

test("a malformed TIDINGS_SECRET_KEY is refused at start-up", async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "tidings-key-"));
  try {
    const finished = await runTs("src/main.ts", [], { DATA_DIR: dataDir, TIDINGS_SECRET_KEY: "hunter2" });
    assert.equal(finished.code, 2, finished.stderr);
    assert.match(finished.stderr, /^tidings: TIDINGS_SECRET_KEY must be 32 random bytes/m);
    assert.doesNotMatch(finished.stderr + finished.stdout, /hunter2/, "the bad key is not repeated");
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});

test("embedded: the key is generated once into DATA_DIR and opens the credentials after a restart", async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "tidings-key-"));
  const env = { DATA_DIR: dataDir, TIDINGS_SECRET_KEY: "" };
  try {
    const first = await startServer(env);
    let apiKey = "";
    try {
      await waitFor(first, () => first.stdout().includes("More keys:"), "the banner");
      apiKey = /Development +(tid_sk_[A-Za-z0-9_-]+)/.exec(first.stdout())?.[1] ?? "";
      assert.match(first.stdout(), /generated the key that encrypts integration credentials/);
      const created = await fetch(`${first.url}/v1/integrations`, {
        method: "POST",
        headers: { authorization: `ApiKey ${apiKey}`, "content-type": "application/json" },
        body: JSON.stringify({
          providerId: "nodemailer",
          channel: "email",
          credentials: {
            host: "smtp.example.com",
            port: "587",
            from: "a@example.com",
            password: "restart-secret",
          },
        }),
      });
      assert.equal(created.status, 201, await created.text());
    } finally {
      assert.equal((await stopServer(first)).code, 0);
    }
    const keyFile = path.join(dataDir, "secret.key");
    assert.equal(fs.statSync(keyFile).mode & 0o777, 0o600);
    const key = fs.readFileSync(keyFile, "utf8");

    const second = await startServer(env);
    try {
      assert.doesNotMatch(second.stdout(), /generated the key/);
      const listed = await fetch(`${second.url}/v1/integrations`, {
        headers: { authorization: `ApiKey ${apiKey}` },
      });
      const [integration] = ((await listed.json()) as { data: { credentials: Record<string, unknown> }[] })
        .data;
      assert.deepEqual(integration?.credentials, {
        host: "smtp.example.com",
        port: "587",
        from: "a@example.com",
        password: "********",
      });
    } finally {
      assert.equal((await stopServer(second)).code, 0);
    }
    assert.equal(fs.readFileSync(keyFile, "utf8"), key, "the same key");
    const database = fs.readFileSync(path.join(dataDir, "tidings.db"));
    assert.equal(database.indexOf("restart-secret"), -1);
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});
