// Loaded into the service by `BENCH_PROFILE_ALLOC=1 npm run bench:profile` (node --import): V8's
// sampling heap profiler, keeping the samples of objects the garbage collector has since freed, so
// the profile is what the service allocated, not what it still holds. SIGWINCH starts it afresh (the
// bench sends it when its measured window opens); at exit the profile and the HTTP requests counted
// since then are written to BENCH_ALLOC_FILE, as JSON: { requests, profile }.
// Plain JavaScript: node loads it before the service, without tsx.
import dc from "node:diagnostics_channel";
import fs from "node:fs";
import inspector from "node:inspector";

const file = process.env.BENCH_ALLOC_FILE;
if (file) {
  const session = new inspector.Session();
  session.connect();
  let requests = 0;
  dc.subscribe("http.server.request.start", () => {
    requests++;
  });
  // One sample about every 8 KB allocated (V8's default is 32 KB): enough for a profile of
  // kilobytes per request over some thousands of requests.
  const start = () =>
    session.post("HeapProfiler.startSampling", {
      samplingInterval: 8192,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
  start();
  // Not SIGUSR2: the service shuts down on it (close-with-grace); SIGWINCH is ignored where this is not loaded.
  process.on("SIGWINCH", () => {
    session.post("HeapProfiler.stopSampling", () => {
      requests = 0;
      start();
    });
  });
  process.on("exit", () => {
    // A session on the process's own thread answers synchronously: the file is written before exit.
    session.post("HeapProfiler.stopSampling", (error, result) => {
      if (!error) fs.writeFileSync(file, JSON.stringify({ requests, profile: result.profile }));
    });
  });
}
