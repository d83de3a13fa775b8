import dns from "node:dns";
import http from "node:http";
import https from "node:https";
import net from "node:net";

/**
 * Where the service may connect on a caller's behalf (chat webhooks, SMTP hosts): anywhere public,
 * and no internal address unless the operator allows it (TIDINGS_OUTBOUND_ALLOW). A caller who
 * could name 127.0.0.1, a private network or the cloud's metadata address would otherwise reach
 * services only this host can, read their answers back, and scan their ports.
 *
 * A name is resolved once, its addresses checked, and the connection made to a checked address
 * (`resolve`, or `lookup` for an HTTP agent), so a name that resolves elsewhere by the time of
 * the connection (DNS rebinding) reaches nothing new.
 */

/** A connection refused by the policy; never retried as it stands. */
export class OutboundRefused extends Error {
  override name = "OutboundRefused";
  readonly code = "EOUTBOUND";
}

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

type Resolver = (host: string) => Promise<ResolvedAddress[]>;

const systemResolver: Resolver = async (host) =>
  (await dns.promises.lookup(host, { all: true, verbatim: true })).map((entry) => ({
    address: entry.address,
    family: entry.family === 6 ? 6 : 4,
  }));

// ---------------------------------------------------------------------------------------------
// Addresses as numbers: IPv4 as a 32-bit value, IPv6 as a 128-bit bigint.

function ipv4Value(address: string): number {
  return address.split(".").reduce((value, part) => value * 256 + Number(part), 0);
}

function ipv6Value(address: string): bigint {
  let text = address.replace(/%.*$/, "");
  // A dotted IPv4 tail (::ffff:1.2.3.4) as its two groups.
  const tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (tail?.[1]) {
    const v4 = ipv4Value(tail[1]);
    text = `${text.slice(0, -tail[1].length)}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`;
  }
  const [head = "", rest] = text.split("::");
  const left = head === "" ? [] : head.split(":");
  const right = rest === undefined || rest === "" ? [] : rest.split(":");
  const groups =
    rest === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill("0"), ...right];
  return groups.reduce((value, group) => (value << 16n) | BigInt(Number.parseInt(group || "0", 16)), 0n);
}

interface Range {
  family: 4 | 6;
  base: bigint;
  bits: number;
}

function rangeOf(cidr: string): Range | undefined {
  const [address = "", prefix] = cidr.split("/");
  const family = net.isIP(address);
  if (family === 0) return undefined;
  const width = family === 4 ? 32 : 128;
  if (prefix !== undefined && !/^\d{1,3}$/.test(prefix)) return undefined;
  const bits = prefix === undefined ? width : Number(prefix);
  if (bits > width) return undefined;
  const value = family === 4 ? BigInt(ipv4Value(address)) : ipv6Value(address);
  const mask = bits === 0 ? 0n : ((1n << BigInt(bits)) - 1n) << BigInt(width - bits);
  return { family: family === 4 ? 4 : 6, base: value & mask, bits };
}

function within(range: Range, family: 4 | 6, value: bigint): boolean {
  if (range.family !== family) return false;
  const width = family === 4 ? 32 : 128;
  const mask = range.bits === 0 ? 0n : ((1n << BigInt(range.bits)) - 1n) << BigInt(width - range.bits);
  return (value & mask) === range.base;
}

const ranges = (kind: string, cidrs: string[]) =>
  cidrs.map((cidr) => ({ kind, range: rangeOf(cidr) as Range }));

