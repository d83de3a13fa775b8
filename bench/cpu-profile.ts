// Reads a V8 .cpuprofile (node --cpu-prof): self and inclusive time by function, self time by
// package (or dist/ file), and CPU per request. \`node --import tsx bench/cpu-profile.ts <file> [requests]\`.
import fs from "node:fs";

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

/** A stretch of the profiled process's life, in µs of the monotonic clock (process.hrtime's). */
export interface Window {
  startUs: number;
  endUs: number;
}

/** Now on the clock a .cpuprofile's timestamps use (CLOCK_MONOTONIC, in µs), in any process. */
export const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);

/**
 * Self time per function and per package (or src/ file), as shares of all samples; within `window`
 * only, when given (the measured load, without start-up and warm-up).
 */
export function summarize(file: string, requests?: number, top = 30, window?: Window): string {
  const profile = JSON.parse(fs.readFileSync(file, "utf8")) as {
    nodes: Node[];
    samples: number[];
    timeDeltas: number[];
    startTime: number;
  };
  const hits = new Map<number, number>();
  const idle = new Set(profile.nodes.filter((n) => n.callFrame.functionName === "(idle)").map((n) => n.id));
  let busyUs = 0;
  let totalUs = 0;
  let total = 0;
  let at = profile.startTime;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    at += delta;
    if (window && (at < window.startUs || at > window.endUs)) return;
    total++;
    totalUs += delta;
    hits.set(id, (hits.get(id) ?? 0) + 1);
    if (!idle.has(id)) busyUs += delta;
  });
  const perRequest = requests
    ? `, ${Math.round(busyUs / requests)} µs of CPU per request${window ? "" : " (start-up included)"}`
    : "";
  const byFunction = new Map<string, number>();
  const byPlace = new Map<string, number>();
  for (const node of profile.nodes) {
    const count = hits.get(node.id) ?? 0;
    if (count === 0) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    const place = placeOf(url, functionName);
    const name = `${functionName || "(anonymous)"} ${place}:${lineNumber + 1}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + count);
    byPlace.set(place, (byPlace.get(place) ?? 0) + count);
  }
  const list = (map: Map<string, number>) =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(
        ([name, count]) =>
          `  ${((100 * count) / total).toFixed(1).padStart(5)}%${
            // The same share of the window's time, per request.
            requests ? ` ${((count / total) * (totalUs / requests)).toFixed(1).padStart(6)} µs` : ""
          }  ${name}`,
      )
      .join("\n");
  // Inclusive: the time spent in a function and everything it called, each function counted once
  // per sample however deep the recursion.
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const inclusive = new Map<string, number>();
  for (const [id, count] of hits) {
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const node = nodes.get(at);
      if (!node) break;
      const { functionName, url, lineNumber } = node.callFrame;
      const name = `${functionName || "(anonymous)"} ${placeOf(url, functionName)}:${lineNumber + 1}`;
      if (seen.has(name) || name.startsWith("(root)")) continue;
      seen.add(name);
      inclusive.set(name, (inclusive.get(name) ?? 0) + count);
    }
  }
  return (
    `${total} samples, ${Math.round(busyUs / 1000)} ms busy${perRequest}\n` +
    `by package or file:\n${list(byPlace)}\nby function (self):\n${list(byFunction)}\n` +
    `by function (inclusive):\n${list(inclusive)}`
  );
}

function placeOf(url: string, functionName: string): string {
  if (!url) return functionName.startsWith("(") ? functionName : "(native)";
  const modules = url.lastIndexOf("node_modules/");
  if (modules !== -1) {
    const rest = url.slice(modules + "node_modules/".length).split("/");
    return rest[0]?.startsWith("@") ? `${rest[0]}/${rest[1]}` : (rest[0] ?? url);
  }
  if (url.startsWith("node:")) return url;
  const dist = url.indexOf("/dist/");
  return dist !== -1 ? url.slice(dist + 1) : url;
}

const [, script, file, requests] = process.argv;
if (script?.endsWith("cpu-profile.ts") && file) {
  process.stdout.write(`${summarize(file, requests ? Number(requests) : undefined, 60)}\n`);
}

interface AllocationNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: AllocationNode[];
}

/**
 * What a sampling heap profile (bench/alloc-sampler.mjs: every object allocated, freed or not) says
 * the service allocated per request: in all, by package (or dist/ file) and by function.
 */
export function summarizeAllocations(file: string, top = 30): string {
  const { requests, profile } = JSON.parse(fs.readFileSync(file, "utf8")) as {
    requests: number;
    profile: { head: AllocationNode };
  };
  const byFunction = new Map<string, number>();
  const byPlace = new Map<string, number>();
  let total = 0;
  const stack = [profile.head];
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    stack.push(...node.children);
    if (node.selfSize === 0) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    const place = placeOf(url, functionName);
    const name = `${functionName || "(anonymous)"} ${place}:${lineNumber + 1}`;
    total += node.selfSize;
    byFunction.set(name, (byFunction.get(name) ?? 0) + node.selfSize);
    byPlace.set(place, (byPlace.get(place) ?? 0) + node.selfSize);
  }
  const kb = (bytes: number) => (bytes / Math.max(requests, 1) / 1024).toFixed(2).padStart(7);
  const list = (map: Map<string, number>) =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, bytes]) => `  ${kb(bytes)} KB  ${name}`)
      .join("\n");
  return (
    `${requests} requests, ${kb(total).trim()} KB allocated per request\n` +
    `by package or file:\n${list(byPlace)}\nby function (self):\n${list(byFunction)}`
  );
}
