// The code-first app the bridge benchmark (bench/bridge.ts) runs in a process of its own: one
// workflow with one in-app step, served by @novu/framework's express adapter with strict
// authentication. Reads BRIDGE_SECRET_KEY and PORT; prints "ready" once listening.
import { Client, workflow } from "@novu/framework";
import { serve } from "@novu/framework/express";
import express from "express";

const benchCode = workflow(
  "bench-code",
  async ({ step, payload, subscriber }) => {
    await step.inApp("hello", async () => ({
      body: `Hello ${subscriber.firstName ?? subscriber.subscriberId}, event ${payload.n}`,
    }));
  },
  { payloadSchema: { type: "object", properties: { n: { type: "number" } } } as const },
);

const app = express();
app.use(express.json());
app.use(
  "/api/novu",
  serve({
    client: new Client({
      secretKey: process.env.BRIDGE_SECRET_KEY,
      strictAuthentication: true,
      verbose: false,
    }),
    workflows: [benchCode],
  }),
);
app.listen(Number(process.env.PORT), "127.0.0.1", () => process.stdout.write("ready\n"));
