/**
 * The routes as MCP tools, both ways, against the real service on the devnet:
 * - `npm run mcp` (stdio, spawned as a child process) lists every route of both sites, pays a paid
 *   tool with @x402/fetch for exactly its price on its own site's origin, and refuses calls over
 *   its caps without paying;
 * - `POST /mcp` (streamable HTTP) is paid through `_meta` by a client built from @x402/core and the
 *   MCP SDK, settles once however often the same payment is retried, and never charges a failing
 *   call; on the secondary site it offers that site's routes, priced and challenged on its origin.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { x402Client } from "@x402/core/client";
import type { PaymentPayload, PaymentRequired, SettleResponse } from "@x402/core/types";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { erc20Abi, type PrivateKeyAccount, parseEventLogs } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SpendCaps } from "../scripts/mcp/spend-caps.ts";
import { createStdioServer, McpSettingsError, stdioSettingsFromEnv, ToolNameClashError } from "../scripts/mcp/stdio.ts";
import { baseToolsRoutes } from "../spec/routes/base-tools.ts";
import { solanaRoutes } from "../spec/routes/solana.ts";
import { routes } from "../spec/routes.ts";
import { base } from "../src/networks/base.ts";
import type { RunningService } from "../src/server/service.ts";
import { freshBuyer } from "./support/fresh-buyer.ts";
import { scenario } from "./support/scenario.ts";
import { buyerAccount, chainClient, challengeOf, devnet, payingFetch, startTestService, usdcBalance } from "./support/service.ts";

const PRICE = 100_000n; // verifyPayment (POST /api/payment-verify): 0.10 USDC
const HONEYPOT_PRICE = 50_000n; // v1HoneypotCheck (POST /v1/honeypot-check on the secondary site): 0.05 USDC
/** The seeded token whose deepest pool is a v3 pool (src/local/devnet/scenario-tokens.ts), and that pool. */
const btax = () => {
  const pool = scenario().tokenRisk.pairs.find((p) => p.symbol === "BTAX" && p.pair === p.expected.pool);
  if (!pool) throw new Error("the scenario has no BTAX pool");
  return pool;
};
const unknownTx = `0x${"11".repeat(32)}`;
/** The answer of verifyPayment for a hash the chain does not know. */
const unknownTxAnswer = {
  tx_hash: unknownTx,
  verified: false,
  reason: "tx_not_found",
  detail: "No transaction with this hash is known to the chain node.",
  from: null,
  to: null,
  amount_usdc: null,
  confirmations: 0,
  transfer: null,
};

let service: RunningService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(() => service.close());

/** An MCP client of `npm run mcp`, spawned as `node scripts/mcp.ts` with `env`. */
async function stdioClient(env: Record<string, string>): Promise<Client> {
  const client = new Client({ name: "mcp-test", version: "1.0.0" });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: ["scripts/mcp.ts"],
      cwd: process.cwd(),
      env: { BASE_URL: service.url, SECONDARY_BASE_URL: service.secondaryUrl as string, ...env },
      stderr: "pipe",
    }),
  );
  return client;
}

/** The settlement in a tool result's `_meta`. */
function settlementOf(result: CallToolResult): SettleResponse | undefined {
  return result._meta?.["x402/payment-response"] as SettleResponse | undefined;
}

/** The tool error the stdio MCP server answers: `message` as text, and `code`, `message` and `details` as structured content. */
function toolErrorResult(code: string, message: string, details: Record<string, string>): CallToolResult {
  return { isError: true, content: [{ type: "text", text: message }], structuredContent: { error: { code, message, details } } };
}

/** The USDC transfers of a settlement transaction, as [from, to, value]. */
async function transfersOf(tx: string): Promise<[string, string, bigint][]> {
  const receipt = await chainClient().getTransactionReceipt({ hash: tx as `0x${string}` });
  return parseEventLogs({ abi: erc20Abi, eventName: "Transfer", logs: receipt.logs }).map((t) => [t.args.from, t.args.to, t.args.value]);
}

