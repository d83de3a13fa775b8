// A workflow defined in code survives a SIGKILL between its steps (docs/bridge.md, "Running a step"):
// a real server runs a two-step code workflow (a custom step, then an in-app step) of a real
// @novu/framework app; the app holds the in-app step's execute calls, so the server is killed with
// every run's first step recorded and its second in flight. After a restart, each run's custom step
// has run in the app once (its outputs were kept, not asked again), and each run has exactly one
// in-app message, carrying the custom step's outputs.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";
import { Client as NovuClient, workflow } from "@novu/framework";
import { serve } from "@novu/framework/express";
import express from "express";
import { poll } from "./poll.ts";
import { call, forEachProcessBackend, seedOrganization, stopServer } from "./processes.ts";

const RUNS = 3;

forEachProcessBackend("workflows in code: SIGKILL between steps", (suite) => {
  test("each step runs once: the custom step's outputs are kept, the in-app message written once", async (t) => {
    const db = await suite.database({ migrated: true });
    const seed = await seedOrganization(db);
    const computed = new Map<number, number>();
    const held = new Map<number, number>();
    let release: () => void = () => {};
    let holding: Promise<void> | undefined = new Promise((resolve) => {
      release = resolve;
    });
    const crash = workflow(
      "crash-code",
      async ({ step, payload }) => {
        const first = await step.custom(
          "compute",
          async () => {
            computed.set(payload.n, (computed.get(payload.n) ?? 0) + 1);
            return { value: payload.n * 10 };
          },
          {
            outputSchema: {
              type: "object",
              properties: { value: { type: "number" } },
              required: ["value"],
            } as const,
          },
        );
        await step.inApp("notify", async () => {
          held.set(payload.n, (held.get(payload.n) ?? 0) + 1);
          if (holding) await holding;
          return { body: `Value ${first.value}` };
        });
      },
      { payloadSchema: { type: "object", properties: { n: { type: "number" } }, required: ["n"] } as const },
    );
    const app = express();
    app.use(express.json());
    app.use(
      "/api/novu",
      serve({
        client: new NovuClient({ secretKey: seed.apiKey, strictAuthentication: true, verbose: false }),
        workflows: [crash],
      }),
    );
    const bridge: Server = await new Promise((resolve) => {
      const s = app.listen(0, "127.0.0.1", () => resolve(s));
    });
    t.after(
      () =>
        new Promise<void>((resolve) => {
          release();
          bridge.closeAllConnections();
          bridge.close(() => resolve());
        }),
    );
    const bridgeUrl = `http://127.0.0.1:${(bridge.address() as AddressInfo).port}/api/novu`;
    const env = {
      ...db.env,
      RATE_LIMIT_RPS: "0",
      TIDINGS_OUTBOUND_ALLOW: "127.0.0.1",
      WORKER_HEARTBEAT_MS: "250",
      WORKER_DEAD_AFTER_MS: "2000",
    };
    let server = await suite.start(env);
    const synced = await call(server, "POST", "/v1/bridge/sync?source=cli", seed.apiKey, { bridgeUrl });
    assert.equal(synced.status, 201, synced.text);
    const transactions: string[] = [];
    for (let n = 0; n < RUNS; n++) {
      const transactionId = randomBytes(12).toString("hex");
      const res = await call(server, "POST", "/v1/events/trigger", seed.apiKey, {
        name: "crash-code",
        to: `crash-${n}`,
        payload: { n },
        transactionId,
      });
      assert.equal(res.status, 201, res.text);
      transactions.push(transactionId);
    }
    // Every run's custom step is recorded, and its in-app step is waiting on the app.
    await poll(
      () => held.size,
      (size) => size === RUNS,
      { what: "every run's in-app step to be in flight" },
    );
    await stopServer(server, "SIGKILL");
    holding = undefined;
    release();

    server = await suite.start(env);
    const messages = await poll(
      async () => {
        const res = await call(server, "GET", "/v1/messages?channel=in_app&limit=100", seed.apiKey);
        assert.equal(res.status, 200, res.text);
        return res.json().data as { transactionId: string; content: string }[];
      },
      (list) => list.length >= RUNS,
      { what: "every run's in-app message after the restart" },
    );
    for (const [n, transactionId] of transactions.entries()) {
      const mine = messages.filter((m) => m.transactionId === transactionId);
      assert.deepEqual(
        mine.map((m) => m.content),
        [`Value ${n * 10}`],
        `run ${n}: one message`,
      );
      assert.equal(computed.get(n), 1, `run ${n}: the custom step ran in the app once`);
      assert.ok((held.get(n) ?? 0) >= 2, `run ${n}: the in-app step was asked again after the restart`);
    }
    await stopServer(server);
  });
});