// What is refused by default, with what it is called in a refusal.
const INTERNAL = [
  ...ranges("an unspecified", ["0.0.0.0/8", "::/128"]),
  ...ranges("a loopback", ["127.0.0.0/8", "::1/128"]),
  ...ranges("a private", ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7", "fec0::/10"]),
  ...ranges("a shared (carrier-grade NAT)", ["100.64.0.0/10"]),
  ...ranges("a link-local", ["169.254.0.0/16", "fe80::/10"]),
  ...ranges("a multicast", ["224.0.0.0/4", "ff00::/8"]),
  ...ranges("a reserved", ["192.0.0.0/24", "198.18.0.0/15", "240.0.0.0/4", "100::/64", "64:ff9b:1::/48"]),
];

// IPv6 forms that carry an IPv4 address: mapped (::ffff:a.b.c.d), compatible (::a.b.c.d), NAT64
// (64:ff9b::a.b.c.d) in the low 32 bits; 6to4 (2002:AABB:CCDD::) in bits 16 to 48.
const EMBEDDING: { range: Range; shift: bigint }[] = [
  { range: rangeOf("::ffff:0:0/96") as Range, shift: 0n },
  { range: rangeOf("::/96") as Range, shift: 0n },
  { range: rangeOf("64:ff9b::/96") as Range, shift: 0n },
  { range: rangeOf("2002::/16") as Range, shift: 80n },
];

interface Address {
  family: 4 | 6;
  value: bigint;
}

function parse(address: string): Address | undefined {
  const family = net.isIP(address);
  if (family === 4) return { family: 4, value: BigInt(ipv4Value(address)) };
  if (family === 6) return { family: 6, value: ipv6Value(address) };
  return undefined;
}

/** The IPv4 address an IPv6 one carries, if it is one of the forms that do. */
function embedded(address: Address): Address | undefined {
  if (address.family !== 6) return undefined;
  for (const { range, shift } of EMBEDDING) {
    if (within(range, 6, address.value)) {
      const v4 = (address.value >> shift) & 0xffffffffn;
      // ::/128 and ::1 are IPv6's own unspecified and loopback, not IPv4-compatible forms.
      if (shift === 0n && range.bits === 96 && address.value >> 32n === 0n && v4 <= 1n) return undefined;
      return { family: 4, value: v4 };
    }
  }
  return undefined;
}

/** What kind of internal address it is ("a loopback"...), or undefined for a public one. */
function internalKind(address: Address): string | undefined {
  const inner = embedded(address);
  if (inner) return internalKind(inner);
  return INTERNAL.find(({ range }) => within(range, address.family, address.value))?.kind;
}

/** A host as written (a URL's hostname, an SMTP host) in the form compared: IPv4 numbers normalised, no brackets, lower case. */
export function normalHost(host: string): string {
  const bare = host
    .trim()
    .replace(/^\[(.*)\]$/, "$1")
    .replace(/\.$/, "")
    .toLowerCase();
  if (net.isIP(bare) !== 0 || !/^[0-9a-fx.]+$/.test(bare)) return bare;
  try {
    // WHATWG's parser reads 2130706433, 0x7f.1 and 127.1 as the IPv4 address they name, as the
    // system's resolver would.
    const parsed = new URL(`http://${bare}/`).hostname;
    return net.isIPv4(parsed) ? parsed : bare;
  } catch {
    return bare;
  }
}

const isLocalhostName = (host: string) => host === "localhost" || host.endsWith(".localhost");

/** Parses TIDINGS_OUTBOUND_ALLOW: comma-separated host names, addresses and CIDR ranges. */
export function parseOutboundAllow(text: string): string[] {
  const entries = text
    .split(",")
    .map((entry) => entry.trim())
    .filter(Boolean);
  for (const entry of entries) {
    if (entry.includes("/") ? !rangeOf(entry) : !/^[A-Za-z0-9.:_[\]-]+$/.test(entry)) {
      throw new Error(`"${entry}" is neither a host name, an address nor a CIDR range (e.g. 10.0.0.0/8)`);
    }
  }
  return entries;
}

export interface OutboundPolicy {
  /** The allow-list as given (TIDINGS_OUTBOUND_ALLOW). */
  readonly allowed: readonly string[];
  /**
   * Why a host written as an address (an IP, or localhost) may not be reached, or undefined when it
   * may, or when only resolving the name can tell. For checks when a value is saved.
   */
  refusalOf(host: string): string | undefined;
  /**
   * The addresses to connect to for a host: resolved, the internal ones left out unless allowed.
   * Throws OutboundRefused when none is left, and DNS's error when the name does not resolve.
   */
  resolve(host: string): Promise<ResolvedAddress[]>;
}

/**
 * The policy: internal addresses refused, but for `allow` (host names, which are then trusted
 * whatever they resolve to, and addresses or CIDR ranges).
 */
export function outboundPolicy(
  allow: readonly string[] = [],
  resolver: Resolver = systemResolver,
): OutboundPolicy {
  const names = new Set<string>();
  const allowedRanges: Range[] = [];
  for (const entry of allow) {
    const [host = "", prefix] = entry.split("/");
    const range = rangeOf(prefix === undefined ? normalHost(host) : `${normalHost(host)}/${prefix}`);
    if (range) allowedRanges.push(range);
    else names.add(normalHost(entry));
  }
  const allowedAddress = (address: Address): boolean => {
    const inner = embedded(address);
    return (
      allowedRanges.some((range) => within(range, address.family, address.value)) ||
      (inner !== undefined && allowedRanges.some((range) => within(range, 4, inner.value)))
    );
  };
  /** Why this address may not be reached, or undefined. */
  const refusal = (address: string): string | undefined => {
    const parsed = parse(address);
    if (!parsed) return undefined;
    const kind = internalKind(parsed);
    if (kind === undefined || allowedAddress(parsed)) return undefined;
    return `${address} is ${kind} address, which TIDINGS_OUTBOUND_ALLOW does not allow`;
  };
  const refusalOf = (host: string): string | undefined => {
    const name = normalHost(host);
    if (names.has(name)) return undefined;
    if (isLocalhostName(name)) {
      // Whichever of its addresses is allowed will do.
      if (refusal("127.0.0.1") === undefined || refusal("::1") === undefined) return undefined;
      return `${name} is a loopback address, which TIDINGS_OUTBOUND_ALLOW does not allow`;
    }
    return refusal(name);
  };
  return {
    allowed: [...allow],
    refusalOf,
    async resolve(host) {
      const name = normalHost(host);
      if (net.isIP(name) !== 0) {
        const refused = refusal(name);
        if (refused) throw new OutboundRefused(refused);
        return [{ address: name, family: net.isIP(name) === 6 ? 6 : 4 }];
      }
      const trusted = names.has(name);
      if (!trusted && isLocalhostName(name)) {
        const refused = refusalOf(name);
        if (refused) throw new OutboundRefused(refused);
      }
      const addresses = await resolver(name);
      const usable = trusted ? addresses : addresses.filter((entry) => refusal(entry.address) === undefined);
      if (usable.length === 0) {
        // Which internal address it named is not said: that would map internal names for anyone.
        throw new OutboundRefused(
          `${name} does not resolve to a public address, and TIDINGS_OUTBOUND_ALLOW does not allow it`,
        );
      }
      return usable;
    },
  };
}

/**
 * A `lookup` for net.connect and HTTP agents that answers only the addresses already resolved and
 * checked: the connection goes where the policy looked.
 */
export function lookupOf(addresses: readonly ResolvedAddress[]): net.LookupFunction {
  return (_hostname, options, callback) => {
    const all =
      typeof options === "object" && options !== null && (options as { all?: boolean }).all === true;
    const done = callback as (error: Error | null, address: unknown, family?: number) => void;
    const [first] = addresses;
    if (!first) {
      done(new OutboundRefused("no address to connect to"), all ? [] : "");
      return;
    }
    if (all)
      done(
        null,
        addresses.map((entry) => ({ ...entry })),
      );
    else done(null, first.address, first.family);
  };
}

// ------------------------------------------------------------------------------------------------
// HTTP calls to an address the policy checked: chat webhooks and code-first workflow apps' bridges.

// Connections kept open between calls. A pooled connection was opened to an address the policy
// checked when it was opened.
const agents = {
  "http:": new http.Agent({ keepAlive: true, maxSockets: 64 }),
  "https:": new https.Agent({ keepAlive: true, maxSockets: 64 }),
};

/** The URL of an outbound HTTP call, or why it cannot be one. */
export function httpTarget(url: string): URL | "is not a URL" | "is not http or https" {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return "is not a URL";
  }
  return target.protocol === "http:" || target.protocol === "https:" ? target : "is not http or https";
}