describe("npm run mcp: the stdio MCP server", () => {
  let buyer: PrivateKeyAccount;
  let client: Client;
  beforeAll(async () => {
    buyer = buyerAccount(5);
    // The payee as a user might paste it, in lower case: the check must not depend on checksum case.
    client = await stdioClient({
      BUYER_PRIVATE_KEY: devnet().buyers[5]?.privateKey as string,
      MCP_EXPECTED_PAY_TO: devnet().payTo.toLowerCase(),
    });
  });
  afterAll(() => client.close());

  it("lists every route of both sites as a tool named by its operationId, with its input schema and price", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual([...routes, ...baseToolsRoutes, ...solanaRoutes].map((r) => r.operationId));
    expect(new Set(tools.map((t) => t.name)).size).toBe(tools.length);
    for (const route of [...routes, ...baseToolsRoutes, ...solanaRoutes]) {
      const tool = tools.find((t) => t.name === route.operationId);
      const schema = route.method === "GET" ? route.query : (route.body ?? route.query);
      const none = { type: "object", properties: {}, additionalProperties: false };
      expect(tool?.inputSchema).toEqual(schema ? JSON.parse(JSON.stringify(schema)) : none);
    }
    const askKb = routes.find((r) => r.operationId === "askKb");
    expect(tools.find((t) => t.name === "askKb")?.description).toBe(
      `${askKb?.summary}.\n\n${askKb?.description}\n\nPrice: $0.03 per call, paid in USDC on Base with x402; a call that fails is not charged.\nHTTP: POST /api/kb/ask.`,
    );
    expect(tools.find((t) => t.name === "getPricing")?.description).toContain(
      "\n\nPrice: free, no payment needed.\nHTTP: GET /api/pricing.",
    );
    expect(tools.find((t) => t.name === "v1HoneypotCheck")?.description).toContain(
      "\n\nPrice: $0.05 per call, paid in USDC on Base with x402; a call that fails is not charged.\nHTTP: POST /v1/honeypot-check.",
    );
  });

  it("calls a secondary-site tool on the secondary origin and pays exactly its price", async () => {
    const pool = btax();
    const payTo = devnet().payTo;
    const [buyerBefore, payToBefore] = [await usdcBalance(buyer.address), await usdcBalance(payTo)];
    const result = (await client.callTool({ name: "v1HoneypotCheck", arguments: { token: pool.token } })) as CallToolResult;
    expect(result.isError).toBeUndefined();
    // The primary answers /v1/ paths with 404: this answer came from the secondary site.
    expect(result.structuredContent).toMatchObject({
      token: pool.token,
      pool: { address: pool.pair, kind: "uniswap_v3" },
      buy_tax_pct: 5,
      verdict: "caution",
    });
    const settlement = settlementOf(result);
    expect(settlement).toMatchObject({ success: true, network: base.id, payer: buyer.address });
    expect(await transfersOf(settlement?.transaction as string)).toEqual([[buyer.address, payTo, HONEYPOT_PRICE]]);
    expect(await usdcBalance(buyer.address)).toBe(buyerBefore - HONEYPOT_PRICE);
    expect(await usdcBalance(payTo)).toBe(payToBefore + HONEYPOT_PRICE);
  });

  it("answers the secondary site's free /health tool without paying", async () => {
    const before = await usdcBalance(buyer.address);
    const result = (await client.callTool({ name: "getBaseToolsHealth", arguments: {} })) as CallToolResult;
    expect(result.isError).toBeUndefined();
    expect(result.structuredContent).toMatchObject({ status: "ok", network: base.id });
    expect(await usdcBalance(buyer.address)).toBe(before);
  });

  it("answers a free tool without paying", async () => {
    const before = await usdcBalance(buyer.address);
    const result = (await client.callTool({ name: "getPricing", arguments: {} })) as CallToolResult;
    expect(result.isError).toBeUndefined();
    expect(result.structuredContent).toEqual(await (await fetch(`${service.url}/api/pricing`)).json());
    expect(await usdcBalance(buyer.address)).toBe(before);
  });

  it("pays a paid tool exactly its price and returns the answer with the settlement", async () => {
    const payTo = devnet().payTo;
    const [buyerBefore, payToBefore] = [await usdcBalance(buyer.address), await usdcBalance(payTo)];
    const result = (await client.callTool({ name: "verifyPayment", arguments: { tx_hash: unknownTx } })) as CallToolResult;
    expect(result.isError).toBeUndefined();
    expect(result.structuredContent).toEqual(unknownTxAnswer);
    expect(result.content).toEqual([{ type: "text", text: JSON.stringify(unknownTxAnswer) }]);
    const settlement = settlementOf(result);
    expect(settlement).toMatchObject({ success: true, network: base.id, payer: buyer.address });
    expect(await transfersOf(settlement?.transaction as string)).toEqual([[buyer.address, payTo, PRICE]]);
    expect(await usdcBalance(buyer.address)).toBe(buyerBefore - PRICE);
    expect(await usdcBalance(payTo)).toBe(payToBefore + PRICE);
  });

  it("refuses a tool over the per-call cap with a tool error, paying nothing", async () => {
    const capped = await stdioClient({ BUYER_PRIVATE_KEY: devnet().buyers[5]?.privateKey as string, MCP_MAX_PRICE_USD: "0.50" });
    try {
      const before = await usdcBalance(buyer.address);
      const result = (await capped.callTool({ name: "buyPlaybookBundle", arguments: { topic: "x402-register" } })) as CallToolResult;
      const message = "This call costs $0.91, over the per-call cap of $0.50 (MCP_MAX_PRICE_USD). Nothing was paid.";
      expect(result).toEqual(
        toolErrorResult("spend_cap_exceeded", message, {
          price_usd: "$0.91",
          max_price_usd: "$0.50",
          max_spend_usd: "$1.00",
          spent_usd: "$0.00",
        }),
      );
      expect(await usdcBalance(buyer.address)).toBe(before);
    } finally {
      await capped.close();
    }
  });

  it("refuses a call that would pass the session's spend cap, after paying the calls within it", async () => {
    const capped = await stdioClient({ BUYER_PRIVATE_KEY: devnet().buyers[6]?.privateKey as string, MCP_MAX_SPEND_USD: "0.15" });
    try {
      const payer = buyerAccount(6).address;
      const before = await usdcBalance(payer);
      const first = (await capped.callTool({ name: "verifyPayment", arguments: { tx_hash: unknownTx } })) as CallToolResult;
      expect(first.structuredContent).toEqual(unknownTxAnswer);
      expect(await usdcBalance(payer)).toBe(before - PRICE);

      const second = (await capped.callTool({ name: "verifyPayment", arguments: { tx_hash: unknownTx } })) as CallToolResult;
      const message =
        "This call costs $0.10 and this session has already committed $0.10 of its $0.15 cap (MCP_MAX_SPEND_USD). Nothing was paid.";
      expect(second).toEqual(
        toolErrorResult("spend_cap_exceeded", message, {
          price_usd: "$0.10",
          max_price_usd: "$1.00",
          max_spend_usd: "$0.15",
          spent_usd: "$0.10",
        }),
      );
      expect(await usdcBalance(payer)).toBe(before - PRICE);
    } finally {
      await capped.close();
    }
  });

  it("checks the challenge's amount before signing, when it is above what the route table says", async () => {
    // A route table that understates askKb's price ($0.01 instead of $0.03) passes the first check;
    // the 402 challenge's amount is over the $0.02 cap, so nothing is signed or sent.
    const understated = routes.map((r) => (r.operationId === "askKb" ? { ...r, price: 0.01 } : r));
    const { client, sent } = await inProcessStdio({
      routes: understated,
      caps: new SpendCaps({ maxPerCall: 20_000n, maxSession: 1_000_000n }),
    });
    try {
      const before = await usdcBalance(buyerAccount(7).address);
      const result = (await client.callTool({
        name: "askKb",
        arguments: { question: "how do I register on x402scan?" },
      })) as CallToolResult;
      const message = "This call costs $0.03, over the per-call cap of $0.02 (MCP_MAX_PRICE_USD). Nothing was paid.";
      expect(result).toEqual(
        toolErrorResult("spend_cap_exceeded", message, {
          price_usd: "$0.03",
          max_price_usd: "$0.02",
          max_spend_usd: "$1.00",
          spent_usd: "$0.00",
        }),
      );
      expect(sent).toEqual([null]);
      expect(await usdcBalance(buyerAccount(7).address)).toBe(before);
    } finally {
      await client.close();
    }
  });
});

