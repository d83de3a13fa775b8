import assert from "node:assert/strict";
import { test } from "node:test";
import { lookupOf, normalHost, OutboundRefused, outboundPolicy, parseOutboundAllow } from "./outbound.ts";

// No test here resolves a name through the system: a table of names stands for DNS.
const dns = (table: Record<string, string[]>) => {
  const asked: string[] = [];
  const resolver = async (host: string) => {
    asked.push(host);
    const addresses = table[host];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });
    return addresses.map((address) => ({
      address,
      family: address.includes(":") ? (6 as const) : (4 as const),
    }));
  };
  return { resolver, asked };
};

test("refusalOf: internal addresses as written are refused by default, public ones and names are not", () => {
  const policy = outboundPolicy();
  const refused: [string, RegExp][] = [
    ["127.0.0.1", /^127\.0\.0\.1 is a loopback address/],
    ["127.255.0.9", /loopback/],
    ["localhost", /^localhost is a loopback address/],
    ["api.localhost", /loopback/],
    ["LOCALHOST.", /loopback/],
    ["::1", /loopback/],
    ["[::1]", /loopback/],
    ["0.0.0.0", /unspecified/],
    ["::", /unspecified/],
    ["10.1.2.3", /private/],
    ["172.16.0.1", /private/],
    ["172.31.255.255", /private/],
    ["192.168.1.1", /private/],
    ["fd12:3456::1", /private/],
    ["fc00::1", /private/],
    ["169.254.169.254", /link-local/],
    ["fe80::1", /link-local/],
    ["fe80::1%eth0", /link-local/],
    ["100.64.0.1", /carrier-grade NAT/],
    ["100.127.255.254", /carrier-grade NAT/],
    ["224.0.0.251", /multicast/],
    ["ff02::1", /multicast/],
    ["255.255.255.255", /reserved/],
    ["::ffff:127.0.0.1", /loopback/],
    ["::ffff:7f00:1", /loopback/],
    ["[::ffff:169.254.169.254]", /link-local/],
    ["::ffff:10.0.0.1", /private/],
    ["::127.0.0.1", /loopback/],
    ["64:ff9b::a9fe:a9fe", /link-local/],
    ["2002:7f00:1::", /loopback/],
    // What the system's resolver reads as an IPv4 address, in its other spellings.
    ["2130706433", /loopback/],
    ["0x7f.1", /loopback/],
    ["127.1", /loopback/],
    ["017700000001", /loopback/],
  ];
  for (const [host, reason] of refused) {
    const refusal = policy.refusalOf(host);
    assert.match(refusal ?? "(allowed)", reason, host);
    assert.match(refusal ?? "", /TIDINGS_OUTBOUND_ALLOW does not allow/, host);
  }
  for (const host of [
    "8.8.8.8",
    "1.1.1.1",
    "172.32.0.1",
    "100.128.0.1",
    "2606:4700:4700::1111",
    "::ffff:8.8.8.8",
    "hooks.slack.com",
    "smtp.example.com",
    "10.example.com",
  ]) {
    assert.equal(policy.refusalOf(host), undefined, host);
  }
});

test("refusalOf: TIDINGS_OUTBOUND_ALLOW opens the addresses, ranges and names it lists, and nothing else", () => {
  const policy = outboundPolicy(["127.0.0.1/32", "10.1.0.0/16", "mail.internal", "fd00::/8", "192.168.7.7"]);
  for (const host of [
    "127.0.0.1",
    "::ffff:127.0.0.1",
    "localhost",
    "10.1.2.3",
    "mail.internal",
    "MAIL.INTERNAL.",
    "fd00::1",
    "192.168.7.7",
  ]) {
    assert.equal(policy.refusalOf(host), undefined, host);
  }
  for (const host of ["127.0.0.2", "10.2.0.1", "::1", "192.168.7.8", "169.254.169.254"]) {
    assert.notEqual(policy.refusalOf(host), undefined, host);
  }
  assert.deepEqual(policy.allowed, [
    "127.0.0.1/32",
    "10.1.0.0/16",
    "mail.internal",
    "fd00::/8",
    "192.168.7.7",
  ]);
});