export interface OutboundCall {
  method: "GET" | "POST";
  headers: Record<string, string>;
  body?: string | undefined;
  /** From the connection on, answer included. */
  timeoutMs: number;
  /** How much of the answer is read: past it, `fail` ends the call, `truncate` keeps what came. */
  maxBytes: number;
  overflow: "fail" | "truncate";
}

/**
 * What became of a call: the answer's status and (at most `maxBytes` of) its body, or why there is
 * none: `refused` by the policy, `timedOut`, or a failure whose code `known` names in our words
 * (`message` is the error's own text, which may hold the URL: a caller whose URL is a credential
 * does not show it).
 */
export type OutboundAnswer =
  | { ok: true; status: number; body: string }
  | { ok: false; refused: boolean; timedOut: boolean; known?: string; message: string };

// What a failed call is recorded as: its code in our words, never the remote's.
const FAILURES: Record<string, string> = {
  ECONNREFUSED: "the connection was refused",
  ECONNRESET: "the connection was reset",
  EPIPE: "the connection was closed",
  ETIMEDOUT: "the connection timed out",
  EHOSTUNREACH: "the host is unreachable",
  ENETUNREACH: "the network is unreachable",
  ENOTFOUND: "the host name does not resolve",
  EAI_AGAIN: "the host name could not be resolved for now",
  CERT_HAS_EXPIRED: "its TLS certificate has expired",
  DEPTH_ZERO_SELF_SIGNED_CERT: "its TLS certificate is self-signed",
  SELF_SIGNED_CERT_IN_CHAIN: "its TLS certificate is not trusted",
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: "its TLS certificate is not trusted",
  ERR_TLS_CERT_ALTNAME_INVALID: "its TLS certificate is for another name",
  HPE_INVALID_CONSTANT: "it does not answer HTTP",
  HPE_INVALID_STATUS: "it does not answer HTTP",
};

