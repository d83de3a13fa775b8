import type { Server as HttpServer } from "node:http";
import type { Client, Pool, QueryResult } from "pg";
import type { Logger } from "pino";
import { Server, type Socket } from "socket.io";
import type { Deps } from "../deps.ts";
import { presentMessageDocument } from "../inbox/presenter.ts";
import {
  authenticateToken,
  findSubscriberMessage,
  type InboxChange,
  inboxCounts,
  type SessionTokens,
} from "../inbox/service.ts";
import type { Tenant } from "../tenancy/tenant.ts";
import { presentProfile } from "./presenter.ts";

/** How events reach the sockets other processes hold (docs/engine.md, "The inbox widget in real time"). */
export type RealtimeCluster =
  | { kind: "postgres"; url: string; schema: string | undefined }
  | { kind: "redis"; url: string; prefix: string };

export interface RealtimeOptions {
  deps: Deps;
  tokens: SessionTokens;
  logger: Logger;
  /** Undefined: one process (SQLite), events stay in it. */
  cluster: RealtimeCluster | undefined;
  /** How many sockets one subscriber may hold open on this process. */
  socketsPerSubscriber: number;
}

/** What a socket's handshake proved: whose inbox it listens to, and until when. */
interface SocketData {
  room: string;
  expiresAt: number;
}

/** The inter-process event that carries an InboxChange. */
const CHANGED = "tidings:inbox-changed";
/** Several changes in one message to the other processes (what one event-loop turn published). */
const CHANGES = "tidings:inbox-changes";
/**
 * Changes a message at most: a list of ids stays under the PostgreSQL adapter's 8,000-byte NOTIFY
 * payload (beyond it, the adapter writes the payload to a table and notifies its id).
 */
const CHANGES_A_MESSAGE = 40;

const roomOf = (environmentId: string, subscriberRef: string) => `inbox:${environmentId}:${subscriberRef}`;

/**
 * The inbox in real time: socket.io on the API's port and default path (`/socket.io`), as Novu's
 * clients expect. A socket proves itself with a session's token, the widget's or Novu's current
 * inbox's (`auth.token`, or `query.token` as @novu/js and older widgets send it), and joins its
 * subscriber's room; it is disconnected when the token expires.
 *
 * A change to a subscriber's feed (`publish`, after its commit) goes to every process: handled here,
 * and through the cluster adapter (@socket.io/postgres-adapter's LISTEN/NOTIFY, or
 * @socket.io/redis-adapter when REDIS_URL is set) to the others. Only a process that holds one of
 * the subscriber's sockets then reads anything: the new message (`notification_received`, also
 * when a snoozed one comes back) and the counts (`unseen_count_changed`, `unread_count_changed` with
 * the counts by severity), read once per burst of changes however many sockets listen. A worker process (TIDINGS_ROLE=worker) holds no sockets and only publishes.
 */
export class InboxRealtime {
  readonly io: Server;
  /** The widget sessions' tokens, which the sockets and the widget routes check alike. */
  readonly tokens: SessionTokens;
  readonly #options: RealtimeOptions;
  readonly #logger: Logger;
  /** Sockets per room on this process, counted when admitted (the cap) and when gone. */
  readonly #admitted = new Map<string, number>();
  /** Rooms whose counts are being read now; `again` when another change came meanwhile. */
  readonly #refreshing = new Map<string, { again: boolean }>();
  readonly #closers: (() => Promise<void>)[] = [];
  /** Changes to tell the other processes of, at the end of this event-loop turn. */
  #outbox: Omit<InboxChange, "written">[] = [];
  #clustered = false;

