import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { Worker } from "node:worker_threads";
import { renderTemplate, templateData } from "./render.ts";
import { WorkerRenderPool } from "./render-pool.ts";
import { Renderer } from "./renderer.ts";

const BOMB =
  "{{#each @root.a}}{{#each @root.a}}{{#each @root.a}}{{#each @root.a}}x{{/each}}{{/each}}{{/each}}{{/each}}";
const data = templateData({
  payload: { a: Array.from({ length: 100 }, (_, i) => i), items: [{ name: "<one>" }, { name: "two" }] },
  subscriber: { firstName: "Ada" },
});

/**
 * Runs `work` while a timer ticks every millisecond on this thread; answers the longest gap between
 * two ticks: about the length of the longest stretch the event loop was kept from running.
 */
async function longestStall<T>(work: () => Promise<T>): Promise<{ result: T; stall: number; took: number }> {
  let last = performance.now();
  let stall = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    stall = Math.max(stall, now - last);
    last = now;
  }, 1);
  const started = performance.now();
  try {
    const result = await work();
    return { result, stall: Math.max(stall, performance.now() - last), took: performance.now() - started };
  } finally {
    clearInterval(timer);
  }
}

describe("rendering on render threads", () => {
  const pool = new WorkerRenderPool({ threads: 1 });
  after(() => pool.close());
  const renderer = new Renderer(undefined, () => pool);

  test("a template that loops renders on a thread, as it renders in place", async () => {
    const fields = [
      {
        field: "content",
        source: "Hi {{subscriber.firstName}}: {{#each items}}<b>{{name}}</b>{{/each}}",
        escape: "html" as const,
      },
      {
        field: "subject",
        source: "{{#each items}}{{name}} {{/each}}for {{subscriber.firstName}}",
        escape: "text" as const,
      },
      { field: "senderName", source: "{{subscriber.firstName}}", escape: "text" as const },
    ];
    // What is compared is the output, not the time: a busy machine may take the thread past the
    // default 50 ms (the limits' own tests are below).
    const limits = { timeoutMs: 10_000, maxBytes: 256 * 1024 };
    const rendering = await new Renderer(limits, () => pool).render(fields, data);
    assert.ok(rendering.ok);
    for (const field of fields) {
      assert.deepEqual(
        rendering.fields.get(field.field),
        renderTemplate(field.source, data, { escape: field.escape, limits }),
      );
    }
    assert.equal(rendering.fields.get("content")?.text, "Hi Ada: <b>&lt;one&gt;</b><b>two</b>");
    assert.equal(pool.threads, 1);
  });

  test("the nested loops stop at a limit on the thread, while this thread's event loop runs on", async () => {
    const { result, stall } = await longestStall(() =>
      renderer.render([{ field: "content", source: BOMB, escape: "html" }], data),
    );
    assert.equal(result.ok, false);
    assert.ok(!result.ok);
    assert.match(result.exceeded.reason, /^(loops more than 100000 times|takes longer than 50 ms to render)/);
    // The same renders in place hold the event loop for as long as they run.
    const inPlace = await longestStall(async () =>
      Array.from({ length: 10 }, () =>
        renderTemplate(BOMB, data, { limits: { timeoutMs: 60_000, maxBytes: 1024 * 1024 } }),
      ),
    );
    assert.equal(inPlace.result[0]?.exceeded?.limit, "iterations");
    assert.ok(
      stall < inPlace.stall,
      `the event loop waited ${stall.toFixed(0)} ms at most, against ${inPlace.stall.toFixed(0)} ms in place`,
    );
  });
});

describe("a render that never ends", () => {
  // A stand-in for a render the budget cannot stop: a thread that says it is ready, then spins.
  const runaway = () =>
    new Worker(
      `const { parentPort } = require("node:worker_threads");
       parentPort.on("message", () => { for (;;) {} });
       parentPort.postMessage("ready");`,
      { eval: true },
    );
  let started = 0;
  const pool = new WorkerRenderPool({
    threads: 1,
    graceMs: () => 100,
    spawn: () => {
      started++;
      return runaway();
    },
  });
  after(() => pool.close());

  test("has its thread ended after its time and grace, answers as out of time, and a new thread takes the next", async () => {
    const limits = { timeoutMs: 50, maxBytes: 1024 };
    const fields = [{ field: "content", source: "{{#each a}}{{/each}}", escape: "html" as const }];
    const { result: first, took, stall } = await longestStall(() => pool.render(fields, data, limits));
    assert.deepEqual(first, {
      exceeded: { limit: "time", reason: "takes longer than 50 ms to render (RENDER_TIMEOUT_MS)" },
    });
    assert.ok(took >= 150, `answered after ${took.toFixed(0)} ms`);
    assert.ok(stall < took, "the event loop ran meanwhile");
    assert.equal(pool.threads, 0, "the runaway thread is gone");
    assert.deepEqual(await pool.render(fields, data, limits), first);
    assert.equal(started, 2, "a new thread took the next render");
  });

  test("a thread that cannot start fails the renders waiting for it", async () => {
    const broken = new WorkerRenderPool({
      spawn: () => new Worker(`throw new Error("cannot load the renderer")`, { eval: true }),
    });
    await assert.rejects(
      broken.render([{ field: "content", source: "{{#each a}}{{/each}}", escape: "html" }], data, {
        timeoutMs: 50,
        maxBytes: 1024,
      }),
      /cannot load the renderer/,
    );
    await broken.close();
  });

  test("a thread out of memory answers as over memory", async () => {
    const greedy = new WorkerRenderPool({
      maxHeapMb: 16,
      spawn: ({ maxHeapMb }) =>
        new Worker(
          `const { parentPort } = require("node:worker_threads");
           parentPort.on("message", () => { const hoard = []; for (;;) hoard.push(new Array(1e5).fill(hoard.length)); });
           parentPort.postMessage("ready");`,
          { eval: true, resourceLimits: { maxOldGenerationSizeMb: maxHeapMb } },
        ),
    });
    assert.deepEqual(
      await greedy.render([{ field: "content", source: "{{#each a}}{{/each}}", escape: "html" }], data, {
        timeoutMs: 60_000,
        maxBytes: 1024,
      }),
      { exceeded: { limit: "memory", reason: "needs more memory than a render is given" } },
    );
    await greedy.close();
  });
});
