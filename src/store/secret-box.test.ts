import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, test } from "node:test";
import { ConfigError, decodeSecretKey, loadConfig } from "../config.ts";
import { MissingSecretKeyError, resolveSecretKey, SECRET_KEY_FILE, SecretBox } from "./secret-box.ts";

describe("SecretBox: AES-256-GCM for credentials at rest", () => {
  const box = new SecretBox(randomBytes(32));

  test("opens what it sealed, for the same row; each seal differs", () => {
    const plaintext = JSON.stringify({ password: "hunter2", host: "smtp.example.com" });
    const a = box.seal(plaintext, "row-1");
    const b = box.seal(plaintext, "row-1");
    assert.notEqual(a, b, "a fresh nonce per seal");
    assert.match(a, /^v1\.[\w-]+\.[\w-]+\.[\w-]+$/);
    assert.ok(!a.includes("hunter2"));
    assert.equal(box.open(a, "row-1"), plaintext);
  });

  test("refuses another row's value, an altered value, and another key", () => {
    const sealed = box.seal("secret", "row-1");
    assert.throws(() => box.open(sealed, "row-2"));
    const parts = sealed.split(".");
    const data = Buffer.from(parts[3] ?? "", "base64url");
    data[0] = (data[0] ?? 0) ^ 1;
    assert.throws(() =>
      box.open([parts[0], parts[1], parts[2], data.toString("base64url")].join("."), "row-1"),
    );
    assert.throws(() => new SecretBox(randomBytes(32)).open(sealed, "row-1"));
    assert.throws(() => box.open("plaintext", "row-1"), /not a value sealed/);
  });

  test("never shows its key", () => {
    assert.equal(JSON.stringify({ box }), '{"box":"[SecretBox]"}');
  });
});

describe("the secret key", () => {
  const hex = "ab".repeat(32);

  test("TIDINGS_SECRET_KEY: 64 hex digits or base64 of 32 bytes; anything else is refused", () => {
    assert.deepEqual(decodeSecretKey(hex), Buffer.alloc(32, 0xab));
    const key = randomBytes(32);
    assert.deepEqual(decodeSecretKey(key.toString("base64")), key);
    assert.deepEqual(decodeSecretKey(key.toString("base64url")), key);
    for (const bad of ["", "short", "ab".repeat(31), randomBytes(16).toString("base64"), `${hex}00`]) {
      assert.throws(() => decodeSecretKey(bad), ConfigError, bad);
    }
    assert.deepEqual(loadConfig({ TIDINGS_SECRET_KEY: hex }).secretKey, Buffer.alloc(32, 0xab));
    assert.throws(() => loadConfig({ TIDINGS_SECRET_KEY: "password123" }), /TIDINGS_SECRET_KEY must be 32/);
    assert.equal(loadConfig({}).secretKey, undefined);
  });

  test("the configured key wins", () => {
    const configured = randomBytes(32);
    const resolved = resolveSecretKey({ configured, databaseUrl: "postgres://x/y", dataDir: "/nonexistent" });
    assert.deepEqual(resolved, { key: configured, source: "environment" });
  });

  test("with DATABASE_URL and no key: refused, saying what to do", () => {
    assert.throws(
      () =>
        resolveSecretKey({ configured: undefined, databaseUrl: "postgres://x/y", dataDir: "/nonexistent" }),
      (error: unknown) =>
        error instanceof MissingSecretKeyError &&
        /TIDINGS_SECRET_KEY must be set when DATABASE_URL is/.test(error.message) &&
        /openssl rand -base64 32/.test(error.message),
    );
  });

  test("embedded: generated once into the data directory (owner-only), then read back", () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "tidings-key-"));
    try {
      const first = resolveSecretKey({ configured: undefined, databaseUrl: undefined, dataDir });
      assert.equal(first.source, "generated");
      assert.equal(first.key.length, 32);
      const file = path.join(dataDir, SECRET_KEY_FILE);
      assert.equal(fs.statSync(file).mode & 0o777, 0o600);
      const second = resolveSecretKey({ configured: undefined, databaseUrl: undefined, dataDir });
      assert.equal(second.source, "file");
      assert.deepEqual(second.key, first.key);
      fs.writeFileSync(file, "not a key");
      assert.throws(
        () => resolveSecretKey({ configured: undefined, databaseUrl: undefined, dataDir }),
        ConfigError,
      );
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
