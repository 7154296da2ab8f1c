/**
 * The safe outbound fetcher refuses every hostile target: loopback, private, link-local, CGNAT,
 * multicast, unspecified and cloud-metadata addresses in every spelling (decimal, octal, hex,
 * IPv4-mapped, NAT64, 6to4, Teredo), `localhost` and internal names, non-http schemes, DNS names
 * resolving to refused addresses, redirects to them, and DNS rebinding. Refusals through the
 * paid routes are 400 `target_not_allowed` and nothing is charged.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config.ts";
import { base } from "../src/networks/base.ts";
import { addressRefusal } from "../src/outbound/address-policy.ts";
import { createSafeFetcher, OutboundError, type ResolvedAddress, TargetNotAllowedError } from "../src/outbound/safe-fetch.ts";
import type { RunningService } from "../src/server/service.ts";
import { startService } from "../src/server/service.ts";
import { buyerAccount, payingFetch, startTestService, testConfig, usdcBalance } from "./support/service.ts";
import { type Stub, startStub } from "./support/stub-server.ts";

/** A resolver answering from a fixed table, counting its calls. */
function tableResolver(table: Record<string, string[]>) {
  const calls: string[] = [];
  const resolve = async (host: string): Promise<ResolvedAddress[]> => {
    calls.push(host);
    const answers = table[host];
    if (!answers) throw Object.assign(new Error(`no such host ${host}`), { code: "ENOTFOUND" });
    return answers.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };
  return { resolve, calls };
}

const hostileDns = tableResolver({
  "loopback.example.com": ["127.0.0.1"],
  "mixed.example.com": ["93.184.216.34", "10.1.2.3"],
  "mapped.example.com": ["::ffff:10.0.0.1"],
  "metadata.example.com": ["169.254.169.254"],
  "v6-private.example.com": ["fd12:3456::1"],
  "cgnat.example.com": ["100.100.1.1"],
});
const strict = createSafeFetcher({ resolve: hostileDns.resolve, connectTimeoutMs: 500, totalTimeoutMs: 1_000 });

/** [target, reason the refusal must give]. */
const HOSTILE: readonly [string, string][] = [
  ["http://127.0.0.1/", "loopback"],
  ["http://127.1/", "loopback"],
  ["http://2130706433/", "loopback"],
  ["http://0177.0.0.1/", "loopback"],
  ["http://0x7f.1/", "loopback"],
  ["http://0x7f000001:8545/", "loopback"],
  ["http://%31%32%37.0.0.1/", "loopback"],
  ["http://127.0.0.1./", "loopback"],
  ["http://[::1]/", "loopback"],
  ["http://[::ffff:127.0.0.1]/", "loopback"],
  ["http://[0:0:0:0:0:ffff:7f00:1]/", "loopback"],
  ["http://[::ffff:169.254.169.254]/", "cloud_metadata"],
  ["http://169.254.169.254/latest/meta-data/", "cloud_metadata"],
  ["http://168.63.129.16/machine?comp=goalstate", "cloud_metadata"],
  ["http://[fd00:ec2::254]/latest/meta-data/", "cloud_metadata"],
  ["http://metadata.google.internal/computeMetadata/v1/", "cloud_metadata"],
  ["http://10.0.0.1/", "private"],
  ["http://172.16.5.4/", "private"],
  ["http://172.31.255.255/", "private"],
  ["http://192.168.1.1/", "private"],
  ["http://[fc00::1]/", "private"],
  ["http://100.64.0.1/", "cgnat"],
  ["http://169.254.1.1/", "link_local"],
  ["http://[fe80::1]/", "link_local"],
  ["http://224.0.0.1/", "multicast"],
  ["http://[ff02::1]/", "multicast"],
  ["http://0.0.0.0:4021/", "unspecified"],
  ["http://0/", "unspecified"],
  ["http://[::]/", "unspecified"],
  ["http://[64:ff9b::7f00:1]/", "loopback"],
  ["http://[64:ff9b::a00:1]/", "ipv4_translated"],
  ["http://[2002:c0a8:101::1]/", "ipv4_translated"],
  ["http://[2001:0:4136:e378::1]/", "teredo"],
  ["http://255.255.255.255/", "reserved"],
  ["http://192.0.2.10/", "documentation"],
  ["http://localhost:4021/", "localhost_name"],
  ["http://LOCALHOST./", "localhost_name"],
  ["http://api.localhost/", "localhost_name"],
  ["http://intranet/", "internal_name"],
  ["http://printer.local/", "internal_name"],
  ["http://loopback.example.com/", "loopback"],
  ["http://mixed.example.com/", "private"],
  ["http://mapped.example.com/", "ipv4_translated"],
  ["http://metadata.example.com/", "cloud_metadata"],
  ["http://v6-private.example.com/", "private"],
  ["http://cgnat.example.com/", "cgnat"],
  ["file:///etc/passwd", "scheme"],
  ["gopher://127.0.0.1:25/", "scheme"],
  ["ftp://example.com/", "scheme"],
  ["http://user:secret@example.com/", "credentials"],
  ["not a url", "malformed_url"],
];