/** A stdio MCP server made in this process, on `routes`, recording the PAYMENT-SIGNATURE of every request it sends. */
async function inProcessStdio(
  options: Partial<Parameters<typeof createStdioServer>[0]>,
  rewrite: (url: string) => string = (url) => url,
): Promise<{ client: Client; sent: (string | null)[] }> {
  const sent: (string | null)[] = [];
  const recording: typeof fetch = (input, init) => {
    const original = new Request(input, init);
    const request = new Request(rewrite(original.url), original);
    sent.push(request.headers.get("payment-signature"));
    return fetch(request);
  };
  const server = createStdioServer({
    routes,
    baseUrl: service.url,
    buyer: buyerAccount(7),
    caps: new SpendCaps({ maxPerCall: 1_000_000n, maxSession: 1_000_000n }),
    ...options,
    fetch: recording,
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "mcp-test", version: "1.0.0" });
  await client.connect(clientSide);
  return { client, sent };
}

describe("npm run mcp reads the buyer's prepaid balance", () => {
  it("signs in with BUYER_PRIVATE_KEY for getBalance, which answers only its wallet, paying nothing", async () => {
    const buyer = await freshBuyer(2_000_000n);
    const topUp = await payingFetch(buyer)(`${service.url}/api/balance/topup?amount=1`, { method: "POST" });
    expect(topUp.status).toBe(200);
    const before = await usdcBalance(buyer.address);
    const client = await stdioClient({ BUYER_PRIVATE_KEY: buyer.privateKey });
    try {
      const result = (await client.callTool({ name: "getBalance", arguments: {} })) as CallToolResult;
      expect(result.isError).toBeUndefined();
      expect(result.structuredContent).toEqual({
        user_id: buyer.address.toLowerCase(),
        balance: 1,
        credits_left: 10,
        movements: [{ at: expect.any(String), kind: "topup", amount: 1, route: "POST /api/balance/topup", request_id: expect.any(String) }],
        debits_by_route: [],
      });
      expect(await usdcBalance(buyer.address)).toBe(before);
    } finally {
      await client.close();
    }
  });
});

