// The inbox's events across processes (docs/engine.md, "The inbox widget in real time"), on PostgreSQL: two
// API processes and a worker process share one database; a subscriber's sockets on both API processes hear of
// a message the worker wrote and of a mark made through the other process. Once through PostgreSQL's
// LISTEN/NOTIFY (the default), once through Redis (REDIS_URL).
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import net from "node:net";
import { test } from "node:test";
import { io as connect, type Socket } from "socket.io-client";
import { EngineProbe, inAppWorkflow, startWorkerProcess } from "./engine-processes.ts";
import { poll } from "./poll.ts";
import { call, forEachProcessBackend, type Running, seedOrganization, stopServer } from "./processes.ts";

const redisUrl = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
/** Whether Redis answers PING at the URL within a second. */
function redisAnswers(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect(Number(port || 6379), hostname);
    socket.setTimeout(1000, () => {
      socket.destroy();
      resolve(false);
    });
    socket.once("error", () => resolve(false));
    socket.once("connect", () => socket.write("PING\r\n"));
    socket.once("data", (d) => {
      socket.destroy();
      resolve(d.toString().startsWith("+PONG"));
    });
  });
}
// With TEST_REDIS_URL set (CI sets it when Redis answers) the Redis case is required.
const redisSkip =
  (await redisAnswers(redisUrl)) || process.env.TEST_REDIS_URL
    ? false
    : `Redis SKIPPED: nothing answers at ${redisUrl} and TEST_REDIS_URL is not set`;

interface Heard {
  socket: Socket;
  events: { name: string; data: Record<string, unknown> }[];
}

async function listen(url: string, token: string): Promise<Heard> {
  const socket = connect(url, {
    transports: ["websocket"],
    reconnection: false,
    forceNew: true,
    auth: { token },
  });
  const events: Heard["events"] = [];
  socket.onAny((name: string, data: Record<string, unknown>) => events.push({ name, data }));
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", () => resolve());
    socket.once("connect_error", reject);
  });
  return { socket, events };
}

const last = (heard: Heard, name: string) => heard.events.filter((e) => e.name === name).at(-1)?.data;

forEachProcessBackend(
  "inbox events across processes",
  (suite) => {
    for (const via of ["PostgreSQL LISTEN/NOTIFY", "Redis"] as const) {
      const skip = via === "Redis" ? redisSkip : false;
      test(`through ${via}: sockets on two API processes hear of a message the worker wrote, and of a mark made on the other`, {
        skip,
      }, async (t) => {
        const db = await suite.database({ migrated: true });
        const seed = await seedOrganization(db);
        const env = {
          ...db.env,
          RATE_LIMIT_RPS: "0",
          ...(via === "Redis" ? { REDIS_URL: redisUrl } : {}),
        };
        const workers: Running[] = [];
        const heard: Heard[] = [];
        t.after(async () => {
          for (const h of heard) h.socket.close();
          for (const worker of workers) await stopServer(worker, "SIGKILL");
        });
        const [a, b] = await Promise.all([
          suite.start({ ...env, TIDINGS_ROLE: "api" }),
          suite.start({ ...env, TIDINGS_ROLE: "api" }),
        ]);
        workers.push(await startWorkerProcess(env));
        const name = await inAppWorkflow(a, seed.apiKey, seed.generalGroupId, `Across ${via}`);
        const me = await call(a, "GET", "/v1/environments/me", seed.apiKey);
        const subscriberId = `s-${randomBytes(4).toString("hex")}`;
        const session = await fetch(`${b.url}/v1/widgets/session/initialize`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ applicationIdentifier: me.json().data.identifier, subscriberId }),
        });
        assert.equal(session.status, 201, await session.clone().text());
        const { token } = (await session.json()).data as { token: string };
        heard.push(await listen(a.url, token), await listen(b.url, token));

        const tx = `tx-${randomBytes(4).toString("hex")}`;
        const sent = await call(a, "POST", "/v1/events/trigger", seed.apiKey, {
          name,
          to: subscriberId,
          payload: { tx },
          transactionId: tx,
        });
        assert.equal(sent.status, 201, sent.text);
        for (const h of heard) {
          const message = await poll(
            () => last(h, "notification_received")?.message as { content: string; _id: string } | undefined,
            (m) => m !== undefined,
            { what: "notification_received" },
          );
          assert.equal(message?.content, tx);
          await poll(
            () => last(h, "unseen_count_changed")?.unseenCount,
            (n) => n === 1,
            { what: "unseen 1" },
          );
        }

        // Marked through process B's widget route: the socket on A hears it too.
        const received = last(heard[0] as Heard, "notification_received")?.message as
          | { _id: string }
          | undefined;
        const messageId = received?._id ?? assert.fail("no message was received");
        const marked = await fetch(`${b.url}/v1/widgets/messages/mark-as`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
          body: JSON.stringify({ messageId, markAs: "read" }),
        });
        assert.equal(marked.status, 201, await marked.clone().text());
        for (const h of heard) {
          await poll(
            () => last(h, "unseen_count_changed")?.unseenCount,
            (n) => n === 0,
            { what: "unseen 0" },
          );
          await poll(
            () => last(h, "unread_count_changed")?.unreadCount,
            (n) => n === 0,
            { what: "unread 0" },
          );
        }
        // Exactly one notification_received per socket: no process announced the message twice. Once
        // the engine has nothing left to run, a second message, announced by the worker as the first
        // was, reaches each socket after any repeat of the first would have.
        const probe = new EngineProbe(db);
        try {
          await probe.drained(60_000);
        } finally {
          await probe.close();
        }
        const after = `tx-${randomBytes(4).toString("hex")}`;
        const second = await call(a, "POST", "/v1/events/trigger", seed.apiKey, {
          name,
          to: subscriberId,
          payload: { tx: after },
          transactionId: after,
        });
        assert.equal(second.status, 201, second.text);
        const announced = (h: Heard, content: string) =>
          h.events.filter(
            (e) =>
              e.name === "notification_received" &&
              (e.data.message as { content?: string } | undefined)?.content === content,
          ).length;
        for (const h of heard) {
          await poll(
            () => announced(h, after),
            (n) => n > 0,
            { what: "the second message" },
          );
          assert.equal(announced(h, tx), 1);
          assert.equal(announced(h, after), 1);
        }
      });
    }
  },
  { only: ["postgres"] },
);
