// The load generator, in a process of its own: autocannon with a fixed connection count, a warm-up
// window, then the measured window. Reads its spec from the JSON file named by argv[2] and prints
// one JSON line: the measurement and where its request counter stopped.
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import autocannon from "autocannon";
import { BULK_SIZE } from "./bulk.ts";
import { Latencies, type Measurement, round } from "./stats.ts";

export type LoadKind =
  | "put-status"
  | "post-group"
  | "get"
  | "post-subscriber"
  | "post-subscriber-bulk"
  | "trigger";

export interface LoadSpec {
  url: string;
  connections: number;
  warmupSeconds: number;
  seconds: number;
  /** Requests per second across all connections; unset: as fast as the server answers. */
  overallRate?: number;
  apiKey: string;
  /** The Authorization header instead of the API key's (an inbox session's `Bearer <token>`). */
  authorization?: string;
  kind: LoadKind;
  /**
   * put-status: the workflows to switch, in turn; get: paths to read, in turn; trigger: the
   * subscriberIds to notify, one per trigger, in turn.
   */
  targets: string[];
  /** trigger: the workflow's trigger identifier. */
  name?: string;
  /** Where the request counter starts, so a later run keeps alternating where the last one stopped. */
  start: number;
}

export interface LoadResult {
  measurement: Measurement;
  /** autocannon's own p99 (whole milliseconds; corrected for coordinated omission under a rate). */
  autocannonP99: number;
  statusCodes: Record<string, number>;
  next: number;
}

const BODY_TRUE = '{"active":true}';
const BODY_FALSE = '{"active":false}';

function requestMaker(spec: LoadSpec) {
  let n = spec.start;
  const tag = randomBytes(4).toString("hex");
  const targets = spec.targets;
  const count = Math.max(1, targets.length);
  return {
    next: () => n,
    setup(req: { method?: string; path?: string; body?: string | Buffer }) {
      const i = n++;
      if (spec.kind === "put-status") {
        // Each workflow is switched on, then off on its next turn: every request really changes a row.
        req.method = "PUT";
        req.path = `/v1/workflows/${targets[i % count]}/status`;
        req.body = Math.floor(i / count) % 2 === 0 ? BODY_TRUE : BODY_FALSE;
      } else if (spec.kind === "post-subscriber") {
        // A new subscriberId each time: every request creates a row and grows the unique index.
        req.method = "POST";
        req.path = "/v1/subscribers";
        req.body = `{"subscriberId":"bench-${tag}-${i}","firstName":"Bench","lastName":"User","email":"u${i}@example.com","data":{"plan":"pro"}}`;
      } else if (spec.kind === "post-subscriber-bulk") {
        req.method = "POST";
        req.path = "/v1/subscribers/bulk";
        const entries: string[] = [];
        for (let j = 0; j < BULK_SIZE; j++) {
          entries.push(
            `{"subscriberId":"bulk-${tag}-${i}-${j}","firstName":"Bench","email":"b${i}x${j}@example.com"}`,
          );
        }
        req.body = `{"subscribers":[${entries.join(",")}]}`;
      } else if (spec.kind === "trigger") {
        // One subscriber per trigger, each trigger a transactionId of its own.
        req.method = "POST";
        req.path = "/v1/events/trigger";
        req.body = `{"name":${JSON.stringify(spec.name ?? "")},"to":${JSON.stringify(targets[i % count])},"transactionId":"load-${tag}-${i}","payload":{"n":${i}}}`;
      } else if (spec.kind === "post-group") {
        req.method = "POST";
        req.path = "/v1/notification-groups";
        req.body = `{"name":"Bench ${tag} ${i}"}`;
      } else {
        req.method = "GET";
        req.path = targets[i % count];
      }
      return req;
    },
  };
}

function run(
  spec: LoadSpec,
  maker: ReturnType<typeof requestMaker>,
  seconds: number,
  overallRate: number | undefined,
  latencies: Latencies | undefined,
): Promise<{
  result: autocannon.Result;
  statusCodes: Record<string, number>;
  ok: number;
  failed: number;
  elapsed: number;
}> {
  return new Promise((resolve, reject) => {
    const statusCodes: Record<string, number> = {};
    let ok = 0;
    let failed = 0;
    const started = performance.now();
    const instance = autocannon(
      {
        url: spec.url,
        connections: spec.connections,
        duration: seconds,
        ...(overallRate ? { overallRate } : {}),
        headers: {
          authorization: spec.authorization ?? `ApiKey ${spec.apiKey}`,
          "content-type": "application/json",
        },
        requests: [{ setupRequest: maker.setup as never }],
      },
      (error, result) => {
        if (error) reject(error);
        else resolve({ result, statusCodes, ok, failed, elapsed: (performance.now() - started) / 1000 });
      },
    );
    instance.on("response", (_client, statusCode: number, _bytes: number, responseTime: number) => {
      statusCodes[statusCode] = (statusCodes[statusCode] ?? 0) + 1;
      if (statusCode >= 200 && statusCode < 300) {
        ok++;
        latencies?.record(responseTime);
      } else failed++;
    });
    instance.on("reqError", () => {
      failed++;
    });
  });
}

async function main() {
  const file = process.argv[2];
  if (!file) throw new Error("usage: load.ts <spec.json>");
  const spec = JSON.parse(fs.readFileSync(file, "utf8")) as LoadSpec;
  const maker = requestMaker(spec);
  if (spec.warmupSeconds > 0) await run(spec, maker, spec.warmupSeconds, spec.overallRate, undefined);
  const latencies = new Latencies();
  const measured = await run(spec, maker, spec.seconds, spec.overallRate, latencies);
  const stats = latencies.summary();
  const out: LoadResult = {
    measurement: {
      rps: round(measured.ok / measured.elapsed, 0),
      ...stats,
      ok: measured.ok,
      failed: measured.failed + measured.result.errors + measured.result.timeouts,
      seconds: round(measured.elapsed),
    },
    autocannonP99: measured.result.latency.p99,
    statusCodes: measured.statusCodes,
    next: maker.next(),
  };
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

await main();