describe("npm run mcp when the service is not running", () => {
  it("says the connection was refused, for a free and a paid tool, and pays nothing", async () => {
    // A port nothing listens on: one the system just handed out and took back.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
    const { port } = probe.address() as AddressInfo;
    await new Promise((resolve) => probe.close(resolve));
    const origin = `http://127.0.0.1:${port}`;
    const { client, sent } = await inProcessStdio({ baseUrl: origin });
    try {
      const refused = `The call to ${origin} failed: fetch failed (connect ECONNREFUSED 127.0.0.1:${port}).`;
      expect(await client.callTool({ name: "getHealth", arguments: {} })).toEqual({
        isError: true,
        content: [{ type: "text", text: refused }],
        structuredContent: { error: { code: "call_failed", message: refused } },
      });
      const unpaid = `${refused} Nothing was paid.`;
      expect(await client.callTool({ name: "verifyPayment", arguments: { tx_hash: unknownTx } })).toEqual({
        isError: true,
        content: [{ type: "text", text: unpaid }],
        structuredContent: { error: { code: "call_failed", message: unpaid } },
      });
      // Neither request got as far as a challenge, so nothing was signed.
      expect(sent).toEqual([null, null]);
    } finally {
      await client.close();
    }
  });
});

describe("npm run mcp after a settlement whose outcome is unknown", () => {
  let flaky: RunningService;
  let late: Promise<unknown> | undefined;
  beforeAll(async () => {
    // The first settlement's answer is lost (a dropped connection: its outcome is unknown), and
    // its transfer lands a moment later; the later ones go through.
    const d = devnet();
    const { createSelfFacilitator } = await import("../src/payments/facilitator.ts");
    const { rpcTransport } = await import("../src/chain/client.ts");
    const real = createSelfFacilitator(d.facilitator.privateKey, base.chainAt([d.rpcUrl]), rpcTransport([d.rpcUrl]), base.id);
    let settles = 0;
    flaky = await startTestService({
      facilitator: {
        verify: (p, r) => real.verify(p, r),
        getSupported: () => real.getSupported(),
        settle: (p, r) => {
          settles += 1;
          if (settles > 1) return real.settle(p, r);
          late = new Promise((resolve) => setTimeout(resolve, 200)).then(() => real.settle(p, r));
          return Promise.reject(new Error("socket hang up"));
        },
      },
    });
  });
  afterAll(() => flaky.close());

  it("sends the same payment again when the same call is made again, so the answer is paid once though it landed late", async () => {
    const buyer = await freshBuyer(1_000_000n);
    const caps = new SpendCaps({ maxPerCall: 1_000_000n, maxSession: 1_000_000n });
    const { client, sent } = await inProcessStdio({ baseUrl: flaky.url, buyer, caps });
    try {
      const call = { name: "verifyPayment", arguments: { tx_hash: unknownTx } };
      const first = (await client.callTool(call)) as CallToolResult;
      expect(first.isError).toBe(true);
      expect(first.structuredContent).toMatchObject({ error: { code: "settlement_unknown" } });
      expect(first.content.at(-1)).toEqual({
        type: "text",
        text: "Call this tool again with the same arguments: this MCP server then sends the same payment again, which the service never charges twice.",
      });
      // The payment is counted against the caps until its outcome is known.
      expect(caps.spent).toBe(0n);
      expect(caps.refusal(1_000_000n)).toBe(
        "This call costs $1.00 and this session has already committed $0.10 of its $1.00 cap (MCP_MAX_SPEND_USD). Nothing was paid.",
      );
      await late;
      expect(await usdcBalance(buyer.address)).toBe(1_000_000n - PRICE);

      const second = (await client.callTool(call)) as CallToolResult;
      expect(second.isError).toBeUndefined();
      expect(second.structuredContent).toEqual(unknownTxAnswer);
      // Charged once: the late transfer paid for this answer.
      expect(await usdcBalance(buyer.address)).toBe(1_000_000n - PRICE);
      const settlement = settlementOf(second);
      expect(await transfersOf(settlement?.transaction as string)).toEqual([[buyer.address, devnet().payTo, PRICE]]);
      // One signature, sent with the first call and again, as it was, with the second.
      expect(sent).toEqual([null, expect.any(String), sent[1]]);
      expect(caps.spent).toBe(PRICE);
    } finally {
      await client.close();
    }
  });
});