function failed(error: unknown): Extract<OutboundAnswer, { ok: false }> {
  const name = (error as { name?: string } | null)?.name;
  const code = (error as { code?: string } | null)?.code ?? "";
  const message = String((error as { message?: string } | null)?.message ?? error);
  const known = FAILURES[code];
  return {
    ok: false,
    refused: error instanceof OutboundRefused,
    timedOut: name === "TimeoutError" || name === "AbortError",
    ...(known ? { known: `${known} (${code})` } : {}),
    message,
  };
}

/**
 * One HTTP call to `target` under the policy: its host resolved and checked, the connection made to
 * a checked address, redirects not followed. Never throws.
 */
export async function callOutbound(
  target: URL,
  policy: OutboundPolicy,
  call: OutboundCall,
): Promise<OutboundAnswer> {
  let addresses: ResolvedAddress[];
  try {
    addresses = await policy.resolve(target.hostname);
  } catch (error) {
    return failed(error);
  }
  const client = target.protocol === "https:" ? https : http;
  return new Promise<OutboundAnswer>((resolve) => {
    const request = client.request(
      target,
      {
        method: call.method,
        headers: {
          "user-agent": "Tidings",
          ...call.headers,
          ...(call.body === undefined ? {} : { "content-length": String(Buffer.byteLength(call.body)) }),
        },
        agent: agents[target.protocol as "http:" | "https:"],
        // The name was resolved and checked: connect to what was checked, not to a new answer.
        lookup: lookupOf(addresses),
        signal: AbortSignal.timeout(call.timeoutMs),
      },
      (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        const done = () =>
          resolve({
            ok: true,
            status: response.statusCode ?? 0,
            body: Buffer.concat(chunks).subarray(0, call.maxBytes).toString("utf8"),
          });
        response.on("data", (chunk: Buffer) => {
          if (size >= call.maxBytes) return;
          chunks.push(chunk);
          size += chunk.byteLength;
          if (call.overflow === "fail" && size > call.maxBytes)
            response.destroy(new Error(`the answer is larger than ${call.maxBytes} bytes`));
          else if (call.overflow === "truncate" && size >= call.maxBytes) response.destroy();
        });
        // An error (one ends a call whose answer is too large) comes before the close: it decides.
        response.on("end", done);
        response.on("close", done);
        response.on("error", (error) =>
          size >= call.maxBytes && call.overflow === "truncate" ? done() : resolve(failed(error)),
        );
      },
    );
    request.on("error", (error) => resolve(failed(error)));
    request.end(call.body);
  });
}
