import type { BackendName } from "./seed.ts";
import type { Measurement } from "./stats.ts";

export interface Row {
  scenario: string;
  label: string;
  backend: BackendName;
  /** cpuUsPerRequest: the server process's CPU time (user + system) per request, measured window only. */
  service?: Measurement & { peakRssMb: number; cpuUsPerRequest: number; statusCodes: Record<string, number> };
  /** The same load at half the measured maximum rate. */
  halfRate?: Measurement & { rate: number; autocannonP99: number };
  httpCeiling?: Measurement & { peakRssMb: number; cpuUsPerRequest: number };
  dbCeiling?: Measurement;
  note?: string;
}

export interface Target {
  name: string;
  measured: string;
  pass: boolean;
}

export interface Report {
  machine: Record<string, unknown>;
  settings: Record<string, unknown>;
  seedingSeconds: Record<string, number>;
  rows: Row[];
  totalSeconds: number;
  targets?: Target[];
}

const pct = (ratio: number) => `${Math.round(ratio * 1000) / 10}%`;
const num = (value: number | undefined) => (value === undefined ? "" : value.toLocaleString("en"));
const ms = (value: number | undefined) => (value === undefined ? "" : value.toFixed(2));

/** p99 at half rate, the worse of ours (exact) and autocannon's (corrected for coordinated omission). */
export const halfRateP99 = (row: Row) =>
  row.halfRate ? Math.max(row.halfRate.p99, row.halfRate.autocannonP99) : undefined;

export function targets(rows: Row[]): Target[] {
  const find = (scenario: string, backend: BackendName) =>
    rows.find((r) => r.scenario === scenario && r.backend === backend);
  const out: Target[] = [];
  const sqlitePut = find("put-status", "sqlite");
  if (sqlitePut?.service && sqlitePut.httpCeiling) {
    const ratio = sqlitePut.service.rps / sqlitePut.httpCeiling.rps;
    out.push({
      name: "SQLite PUT status ≥ 40% of the HTTP ceiling (synchronous=FULL)",
      measured: pct(ratio),
      pass: ratio >= 0.4,
    });
  }
  const pgPut = find("put-status", "postgres");
  if (pgPut?.service && pgPut.dbCeiling) {
    const ratio = pgPut.service.rps / pgPut.dbCeiling.rps;
    out.push({
      name: "PostgreSQL PUT status ≥ 70% of the database ceiling",
      measured: pct(ratio),
      pass: ratio >= 0.7,
    });
  }
  for (const backend of ["sqlite", "postgres"] as const) {
    const put = find("put-status", backend);
    const p99 = put ? halfRateP99(put) : undefined;
    if (put?.halfRate && p99 !== undefined) {
      out.push({
        name: `${backend}: PUT status p99 ≤ 10 ms at half the maximum rate`,
        measured: `${ms(p99)} ms at ${num(put.halfRate.rate)} req/s`,
        pass: p99 <= 10,
      });
    }
  }
  for (const backend of ["sqlite", "postgres"] as const) {
    const small = find("put-status", backend);
    const big = rows.find((r) => r.scenario === "put-status-1m" && r.backend === backend);
    if (small?.service && big?.service) {
      const ratio = big.service.rps / small.service.rps;
      out.push({
        name: `${backend}: ${big.label} within 10% of the 1,000-workflow figure`,
        measured: pct(ratio),
        pass: ratio >= 0.9,
      });
    }
  }
  for (const backend of ["sqlite", "postgres"] as const) {
    const small = find("get-subscriber", backend);
    const big = rows.find((r) => r.scenario === "get-subscriber-1m" && r.backend === backend);
    if (small?.service && big?.service) {
      const ratio = big.service.rps / small.service.rps;
      out.push({
        name: `${backend}: ${big.label} within 10% of ${small.label.replace(/^.*, /, "")}`,
        measured: `${pct(ratio)} (p99 ${ms(big.service.p99)} vs ${ms(small.service.p99)} ms)`,
        pass: ratio >= 0.9,
      });
    }
  }
  const services = rows.filter((r) => r.service);
  if (services.length > 0) {
    const worst = services.reduce((a, b) =>
      (a.service?.peakRssMb ?? 0) >= (b.service?.peakRssMb ?? 0) ? a : b,
    );
    const peak = worst.service?.peakRssMb ?? 0;
    out.push({
      name: "Peak RSS of the service under load ≤ 150 MB",
      measured: `${peak} MB (${worst.scenario}, ${worst.backend})`,
      pass: peak <= 150,
    });
  }
  return out;
}