describe("npm run mcp pays only what tools/list showed, to the service's payee", () => {
  it("refuses a challenge asking more than the tool's listed price, though within the caps, signing nothing", async () => {
    // tools/list shows askKb at $0.01 (a stale route table, or an origin now asking more); the
    // service's challenge asks $0.03, well under the $1.00 caps.
    const understated = routes.map((r) => (r.operationId === "askKb" ? { ...r, price: 0.01 } : r));
    const caps = new SpendCaps({ maxPerCall: 1_000_000n, maxSession: 1_000_000n });
    const { client, sent } = await inProcessStdio({ routes: understated, caps });
    try {
      const { tools } = await client.listTools();
      expect(tools.find((t) => t.name === "askKb")?.description).toContain("Price: $0.01 per call");
      const before = await usdcBalance(buyerAccount(7).address);
      const result = (await client.callTool({
        name: "askKb",
        arguments: { question: "how do I register on x402scan?" },
      })) as CallToolResult;
      const message = "The service asks $0.03 for askKb, more than its listed price of $0.01. Nothing was paid.";
      expect(result).toEqual(toolErrorResult("price_mismatch", message, { price_usd: "$0.01", asked_usd: "$0.03" }));
      expect(sent).toEqual([null]);
      expect(caps.spent).toBe(0n);
      expect(await usdcBalance(buyerAccount(7).address)).toBe(before);
    } finally {
      await client.close();
    }
  });

  it("refuses a challenge naming another payee than MCP_EXPECTED_PAY_TO, signing nothing", async () => {
    const { client, sent } = await inProcessStdio({ expectedPayTo: "0x000000000000000000000000000000000000dEaD" });
    try {
      const before = await usdcBalance(buyerAccount(7).address);
      const result = (await client.callTool({ name: "verifyPayment", arguments: { tx_hash: unknownTx } })) as CallToolResult;
      const payTo = devnet().payTo;
      const message = `The service asks to be paid to ${payTo}, not to 0x000000000000000000000000000000000000dEaD (MCP_EXPECTED_PAY_TO). Nothing was paid.`;
      expect(result).toEqual(
        toolErrorResult("pay_to_mismatch", message, { pay_to: payTo, expected_pay_to: "0x000000000000000000000000000000000000dEaD" }),
      );
      expect(sent).toEqual([null]);
      expect(await usdcBalance(buyerAccount(7).address)).toBe(before);
    } finally {
      await client.close();
    }
  });

  it("pays a top-up exactly the amount chosen, and refuses a challenge for another amount", async () => {
    const buyer = buyerAccount(2);
    const payTo = devnet().payTo;
    const caps = { caps: new SpendCaps({ maxPerCall: 2_000_000n, maxSession: 5_000_000n }), buyer, expectedPayTo: payTo };
    // The request's amount changed on its way ($1 chosen, $1.50 asked): within the caps, still refused.
    const tampered = await inProcessStdio(caps, (url) => url.replace("amount=1", "amount=1.5"));
    try {
      const before = await usdcBalance(buyer.address);
      const result = (await tampered.client.callTool({ name: "topUpBalance", arguments: { amount: 1 } })) as CallToolResult;
      const message = "The service asks $1.50 for topUpBalance, not the $1.00 chosen. Nothing was paid.";
      expect(result).toEqual(toolErrorResult("price_mismatch", message, { price_usd: "$1.00", asked_usd: "$1.50" }));
      expect(tampered.sent).toEqual([null]);
      expect(await usdcBalance(buyer.address)).toBe(before);
    } finally {
      await tampered.client.close();
    }
    const plain = await inProcessStdio(caps);
    try {
      const [buyerBefore, payToBefore] = [await usdcBalance(buyer.address), await usdcBalance(payTo)];
      const result = (await plain.client.callTool({ name: "topUpBalance", arguments: { amount: 1 } })) as CallToolResult;
      expect(result.isError).toBeUndefined();
      expect(result.structuredContent).toMatchObject({ user_id: buyer.address.toLowerCase(), credited: 1 });
      expect(plain.sent).toHaveLength(2);
      expect(await usdcBalance(buyer.address)).toBe(buyerBefore - 1_000_000n);
      expect(await usdcBalance(payTo)).toBe(payToBefore + 1_000_000n);
    } finally {
      await plain.client.close();
    }
  });
});

