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

describe("configuration: METRICS_TOKEN and METRICS_PUBLIC", () => {
  test("closed by default; a token, or METRICS_PUBLIC, opens it", () => {
    assert.equal(loadConfig({}).metricsToken, undefined);
    assert.equal(loadConfig({}).metricsPublic, false);
    assert.equal(loadConfig({ METRICS_TOKEN: "t0ken" }).metricsToken, "t0ken");
    assert.equal(loadConfig({ METRICS_PUBLIC: "1" }).metricsPublic, true);
  });

  test("both at once refuses to start, naming them", () => {
    assert.throws(
      () => loadConfig({ METRICS_TOKEN: "t0ken", METRICS_PUBLIC: "1" }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.match(error.message, /^METRICS_TOKEN and METRICS_PUBLIC contradict each other/);
        return true;
      },
    );
  });
});

describe("configuration: quotas", () => {
  test("on by default; 0 turns one off; what is set otherwise", () => {
    assert.deepEqual(loadConfig({}).quotas, {
      recipientsPerTrigger: 100_000,
      recipientsPerMinute: 100_000,
      pendingJobs: 1_000_000,
    });
    assert.deepEqual(
      loadConfig({
        QUOTA_RECIPIENTS_PER_TRIGGER: "0",
        QUOTA_RECIPIENTS_PER_MINUTE: "0",
        QUOTA_PENDING_JOBS: "0",
      }).quotas,
      { recipientsPerTrigger: 0, recipientsPerMinute: 0, pendingJobs: 0 },
    );
    assert.equal(loadConfig({ QUOTA_RECIPIENTS_PER_TRIGGER: "50" }).quotas.recipientsPerTrigger, 50);
  });

  test("a trigger quota over the minute's (or none, with a minute's) refuses to start: no such trigger could pass", () => {
    for (const env of [
      { QUOTA_RECIPIENTS_PER_TRIGGER: "20", QUOTA_RECIPIENTS_PER_MINUTE: "10" },
      { QUOTA_RECIPIENTS_PER_TRIGGER: "0", QUOTA_RECIPIENTS_PER_MINUTE: "10" },
    ])
      assert.throws(
        () => loadConfig(env),
        (error: unknown) => {
          assert.ok(error instanceof ConfigError);
          assert.match(
            error.message,
            /^QUOTA_RECIPIENTS_PER_TRIGGER .* must be at most QUOTA_RECIPIENTS_PER_MINUTE/,
          );
          return true;
        },
      );
    for (const value of ["-1", "many"])
      assert.throws(
        () => loadConfig({ QUOTA_PENDING_JOBS: value }),
        /QUOTA_PENDING_JOBS must be a whole number/,
      );
  });
});