describe("refuses hostile targets", () => {
  it(`has at least 25 of them (${HOSTILE.length})`, () => {
    expect(HOSTILE.length).toBeGreaterThanOrEqual(25);
  });

  it.each(HOSTILE)("%s (%s)", async (url, reason) => {
    const error = await strict({ url }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(TargetNotAllowedError);
    expect((error as TargetNotAllowedError).status).toBe(400);
    expect((error as TargetNotAllowedError).code).toBe("target_not_allowed");
    expect((error as TargetNotAllowedError).reason).toBe(reason);
  });
});

/** Host names resolving to refused addresses: [name, resolved addresses, reason, words the message must use]. */
const NAMED_INTERNAL: readonly [string, string[], string, string][] = [
  ["private.example.com", ["10.1.2.3"], "private", "resolves to a private address"],
  ["imds.example.com", ["169.254.169.254"], "cloud_metadata", "resolves to a cloud metadata address"],
  ["home.example.com", ["127.0.0.1"], "loopback", "resolves to a loopback address"],
  ["linklocal.example.com", ["169.254.7.9"], "link_local", "resolves to a link-local address"],
  ["half.example.com", ["93.184.216.34", "10.1.2.3"], "private", "resolves to a private address"],
  ["ula.example.com", ["fd12:3456::7"], "private", "resolves to a private address"],
  ["mapped10.example.com", ["::ffff:10.9.8.7"], "ipv4_translated", "resolves to an IPv6 address carrying a refused IPv4 address"],
];
const namedDns = tableResolver(Object.fromEntries(NAMED_INTERNAL.map(([name, addresses]) => [name, addresses])));

/** Every spelling of an address a refusal must not contain (dotted, IPv6 and its IPv4 tail). */
function spellingsOf(address: string): string[] {
  const tail = address.match(/(\d+\.\d+\.\d+\.\d+)$/)?.[1];
  return [address, ...(tail ? [tail] : [])];
}

describe("a refused host name gives the reason, never the address it resolves to", () => {
  const fetcher = createSafeFetcher({ resolve: namedDns.resolve, connectTimeoutMs: 500, totalTimeoutMs: 1_000 });

  it.each(NAMED_INTERNAL)("%s -> %j is refused as %s without naming the address", async (name, addresses, reason, words) => {
    for (const attempt of [() => fetcher({ url: `http://${name}/admin` }), () => fetcher.preflight(`https://${name}/`)]) {
      const error = await attempt().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(TargetNotAllowedError);
      const refused = error as TargetNotAllowedError;
      expect(refused.reason).toBe(reason);
      expect(refused.message).toContain(words);
      expect(refused.message).toContain(name);
      expect(refused.details).not.toHaveProperty("address");
      for (const address of addresses) {
        for (const spelling of spellingsOf(address)) {
          expect(refused.message).not.toContain(spelling);
          expect(JSON.stringify(refused.details)).not.toContain(spelling);
        }
      }
    }
  });

  it("still echoes an address the caller wrote in the URL", async () => {
    const error = (await fetcher({ url: "http://10.1.2.3/admin" }).catch((e: unknown) => e)) as TargetNotAllowedError;
    expect(error).toBeInstanceOf(TargetNotAllowedError);
    expect(error.reason).toBe("private");
    expect(error.message).toContain("10.1.2.3 is a private address");
    expect(error.details).toMatchObject({ reason: "private", address: "10.1.2.3", hop: 0 });
  });
});

describe("address parsing", () => {
  it("reads every inet_aton spelling of 127.0.0.1 and refuses what is not an address", () => {
    for (const text of ["127.0.0.1", "2130706433", "0177.0.0.1", "0x7f.1", "0x7f000001", "127.1", "0x7F.0.0.01", "[::ffff:127.0.0.1]"]) {
      expect(addressRefusal(text), text).toBe("loopback");
    }
    for (const text of ["256.0.0.1", "1.2.3.4.5", "08.1.1.1", "1::2::3"])
      expect(addressRefusal(text, { allowLoopback: true }), text).toBe("reserved");
    expect(addressRefusal("fe80::1%eth0")).toBe("link_local");
    expect(addressRefusal("[2001:db8::1]")).toBe("documentation");
  });

  it("lets public addresses through and loopback only when asked", () => {
    expect(addressRefusal("93.184.216.34")).toBeNull();
    expect(addressRefusal("2606:4700:4700::1111")).toBeNull();
    expect(addressRefusal("::ffff:93.184.216.34")).toBeNull();
    expect(addressRefusal("2002:5db8:d822::1")).toBeNull(); // 6to4 of a public address
    expect(addressRefusal("127.0.0.2")).toBe("loopback");
    expect(addressRefusal("127.0.0.2", { allowLoopback: true })).toBeNull();
    expect(addressRefusal("::1", { allowLoopback: true })).toBeNull();
    // Allowing loopback allows nothing else.
    expect(addressRefusal("0.0.0.0", { allowLoopback: true })).toBe("unspecified");
    expect(addressRefusal("10.0.0.1", { allowLoopback: true })).toBe("private");
    expect(addressRefusal("169.254.169.254", { allowLoopback: true })).toBe("cloud_metadata");
  });
});

describe("connections", () => {
  let stub: Stub;
  let port: number;
  beforeAll(async () => {
    stub = await startStub((req, res) => {
      if (req.url === "/redirect-private") {
        res.writeHead(302, { location: "http://10.0.0.1/admin" });
        res.end();
        return;
      }
      if (req.url === "/redirect-name") {
        res.writeHead(302, { location: "http://internal.example.com/admin" });
        res.end();
        return;
      }
      if (req.url === "/redirect-metadata") {
        res.writeHead(307, { location: "http://169.254.169.254/latest/meta-data/iam/" });
        res.end();
        return;
      }
      if (req.url?.startsWith("/loop")) {
        const n = Number(req.url.slice(5) || 0);
        res.writeHead(302, { location: `/loop/${n + 1}` });
        res.end();
        return;
      }
      if (req.url === "/hop") {
        res.writeHead(303, { location: "/landing" });
        res.end();
        return;
      }
      if (req.url === "/big") {
        res.writeHead(200, { "content-type": "application/octet-stream" });
        res.end(Buffer.alloc(1024 * 1024, 97));
        return;
      }
      if (req.url === "/hang") return; // never answers
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ host: req.headers.host, path: req.url, method: req.method }));
    });
    port = Number(new URL(stub.url).port);
  });
  afterAll(() => stub.close());

  it("connects to the checked address and keeps the name in Host", async () => {
    const dns = tableResolver({ "seller.example.com": ["127.0.0.1"] });
    const fetcher = createSafeFetcher({ resolve: dns.resolve, allowLoopback: true });
    const res = await fetcher({ url: `http://seller.example.com:${port}/hello` });
    expect(res.status).toBe(200);
    expect(res.address).toBe("127.0.0.1");
    expect(JSON.parse(res.body.toString())).toEqual({ host: `seller.example.com:${port}`, path: "/hello", method: "GET" });
    expect(dns.calls).toEqual(["seller.example.com"]);
  });

  it("refuses a public-looking host that redirects to a private address, without contacting it", async () => {
    // The stub stands for a public seller (loopback is allowed only so that it can be reached).
    const dns = tableResolver({ "shop.example.com": ["127.0.0.1"], "internal.example.com": ["10.0.0.7"] });
    const fetcher = createSafeFetcher({ resolve: dns.resolve, allowLoopback: true });
    for (const [path, reason, address] of [
      ["/redirect-private", "private", "10.0.0.1"],
      ["/redirect-metadata", "cloud_metadata", "169.254.169.254"],
    ] as const) {
      const error = await fetcher({ url: `http://shop.example.com:${port}${path}` }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TargetNotAllowedError);
      expect((error as TargetNotAllowedError).details).toMatchObject({ reason, address, hop: 1 });
    }
  });

  it("refuses a redirect to a name that resolves to a private address without naming the address", async () => {
    const dns = tableResolver({ "shop.example.com": ["127.0.0.1"], "internal.example.com": ["10.0.0.7"] });
    const fetcher = createSafeFetcher({ resolve: dns.resolve, allowLoopback: true });
    const error = (await fetcher({ url: `http://shop.example.com:${port}/redirect-name` }).catch(
      (e: unknown) => e,
    )) as TargetNotAllowedError;
    expect(error).toBeInstanceOf(TargetNotAllowedError);
    expect(error.details).toEqual({ url: "http://internal.example.com/admin", reason: "private", hop: 1 });
    expect(error.message).toContain("resolves to a private address");
    expect(error.message).not.toContain("10.0.0.7");
    expect(JSON.stringify(error.details)).not.toContain("10.0.0.7");
    expect(dns.calls).toEqual(["shop.example.com", "internal.example.com"]);
  });

  it("pins the first answer: a rebinding resolver (public, then loopback) never reaches loopback", async () => {
    let calls = 0;
    const rebinding = async (): Promise<ResolvedAddress[]> => {
      calls++;
      return calls === 1 ? [{ address: "93.184.216.34", family: 4 }] : [{ address: "127.0.0.1", family: 4 }];
    };
    const fetcher = createSafeFetcher({ resolve: rebinding, connectTimeoutMs: 300, totalTimeoutMs: 600 });
    const before = stub.requests.length;
    const error = await fetcher({ url: `http://rebind.example.com:${port}/steal` }).catch((e: unknown) => e);
    // The public address is unreachable offline: the connection failed there and nowhere else.
    expect(error).toBeInstanceOf(OutboundError);
    expect(["connect", "timeout"]).toContain((error as OutboundError).kind);
    expect(calls).toBe(1);
    expect(stub.requests.length).toBe(before);
  });

  it("follows at most 3 redirects, re-checking each, and turns POST into GET on 303", async () => {
    const fetcher = createSafeFetcher({ allowLoopback: true });
    const error = await fetcher({ url: `${stub.url}/loop/0` }).catch((e: unknown) => e);
    expect((error as OutboundError).kind).toBe("too_many_redirects");
    const res = await fetcher({ url: `${stub.url}/hop`, method: "POST", body: "{}" });
    expect(res.redirects).toEqual([`${stub.url}/hop`]);
    expect(JSON.parse(res.body.toString())).toMatchObject({ path: "/landing", method: "GET" });
  });

  it("caps the body at 256 KiB and says it was cut", async () => {
    const res = await createSafeFetcher({ allowLoopback: true })({ url: `${stub.url}/big` });
    expect(res.body.length).toBe(256 * 1024);
    expect(res.truncated).toBe(true);
  });

  it("gives up on a target that never answers", async () => {
    const started = Date.now();
    const error = await createSafeFetcher({ allowLoopback: true, totalTimeoutMs: 400 })({ url: `${stub.url}/hang` }).catch(
      (e: unknown) => e,
    );
    expect((error as OutboundError).kind).toBe("timeout");
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it("reports a closed port as a connection failure", async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const closed = (server.address() as AddressInfo).port;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const error = await createSafeFetcher({ allowLoopback: true })({ url: `http://127.0.0.1:${closed}/` }).catch((e: unknown) => e);
    expect((error as OutboundError).kind).toBe("connect");
  });
});