describe("the settings of npm run mcp", () => {
  it("default to this service on port 4021 (its secondary site on 4022), no buyer and caps of $1.00 per call and per session", () => {
    const settings = stdioSettingsFromEnv({});
    expect(settings.baseUrl).toBe("http://127.0.0.1:4021");
    expect(settings.secondaryBaseUrl).toBe("http://127.0.0.1:4022");
    expect(stdioSettingsFromEnv({ PORT: "5021", SECONDARY_PORT: "5022" })).toMatchObject({
      baseUrl: "http://127.0.0.1:5021",
      secondaryBaseUrl: "http://127.0.0.1:5022",
    });
    expect(stdioSettingsFromEnv({ SECONDARY_BASE_URL: "https://tools.example.com" }).secondaryBaseUrl).toBe("https://tools.example.com");
    expect(settings.buyer).toBeUndefined();
    expect([settings.caps.maxPerCall, settings.caps.maxSession]).toEqual([1_000_000n, 1_000_000n]);
  });

  it("name every unusable setting at once, never showing the key", () => {
    const read = () =>
      stdioSettingsFromEnv({
        BASE_URL: "ftp://x",
        SECONDARY_BASE_URL: "tools.example.com",
        BUYER_PRIVATE_KEY: "0x1234",
        MCP_MAX_SPEND_USD: "-1",
        MCP_MAX_PRICE_USD: "0.0000001",
      });
    expect(read).toThrow(McpSettingsError);
    expect(read).toThrow(
      'BASE_URL must be an http(s) URL; found "ftp://x"; SECONDARY_BASE_URL must be an http(s) URL; found "tools.example.com"; BUYER_PRIVATE_KEY must be a 32-byte hex private key (its value is not shown); MCP_MAX_SPEND_USD must be a USD amount like 1.00 (at most 6 decimals); found "-1"; MCP_MAX_PRICE_USD must be a USD amount like 1.00 (at most 6 decimals); found "0.0000001"',
    );
  });

  it("read the expected payees, checksumming the EVM one, and refuse ones that are not addresses", () => {
    expect(stdioSettingsFromEnv({}).expectedPayTo).toBeUndefined();
    expect(stdioSettingsFromEnv({}).expectedSolanaPayTo).toBeUndefined();
    const settings = stdioSettingsFromEnv({
      MCP_EXPECTED_PAY_TO: "0x000000000000000000000000000000000000dead",
      MCP_EXPECTED_SOLANA_PAY_TO: "11111111111111111111111111111111",
    });
    expect(settings.expectedPayTo).toBe("0x000000000000000000000000000000000000dEaD");
    expect(settings.expectedSolanaPayTo).toBe("11111111111111111111111111111111");
    expect(() => stdioSettingsFromEnv({ MCP_EXPECTED_PAY_TO: "0x1234", MCP_EXPECTED_SOLANA_PAY_TO: "0x1234" })).toThrow(
      'MCP_EXPECTED_PAY_TO must be an EVM address (0x + 40 hex digits); found "0x1234"; MCP_EXPECTED_SOLANA_PAY_TO must be a Solana address (base58 of 32 bytes); found "0x1234"',
    );
  });

  it("refuse to offer two sites' routes whose tool names clash", () => {
    const clashing = baseToolsRoutes.map((r) => (r.operationId === "v1WalletProfile" ? { ...r, operationId: "getPricing" } : r));
    const make = () =>
      createStdioServer({
        routes,
        baseUrl: service.url,
        secondary: { routes: clashing, baseUrl: service.secondaryUrl as string },
        buyer: undefined,
        caps: new SpendCaps({ maxPerCall: 1_000_000n, maxSession: 1_000_000n }),
      });
    expect(make).toThrow(ToolNameClashError);
    expect(make).toThrow("Two routes give the MCP tool name getPricing");
  });

  it("without a buyer key, answer a paid tool with a tool error and send nothing", async () => {
    const sent: string[] = [];
    const server = createStdioServer({
      routes,
      baseUrl: service.url,
      buyer: undefined,
      caps: new SpendCaps({ maxPerCall: 1_000_000n, maxSession: 1_000_000n }),
      fetch: (input, init) => {
        sent.push(new Request(input, init).url);
        return fetch(input, init);
      },
    });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: "mcp-test", version: "1.0.0" });
    await client.connect(clientSide);
    try {
      const result = (await client.callTool({ name: "askKb", arguments: { question: "what is x402?" } })) as CallToolResult;
      const message = "askKb costs $0.03 per call; set BUYER_PRIVATE_KEY to let this MCP server pay. Nothing was paid.";
      expect(result).toEqual({
        isError: true,
        content: [{ type: "text", text: message }],
        structuredContent: { error: { code: "buyer_key_missing", message } },
      });
      expect(sent).toEqual([]);
    } finally {
      await client.close();
    }
  });
});