  constructor(options: RealtimeOptions) {
    this.#options = options;
    this.tokens = options.tokens;
    this.#logger = options.logger;
    this.io = new Server({
      serveClient: false,
      // Clients send nothing but the handshake: a small frame limit.
      maxHttpBufferSize: 16_384,
      // Any page may embed the inbox: the token, not the origin, says who listens (no cookies).
      cors: { origin: true, credentials: false },
    });
    this.io.use((socket, next) => {
      this.#admit(socket).then(
        () => next(),
        (error: Error) => next(new Error(error.message)),
      );
    });
    this.io.on("connection", (socket) => this.#connected(socket));
    this.io.on(CHANGED, (change: InboxChange) => this.#deliver(change));
    this.io.on(CHANGES, (changes: InboxChange[]) => {
      if (Array.isArray(changes)) for (const change of changes) this.#deliver(change);
    });
  }

  /** Joins the cluster of processes (before any socket connects); a no-op for one process. */
  async connectCluster(): Promise<void> {
    const cluster = this.#options.cluster;
    if (!cluster) return;
    if (cluster.kind === "postgres") {
      const [{ createAdapter }, pg] = await Promise.all([
        import("@socket.io/postgres-adapter"),
        import("pg"),
      ]);
      const pool = new OneConnection(
        () =>
          new pg.default.Client({
            connectionString: cluster.url,
            ...(cluster.schema ? { options: `-c search_path=${cluster.schema}` } : {}),
          }),
        (err) => this.#logger.warn({ err }, "inbox sockets: the database connection failed"),
      );
      this.io.adapter(
        createAdapter(pool as unknown as Pool, {
          // NOTIFY channels are database-wide: one per schema, so two deployments never mix.
          channelPrefix: `tidings_${cluster.schema ?? "public"}`,
          // Idle costs the database next to nothing: a heartbeat tells the other processes this one
          // is there, which only requests awaiting every process's answer need (serverSideEmit
          // without an acknowledgement does not), and the table of large payloads is swept as
          // seldom. Their defaults (5 s, 30 s) were a statement every few seconds at rest.
          heartbeatInterval: 60_000,
          heartbeatTimeout: 130_000,
          cleanupInterval: 300_000,
          errorHandler: (err) => this.#logger.warn({ err }, "inbox sockets: the PostgreSQL adapter failed"),
        }),
      );
      this.#closers.push(() => pool.end());
    } else {
      const [{ createAdapter }, { Redis }] = await Promise.all([
        import("@socket.io/redis-adapter"),
        import("ioredis"),
      ]);
      const pub = new Redis(cluster.url, { maxRetriesPerRequest: 1 });
      const sub = pub.duplicate();
      for (const client of [pub, sub]) {
        client.on("error", (err) => this.#logger.warn({ err }, "inbox sockets: Redis connection failed"));
      }
      this.io.adapter(createAdapter(pub, sub, { key: cluster.prefix }));
      this.#closers.push(async () => {
        pub.disconnect();
        sub.disconnect();
      });
    }
    this.#clustered = true;
  }

  /** Serves sockets on the API's HTTP server. */
  attach(server: HttpServer): void {
    this.io.attach(server);
  }

  /** Tells the subscriber's sockets, in every process, of a committed change to its feed. */
  publish(change: InboxChange): void {
    this.#deliver(change);
    if (!this.#clustered) return;
    // Ids only: the others read what they show (the message and its subscriber stay here).
    const { written: _written, ...told } = change;
    // Sent together at the end of this turn of the event loop: a fan-out batch's hundreds of
    // messages are a few NOTIFYs, not one each queued behind the adapter's one connection.
    this.#outbox.push(told);
    if (this.#outbox.length === 1) setImmediate(() => this.#flush());
  }

  #flush(): void {
    const changes = this.#outbox.splice(0);
    for (let i = 0; i < changes.length; i += CHANGES_A_MESSAGE) {
      const chunk = changes.slice(i, i + CHANGES_A_MESSAGE);
      try {
        if (chunk.length === 1) this.io.serverSideEmit(CHANGED, chunk[0]);
        else this.io.serverSideEmit(CHANGES, chunk);
      } catch (err) {
        this.#logger.warn({ err }, "inbox sockets: could not tell the other processes of a change");
      }
    }
  }

  /** How many sockets this process holds. */
  get sockets(): number {
    return this.io.of("/").sockets.size;
  }

  /** Disconnects every socket (before the HTTP server closes, which they would hold open). */
  disconnectAll(): void {
    this.io.local.disconnectSockets(true);
  }

  async close(): Promise<void> {
    this.disconnectAll();
    this.io.engine?.close();
    // The namespaces' adapters (their heartbeat timers) end with the server's.
    for (const nsp of this.io._nsps.values()) nsp.adapter.close();
    for (const close of this.#closers.splice(0)) {
      await close().catch((err: unknown) => this.#logger.debug({ err }, "inbox sockets: close failed"));
    }
  }

  async #admit(socket: Socket): Promise<void> {
    const { auth, query } = socket.handshake;
    const sent = (auth as Record<string, unknown> | undefined)?.token ?? query.token;
    if (typeof sent !== "string" || sent === "") throw new Error("Missing token: connect with auth.token");
    const { session } = await authenticateToken(this.#options.deps, this.#options.tokens, sent);
    const room = roomOf(session.environmentId, session.subscriberRef);
    // Counted as soon as admitted, with no await in between: a flood of handshakes cannot overshoot.
    const count = this.#admitted.get(room) ?? 0;
    if (count >= this.#options.socketsPerSubscriber) {
      throw new Error(
        `Too many connections for this subscriber (at most ${this.#options.socketsPerSubscriber} per server)`,
      );
    }
    this.#admitted.set(room, count + 1);
    socket.data = { room, expiresAt: session.expiresAt } satisfies SocketData;
  }

  #connected(socket: Socket): void {
    const { room, expiresAt } = socket.data as SocketData;
    void socket.join(room);
    // The session ends when its token does, by the app's clock.
    const cancelExpiry = this.#options.deps.clock.at(expiresAt, () => socket.disconnect(true));
    socket.on("disconnect", () => {
      cancelExpiry();
      const count = (this.#admitted.get(room) ?? 1) - 1;
      if (count <= 0) this.#admitted.delete(room);
      else this.#admitted.set(room, count);
    });
  }

  #hasLocal(room: string): boolean {
    return (this.io.of("/").adapter.rooms.get(room)?.size ?? 0) > 0;
  }

  #deliver(change: InboxChange): void {
    const room = roomOf(change.environmentId, change.subscriberRef);
    if (!this.#hasLocal(room)) return;
    if (change.messageId !== undefined) void this.#sendMessage(room, change, change.messageId);
    this.#refreshCounts(room, change);
  }

  async #sendMessage(room: string, change: InboxChange, messageId: string): Promise<void> {
    try {
      const found = await findSubscriberMessage(
        this.#options.deps,
        tenantOf(change),
        change.subscriberRef,
        messageId,
        change.written,
      );
      if (!found) return;
      this.io.local.to(room).emit("notification_received", {
        message: presentMessageDocument(found.notification, presentProfile(found.subscriber)),
      });
    } catch (err) {
      this.#logger.warn({ err }, "inbox sockets: could not read a new message");
    }
  }

