// Emails per second, end to end: triggers (bulk, 100 events a request) to a workflow with one email
// step, through the service's worker and its pooled SMTP transport, into a local SMTP sink
// (smtp-server, in this process). Measured from the first trigger to the last message received.
import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";
import { cpuMs } from "./proc.ts";
import { type Measurement, round } from "./stats.ts";

export interface EmailRun extends Measurement {
  /** SMTP connections the service opened for all of them (its pool). */
  connections: number;
  cpuUsPerEmail: number;
}

const BATCH = 100;
const IN_FLIGHT = 4;
const RECIPIENTS = 500;

async function call(url: string, apiKey: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(url, {
    method: "POST",
    headers: { authorization: `ApiKey ${apiKey}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`POST ${url}: ${res.status} ${text}`);
  return JSON.parse(text) as Record<string, unknown>;
}

/** Sends `count` emails through the service at `url` (whose process is `pid`) and times them. */
export async function emailThroughput(
  url: string,
  pid: number,
  apiKey: string,
  count: number,
): Promise<EmailRun> {
  const arrived = new Map<number, number>();
  let connections = 0;
  const sink = new SMTPServer({
    disabledCommands: ["STARTTLS", "AUTH"],
    authOptional: true,
    logger: false,
    closeTimeout: 100,
    onConnect(_session, callback) {
      connections++;
      callback();
    },
    onData(stream, _session, callback) {
      let head = "";
      stream.on("data", (chunk: Buffer) => {
        if (head.length < 4096) head += chunk.toString("latin1");
      });
      stream.on("end", () => {
        const n = Number(/^Subject: Bench (\d+)/m.exec(head)?.[1] ?? -1);
        if (n >= 0) arrived.set(n, performance.now());
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => sink.listen(0, "127.0.0.1", () => resolve()));
  const port = (sink.server.address() as AddressInfo).port;
  try {
    await call(`${url}/v1/integrations`, apiKey, {
      providerId: "nodemailer",
      channel: "email",
      active: true,
      credentials: { host: "127.0.0.1", port: String(port), ignoreTls: true, from: "bench@example.com" },
    });
    const groups = (await (
      await fetch(`${url}/v1/notification-groups`, { headers: { authorization: `ApiKey ${apiKey}` } })
    ).json()) as { data: { _id: string }[] };
    const workflow = (await call(`${url}/v1/workflows`, apiKey, {
      name: `Bench email ${Date.now()}`,
      notificationGroupId: groups.data[0]?._id,
      active: true,
      steps: [
        {
          template: {
            type: "email",
            subject: "Bench {{n}}",
            content: "<p>Hello {{subscriber.firstName}}</p>",
          },
        },
      ],
    })) as { data: { triggers: { identifier: string }[] } };
    const name = workflow.data.triggers[0]?.identifier;

    // The recipients exist before the clock starts: the triggers name them by subscriberId.
    await call(`${url}/v1/subscribers/bulk`, apiKey, {
      subscribers: Array.from({ length: RECIPIENTS }, (_, i) => ({
        subscriberId: `mail-${i}`,
        firstName: `Reader ${i}`,
        email: `r${i}@example.com`,
      })),
    });
    const sent = new Map<number, number>();
    const cpuBefore = cpuMs(pid);
    const started = performance.now();
    let next = 0;
    const sender = async () => {
      while (next < count) {
        const first = next;
        next = Math.min(count, next + BATCH);
        const events = [];
        for (let n = first; n < next; n++) {
          sent.set(n, performance.now());
          events.push({
            name,
            to: { subscriberId: `mail-${n % 500}`, email: `r${n % 500}@example.com` },
            payload: { n },
          });
        }
        await call(`${url}/v1/events/trigger/bulk`, apiKey, { events });
      }
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, sender));
    const deadline = performance.now() + 120_000;
    while (arrived.size < count && performance.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const last = Math.max(...arrived.values());
    const seconds = (last - started) / 1000;
    const latencies = [...arrived].map(([n, at]) => at - (sent.get(n) ?? started)).sort((a, b) => a - b);
    const at = (q: number) =>
      round(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0);
    const cpu = cpuMs(pid) - cpuBefore;
    return {
      rps: Math.round(arrived.size / seconds),
      p50: at(0.5),
      p99: at(0.99),
      max: round(latencies.at(-1) ?? 0),
      ok: arrived.size,
      failed: count - arrived.size,
      seconds: round(seconds),
      connections,
      cpuUsPerEmail: arrived.size > 0 ? Math.round((cpu * 1000) / arrived.size) : 0,
    };
  } finally {
    await new Promise<void>((resolve) => sink.close(() => resolve()));
  }
}