/** An MCP client of `POST /mcp` of the site at `origin` (default the primary), paying through `_meta` as the x402 MCP transport describes. */
async function remoteClient(origin: string = service.url): Promise<Client> {
  const client = new Client({ name: "mcp-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${origin}/mcp`)));
  return client;
}

/** A payment for the `PaymentRequired` of an unpaid tool result, made by @x402/core's client. */
async function paymentFor(account: PrivateKeyAccount, unpaid: CallToolResult): Promise<PaymentPayload> {
  const payer = new x402Client();
  registerExactEvmScheme(payer, { signer: account });
  return payer.createPaymentPayload(unpaid.structuredContent as unknown as PaymentRequired);
}

describe("POST /mcp: the remote MCP endpoint", () => {
  let client: Client;
  beforeAll(async () => {
    client = await remoteClient();
  });
  afterAll(() => client.close());

  it("lists every route as a tool", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(routes.map((r) => r.operationId));
  });

  it("answers an unpaid call of a paid tool with the route's PaymentRequired, as an error result", async () => {
    const result = (await client.callTool({ name: "verifyPayment", arguments: { tx_hash: unknownTx } })) as CallToolResult;
    const challenge = await challengeOf(`${service.url}/api/payment-verify`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ tx_hash: unknownTx }),
    });
    expect(result.isError).toBe(true);
    expect(withoutFreshSignIn(result.structuredContent)).toEqual(withoutFreshSignIn(challenge));
    const [text] = result.content as { type: string; text: string }[];
    expect(withoutFreshSignIn(JSON.parse(text?.text as string))).toEqual(withoutFreshSignIn(challenge));
    expect(settlementOf(result)).toBeUndefined();
  });

  it("settles a payment sent in _meta exactly once, however often the same call is retried", async () => {
    const buyer = buyerAccount(4);
    const payTo = devnet().payTo;
    const [buyerBefore, payToBefore] = [await usdcBalance(buyer.address), await usdcBalance(payTo)];
    const call = { name: "verifyPayment", arguments: { tx_hash: unknownTx } };
    const payment = await paymentFor(buyer, (await client.callTool(call)) as CallToolResult);

    const paid = (await client.callTool({ ...call, _meta: { "x402/payment": payment } })) as CallToolResult;
    expect(paid.isError).toBeUndefined();
    expect(paid.structuredContent).toEqual(unknownTxAnswer);
    const settlement = settlementOf(paid);
    expect(settlement).toMatchObject({ success: true, network: base.id, payer: buyer.address });
    expect(await transfersOf(settlement?.transaction as string)).toEqual([[buyer.address, payTo, PRICE]]);
    expect(await usdcBalance(buyer.address)).toBe(buyerBefore - PRICE);

    const again = (await client.callTool({ ...call, _meta: { "x402/payment": payment } })) as CallToolResult;
    expect(again.structuredContent).toEqual(unknownTxAnswer);
    expect(settlementOf(again)).toMatchObject({ success: true, transaction: settlement?.transaction, payer: buyer.address });
    expect(await usdcBalance(buyer.address)).toBe(buyerBefore - PRICE);
    expect(await usdcBalance(payTo)).toBe(payToBefore + PRICE);
  });

  it("does not charge a paid call that the route rejects", async () => {
    const buyer = buyerAccount(3);
    const before = await usdcBalance(buyer.address);
    const call = { name: "verifyPayment", arguments: { tx_hash: "not-a-hash" } };
    const valid = { name: "verifyPayment", arguments: { tx_hash: unknownTx } };
    const payment = await paymentFor(buyer, (await client.callTool(valid)) as CallToolResult);

    // Checked before charged: the unpaid call is refused as the paid one is, before any challenge.
    expect(await client.callTool(call)).toMatchObject({ isError: true, structuredContent: { error: { code: "invalid_request" } } });
    const result = (await client.callTool({ ...call, _meta: { "x402/payment": payment } })) as CallToolResult;
    const error = {
      error: {
        code: "invalid_request",
        message: "Invalid request: body.tx_hash (transaction hash: 0x followed by 64 hex digits).",
        details: {
          fields: [{ field: "body.tx_hash", expected: "transaction hash: 0x followed by 64 hex digits", received: "not-a-hash" }],
        },
        docs: "/errors#invalid_request",
      },
    };
    expect(result).toEqual({ isError: true, structuredContent: error, content: [{ type: "text", text: JSON.stringify(error) }] });
    expect(await usdcBalance(buyer.address)).toBe(before);
  });

  it("answers a free tool without payment", async () => {
    const result = (await client.callTool({ name: "getPricing", arguments: {} })) as CallToolResult;
    expect(result.isError).toBeUndefined();
    expect(result.structuredContent).toEqual(await (await fetch(`${service.url}/api/pricing`)).json());
  });

  it("answers GET with 405 (stateless: no SSE stream)", async () => {
    const res = await fetch(`${service.url}/mcp`, { headers: { accept: "text/event-stream" } });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("POST");
    expect((await res.json()) as unknown).toMatchObject({ error: { code: "method_not_allowed" } });
  });

  it("answers DELETE (no sessions to end) with 405 naming POST", async () => {
    const res = await fetch(`${service.url}/mcp`, { method: "DELETE" });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("POST");
  });
});

