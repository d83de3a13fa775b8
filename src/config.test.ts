import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ConfigError, loadConfig } from "./config.ts";

describe("configuration: SQLITE_SYNC", () => {
  test("fdatasync by default; full when asked", () => {
    assert.equal(loadConfig({}).sqliteSync, "fdatasync");
    assert.equal(loadConfig({ SQLITE_SYNC: "full" }).sqliteSync, "full");
    assert.equal(loadConfig({ SQLITE_SYNC: "fdatasync" }).sqliteSync, "fdatasync");
  });

  test("anything else refuses to start, naming the setting", () => {
    for (const value of ["FULL", "normal", "off", "1"])
      assert.throws(
        () => loadConfig({ SQLITE_SYNC: value }),
        (error: unknown) => {
          assert.ok(error instanceof ConfigError);
          assert.match(error.message, /^SQLITE_SYNC must be fdatasync or full/);
          return true;
        },
      );
  });
});

describe("configuration: WORKER_CONCURRENCY", () => {
  test("32 on SQLite, 10 on PostgreSQL (a connection each), or what is set", () => {
    assert.equal(loadConfig({}).workerConcurrency, 32);
    assert.equal(loadConfig({ DATABASE_URL: "postgres://127.0.0.1/x" }).workerConcurrency, 10);
    assert.equal(loadConfig({ WORKER_CONCURRENCY: "4" }).workerConcurrency, 4);
  });
});

describe("configuration: INBOX_MAX_SNOOZE_DURATION_HOURS", () => {
  test("90 days (2160 hours) by default, 0 to turn snoozing off, at most ten years", () => {
    assert.equal(loadConfig({}).inboxMaxSnoozeDurationHours, 2160);
    assert.equal(loadConfig({ INBOX_MAX_SNOOZE_DURATION_HOURS: "0" }).inboxMaxSnoozeDurationHours, 0);
    assert.equal(loadConfig({ INBOX_MAX_SNOOZE_DURATION_HOURS: "24" }).inboxMaxSnoozeDurationHours, 24);
    for (const value of ["-1", "1.5", "x", "87601"])
      assert.throws(
        () => loadConfig({ INBOX_MAX_SNOOZE_DURATION_HOURS: value }),
        /^ConfigError: INBOX_MAX_SNOOZE_DURATION_HOURS must be/,
      );
  });
});
