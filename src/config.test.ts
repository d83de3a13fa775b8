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
  test("32 on both backends, or what is set", () => {
    assert.equal(loadConfig({}).workerConcurrency, 32);
    assert.equal(loadConfig({ DATABASE_URL: "postgres://127.0.0.1/x" }).workerConcurrency, 32);
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

describe("configuration: the render budget and the outbound allow-list", () => {
  test("RENDER_TIMEOUT_MS and RENDER_MAX_BYTES: 50 ms and 256 KiB by default, or what is set within bounds", () => {
    assert.deepEqual(loadConfig({}).render, { timeoutMs: 50, maxBytes: 262_144 });
    assert.deepEqual(loadConfig({ RENDER_TIMEOUT_MS: "200", RENDER_MAX_BYTES: "1048576" }).render, {
      timeoutMs: 200,
      maxBytes: 1_048_576,
    });
    for (const [name, value] of [
      ["RENDER_TIMEOUT_MS", "0"],
      ["RENDER_TIMEOUT_MS", "fast"],
      ["RENDER_MAX_BYTES", "100"],
    ] as const) {
      assert.throws(() => loadConfig({ [name]: value }), new RegExp(`^ConfigError: ${name} must be`));
    }
  });

  test("TIDINGS_OUTBOUND_ALLOW: none by default; hosts, addresses and CIDR ranges; anything else refuses to start", () => {
    assert.deepEqual(loadConfig({}).outboundAllow, []);
    assert.deepEqual(
      loadConfig({ TIDINGS_OUTBOUND_ALLOW: "127.0.0.1/32, mail.internal,10.0.0.0/8" }).outboundAllow,
      ["127.0.0.1/32", "mail.internal", "10.0.0.0/8"],
    );
    assert.throws(
      () => loadConfig({ TIDINGS_OUTBOUND_ALLOW: "10.0.0.0/40" }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.match(error.message, /^TIDINGS_OUTBOUND_ALLOW: "10\.0\.0\.0\/40" is neither a host name/);
        return true;
      },
    );
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
      recipientsPerTrigger: 10_000,
      recipientsPerMinute: 20_000,
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