describe("POST /mcp on the secondary site", () => {
  let client: Client;
  let secondary: string;
  beforeAll(async () => {
    secondary = service.secondaryUrl as string;
    client = await remoteClient(secondary);
  });
  afterAll(() => client.close());

  it("lists the secondary site's routes only", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(baseToolsRoutes.map((r) => r.operationId));
  });

  it("challenges an unpaid call on the secondary origin at its price, then settles the payment once", async () => {
    const pool = btax();
    const call = { name: "v1HoneypotCheck", arguments: { token: pool.token } };
    const unpaid = (await client.callTool(call)) as CallToolResult;
    const challenge = await challengeOf(`${secondary}/v1/honeypot-check`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ token: pool.token }),
    });
    expect(unpaid.isError).toBe(true);
    expect(withoutFreshSignIn(unpaid.structuredContent)).toEqual(withoutFreshSignIn(challenge));
    expect(challenge).toMatchObject({ resource: { url: `${secondary}/v1/honeypot-check` }, accepts: [{ amount: "50000" }] });

    const buyer = buyerAccount(4);
    const payTo = devnet().payTo;
    const before = await usdcBalance(buyer.address);
    const payment = await paymentFor(buyer, unpaid);
    const paid = (await client.callTool({ ...call, _meta: { "x402/payment": payment } })) as CallToolResult;
    expect(paid.isError).toBeUndefined();
    expect(paid.structuredContent).toMatchObject({ pool: { address: pool.pair, kind: "uniswap_v3" }, buy_tax_pct: 5, verdict: "caution" });
    const settlement = settlementOf(paid);
    expect(await transfersOf(settlement?.transaction as string)).toEqual([[buyer.address, payTo, HONEYPOT_PRICE]]);
    const again = (await client.callTool({ ...call, _meta: { "x402/payment": payment } })) as CallToolResult;
    expect(settlementOf(again)).toMatchObject({ success: true, transaction: settlement?.transaction });
    expect(await usdcBalance(buyer.address)).toBe(before - HONEYPOT_PRICE);
  });
});

/** A challenge without its sign-in's per-challenge fields (a fresh nonce and time in each). */
function withoutFreshSignIn(challenge: unknown): unknown {
  const c = challenge as { extensions?: Record<string, { info?: Record<string, unknown> }> };
  const signIn = c.extensions?.["sign-in-with-x"];
  if (!signIn?.info) return challenge;
  const { nonce: _n, issuedAt: _i, ...info } = signIn.info;
  return { ...c, extensions: { ...c.extensions, "sign-in-with-x": { ...signIn, info } } };
}