  /** Reads and sends the room's counts; changes that come while reading make one more read. */
  #refreshCounts(room: string, change: InboxChange): void {
    const running = this.#refreshing.get(room);
    if (running) {
      running.again = true;
      return;
    }
    const state = { again: false };
    this.#refreshing.set(room, state);
    void (async () => {
      try {
        do {
          state.again = false;
          const { unseenCount, unreadCount, counts } = await inboxCounts(this.#options.deps, change);
          const to = this.io.local.to(room);
          to.emit("unseen_count_changed", { unseenCount });
          // The widget reads the one number, Novu's current inbox the counts by severity.
          to.emit("unread_count_changed", { unreadCount, counts });
        } while (state.again && this.#hasLocal(room));
      } catch (err) {
        this.#logger.warn({ err }, "inbox sockets: could not read a subscriber's counts");
      } finally {
        this.#refreshing.delete(room);
      }
    })();
  }
}

const tenantOf = (change: InboxChange): Tenant => ({
  organizationId: "",
  environmentId: change.environmentId,
  actorId: "",
});

/**
 * What @socket.io/postgres-adapter asks of a pg Pool (connect for its LISTEN, query for NOTIFY and
 * its cleanup), served by one connection: LISTEN and NOTIFY share it, so the adapter costs each
 * process one PostgreSQL connection instead of a pool's two or more. A connection that ends is
 * replaced on the next call (the adapter reconnects its LISTEN when its client ends).
 */
class OneConnection {
  readonly #make: () => Client;
  readonly #onError: (err: Error) => void;
  #client: Client | undefined;
  #connecting: Promise<Client> | undefined;

  constructor(make: () => Client, onError: (err: Error) => void) {
    this.#make = make;
    this.#onError = onError;
  }

  #get(): Promise<Client> {
    if (this.#client) return Promise.resolve(this.#client);
    this.#connecting ??= (async () => {
      const client = this.#make();
      client.on("error", this.#onError);
      client.on("end", () => {
        if (this.#client === client) this.#client = undefined;
      });
      await client.connect();
      this.#client = client;
      return client;
    })().finally(() => {
      this.#connecting = undefined;
    });
    return this.#connecting;
  }

  /** The connection, as a pool client whose release keeps it open (end() closes it). */
  async connect(): Promise<Client & { release(): void }> {
    return Object.assign(await this.#get(), { release: () => {} });
  }

  async query(text: string, values?: unknown[]): Promise<QueryResult> {
    return (await this.#get()).query(text, values);
  }

  async end(): Promise<void> {
    const client = this.#client;
    this.#client = undefined;
    await client?.end();
  }
}