describe("loopback is never allowed in production", () => {
  const production = {
    NETWORK: base.id,
    RPC_URL: "https://mainnet.base.org",
    PAY_TO: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
    FACILITATOR_PRIVATE_KEY: `0x${"11".repeat(32)}`,
    PUBLIC_URL: "https://api.example.com",
  };

  it("refuses ALLOW_LOOPBACK_TARGETS in production configuration", () => {
    const error = (() => {
      try {
        loadConfig({ ...production, ALLOW_LOOPBACK_TARGETS: "1" });
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toEqual([
      "ALLOW_LOOPBACK_TARGETS is for local development only; production never fetches loopback targets",
    ]);
    expect(loadConfig({ ...production }).intel.allowLoopbackTargets).toBe(false);
    expect(loadConfig({ ALLOW_LOOPBACK_TARGETS: "1" }).intel.allowLoopbackTargets).toBe(true);
  });

  it("refuses the test option in production mode before opening anything", async () => {
    await expect(startService({ config: loadConfig(production), allowLoopbackTargets: true })).rejects.toThrow(
      "loopback targets are never allowed in production mode",
    );
    await expect(startService({ config: loadConfig(production), crawlAllowLoopback: true })).rejects.toThrow(
      "loopback targets are never allowed in production mode",
    );
  });
});

describe("through the paid routes", () => {
  let service: RunningService;
  let target: Stub;
  beforeAll(async () => {
    // Default policy, exactly as production: loopback refused.
    service = await startTestService({ config: testConfig(), resolve: namedDns.resolve });
    target = await startStub((_req, res) => {
      res.writeHead(402, { "content-type": "application/json" });
      res.end("{}");
    });
  });
  afterAll(async () => {
    await service.close();
    await target.close();
  });

  it.each([
    ["/api/x402-check", { url: "http://127.0.0.1:8545/" }, "loopback"],
    ["/api/x402-check", { url: "http://169.254.169.254/latest/meta-data/" }, "cloud_metadata"],
    ["/api/x402-check", { url: "http://[::ffff:10.0.0.1]/" }, "ipv4_translated"],
    ["/api/x402-check", { url: "file:///etc/passwd" }, "scheme"],
    ["/api/x402-trust", { url: "http://localhost:4021/api/health" }, "localhost_name"],
  ])("%s %j is 400 target_not_allowed and not charged", async (path, body, reason) => {
    const buyer = buyerAccount(4);
    const before = await usdcBalance(buyer.address);
    const res = await payingFetch(buyer)(`${service.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(400);
    const answer = (await res.json()) as { error: { code: string; details: { reason: string } } };
    expect(answer.error.code).toBe("target_not_allowed");
    expect(answer.error.details.reason).toBe(reason);
    expect(res.headers.get("payment-response")).toBeNull();
    expect(await usdcBalance(buyer.address)).toBe(before);
  });

  it.each([
    ["/api/x402-check", "private.example.com", "private", "10.1.2.3"],
    ["/api/x402-check", "imds.example.com", "cloud_metadata", "169.254.169.254"],
    ["/api/x402-trust", "home.example.com", "loopback", "127.0.0.1"],
  ])("%s of a name resolving to a refused address (%s) answers the reason %s, never the address", async (path, name, reason, address) => {
    const buyer = buyerAccount(4);
    const before = await usdcBalance(buyer.address);
    const res = await payingFetch(buyer)(`${service.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ url: `http://${name}/api/data` }),
    });
    expect(res.status).toBe(400);
    const text = await res.text();
    const answer = JSON.parse(text) as { error: { code: string; message: string; details: Record<string, unknown> } };
    expect(answer.error.code).toBe("target_not_allowed");
    expect(answer.error.details.reason).toBe(reason);
    expect(answer.error.message).toContain(`the host ${name} resolves to`);
    expect(answer.error.message).not.toContain(address);
    expect(JSON.stringify(answer.error.details)).not.toContain(address);
    expect(text).not.toContain(address);
    expect(res.headers.get("payment-response")).toBeNull();
    expect(await usdcBalance(buyer.address)).toBe(before);
  });

  it("does not reach a loopback seller that the test option would allow", async () => {
    const before = target.requests.length;
    const res = await payingFetch(buyerAccount(4))(`${service.url}/api/x402-check`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ url: `${target.url}/api/data` }),
    });
    expect(res.status).toBe(400);
    expect(target.requests.length).toBe(before);
  });
});