function table(header: string[], lines: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] ?? "").length)));
  const fmt = (cells: string[]) =>
    `| ${cells.map((c, i) => (i < 2 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join(" | ")} |`;
  return [
    fmt(header),
    `|${widths.map((w, i) => (i < 2 ? `-${"-".repeat(w)}-` : `-${"-".repeat(w)}:`)).join("|")}|`,
    ...lines.map(fmt),
  ].join("\n");
}

export function printReport(report: Report, json: boolean): void {
  const withTargets = { ...report, targets: targets(report.rows) };
  if (json) {
    process.stdout.write(`${JSON.stringify(withTargets, null, 2)}\n`);
    return;
  }
  const lines = report.rows.map((r) => {
    const failed = r.service && r.service.failed > 0 ? ` (${num(r.service.failed)} failed)` : "";
    return [
      r.label,
      r.backend,
      r.service ? `${num(r.service.rps)}${failed}` : "",
      ms(r.service?.p50),
      ms(r.service?.p99),
      ms(halfRateP99(r)),
      r.service ? String(r.service.peakRssMb) : "",
      num(r.httpCeiling?.rps),
      r.service && r.httpCeiling ? pct(r.service.rps / r.httpCeiling.rps) : "",
      num(r.dbCeiling?.rps),
      r.service && r.dbCeiling ? pct(r.service.rps / r.dbCeiling.rps) : "",
      r.service ? String(r.service.cpuUsPerRequest) : "",
      r.service && r.httpCeiling ? pct(r.httpCeiling.cpuUsPerRequest / r.service.cpuUsPerRequest) : "",
    ];
  });
  const out: string[] = [];
  out.push(
    table(
      [
        "scenario",
        "backend",
        "req/s",
        "p50 ms",
        "p99 ms",
        "p99 @½ rate",
        "peak RSS MB",
        "HTTP ceiling",
        "÷ HTTP",
        "DB ceiling",
        "÷ DB",
        "CPU µs/req",
        "CPU ÷ HTTP",
      ],
      lines,
    ),
  );
  out.push("");
  const ceilingLines = report.rows.flatMap((r) => [
    ...(r.httpCeiling && !["put-status-1m", "put-status-nocache", "get-subscriber-1m"].includes(r.scenario)
      ? [
          [
            `HTTP: ${r.label.trim()}`,
            r.backend,
            num(r.httpCeiling.rps),
            ms(r.httpCeiling.p50),
            ms(r.httpCeiling.p99),
            String(r.httpCeiling.peakRssMb),
            String(r.httpCeiling.cpuUsPerRequest),
          ],
        ]
      : []),
    ...(r.dbCeiling && r.scenario !== "put-status-nocache"
      ? [
          [
            `DB: ${r.scenario === "db-batched" ? r.label.trim() : `UPDATE ... RETURNING (${r.label.trim()})`}`,
            r.backend,
            num(r.dbCeiling.rps),
            ms(r.dbCeiling.p50),
            ms(r.dbCeiling.p99),
            "",
            "",
          ],
        ]
      : []),
  ]);
  out.push(
    table(["ceiling", "backend", "ops/s", "p50 ms", "p99 ms", "peak RSS MB", "CPU µs/req"], ceilingLines),
  );
  out.push("");
  for (const target of withTargets.targets)
    out.push(`${target.pass ? "PASS" : "FAIL"}  ${target.name}: ${target.measured}`);
  for (const r of report.rows)
    if (r.note && r.scenario !== "db-batched") out.push(`note (${r.backend}, ${r.scenario}): ${r.note}`);
  const s = report.settings;
  out.push(
    "",
    `${s.connections} connections, ${s.warmupSeconds} s warm-up, ${s.seconds} s measured (${s.halfRateSeconds} s at half rate); ` +
      `PG pool ${s.pgPoolSize}; LOG_LEVEL=${s.logLevel}; RATE_LIMIT_RPS=0.`,
    `machine: ${report.machine.nproc} cores (${report.machine.cpu}), ${report.machine.memory}; node ${report.machine.node}; ` +
      `load average before ${JSON.stringify(report.machine.loadAverage)}, after ${JSON.stringify(report.machine.loadAverageAfter)}.`,
    `seeding (s): ${JSON.stringify(report.seedingSeconds)}; total ${report.totalSeconds} s.`,
  );
  process.stdout.write(`${out.join("\n")}\n`);
}