test("resolve: a name's internal addresses are left out; none left is a refusal that names no address", async () => {
  const { resolver, asked } = dns({
    "public.test": ["93.184.215.14"],
    "internal.test": ["10.0.0.5", "fd00::5"],
    "both.test": ["10.0.0.5", "93.184.215.14"],
    "metadata.test": ["169.254.169.254"],
    "mail.internal": ["10.9.9.9"],
    localhost: ["127.0.0.1", "::1"],
  });
  const policy = outboundPolicy(["mail.internal"], resolver);
  assert.deepEqual(await policy.resolve("public.test"), [{ address: "93.184.215.14", family: 4 }]);
  assert.deepEqual(await policy.resolve("both.test"), [{ address: "93.184.215.14", family: 4 }]);
  assert.deepEqual(
    await policy.resolve("mail.internal"),
    [{ address: "10.9.9.9", family: 4 }],
    "a name allowed is trusted",
  );
  for (const host of ["internal.test", "metadata.test"]) {
    const error = await policy.resolve(host).catch((e: unknown) => e);
    assert.ok(error instanceof OutboundRefused, host);
    assert.equal(
      error.message,
      `${host} does not resolve to a public address, and TIDINGS_OUTBOUND_ALLOW does not allow it`,
    );
    assert.doesNotMatch(error.message, /10\.0\.0\.5|169\.254/);
  }
  await assert.rejects(policy.resolve("localhost"), OutboundRefused);
  await assert.rejects(policy.resolve("127.0.0.1"), OutboundRefused);
  await assert.rejects(policy.resolve("nowhere.test"), { code: "ENOTFOUND" });
  // Literal addresses and localhost are judged without asking DNS.
  assert.deepEqual(asked, [
    "public.test",
    "both.test",
    "mail.internal",
    "internal.test",
    "metadata.test",
    "nowhere.test",
  ]);

  const loopback = outboundPolicy(["127.0.0.1/32"], resolver);
  assert.deepEqual(await loopback.resolve("localhost"), [{ address: "127.0.0.1", family: 4 }]);
  assert.deepEqual(await loopback.resolve("[::ffff:127.0.0.1]"), [
    { address: "::ffff:127.0.0.1", family: 6 },
  ]);
});

test("lookupOf answers the checked addresses only, as one or all", async () => {
  const lookup = lookupOf([
    { address: "93.184.215.14", family: 4 },
    { address: "2606:2800::1", family: 6 },
  ]);
  const one = await new Promise((resolve) =>
    lookup("anything.test", { family: 0 }, (error, address, family) => resolve([error, address, family])),
  );
  assert.deepEqual(one, [null, "93.184.215.14", 4]);
  const all = await new Promise((resolve) =>
    lookup("anything.test", { all: true }, (error, addresses) => resolve([error, addresses])),
  );
  assert.deepEqual(all, [
    null,
    [
      { address: "93.184.215.14", family: 4 },
      { address: "2606:2800::1", family: 6 },
    ],
  ]);
});

test("parseOutboundAllow and normalHost", () => {
  assert.deepEqual(parseOutboundAllow(" 127.0.0.1/32, mail.internal ,,10.0.0.0/8,::1 "), [
    "127.0.0.1/32",
    "mail.internal",
    "10.0.0.0/8",
    "::1",
  ]);
  assert.deepEqual(parseOutboundAllow(""), []);
  for (const bad of ["10.0.0.0/33", "10.0.0/8", "mail internal", "http://x", "::1/129"]) {
    assert.throws(() => parseOutboundAllow(bad), /is neither a host name, an address nor a CIDR range/, bad);
  }
  assert.equal(normalHost("[::1]"), "::1");
  assert.equal(normalHost("Example.COM."), "example.com");
  assert.equal(normalHost("2130706433"), "127.0.0.1");
  assert.equal(normalHost("1.2.3.4.5"), "1.2.3.4.5");
});
