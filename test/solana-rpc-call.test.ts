/**
 * A Solana RPC call of the site's reads past its time budget is a 504 upstream_timeout (the
 * request aborted), one the RPC rate-limits a 503 with its Retry-After, one it fails or answers in
 * the wrong shape a 502 upstream_error, all naming the Solana RPC.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Address } from "@solana/kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rpcCall } from "../src/solana/reads.ts";
import { solanaRpc } from "../src/solana/rpc.ts";

const MINT = "So11111111111111111111111111111111111111112" as Address;

let rpcServer: Server;
let rpcUrl: string;
/** Requests the server holds without answering, closed once the client gives up. */
let abandoned = 0;

beforeAll(async () => {
  rpcServer = createServer((req, res) => {
    if (req.url === "/hang") {
      req.on("close", () => abandoned++);
      return;
    }
    if (req.url === "/limited") {
      res.writeHead(429, { "retry-after": "9", "content-type": "text/plain" }).end("Too Many Requests");
      return;
    }
    if (req.url?.startsWith("/result/")) {
      // A JSON-RPC answer whose result is the path's JSON, whatever was asked.
      const result = JSON.parse(decodeURIComponent(req.url.slice("/result/".length)));
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", id: 0, result }));
      return;
    }
    res.writeHead(500, { "content-type": "text/plain" }).end("internal error");
  });
  await new Promise<void>((resolve) => rpcServer.listen(0, "127.0.0.1", resolve));
  rpcUrl = `http://127.0.0.1:${(rpcServer.address() as AddressInfo).port}`;
});
afterAll(async () => {
  rpcServer.closeAllConnections();
  await new Promise((resolve) => rpcServer.close(resolve));
});

const readsWithin = (timeoutMs: number) => ({
  settings: { network: "solana:local", rpcUrl, usdcMint: "", dexscreenerUrl: "", timeoutMs },
});

describe("rpcCall", () => {
  it("past the time budget: a 504 upstream_timeout naming the Solana RPC, the request aborted", async () => {
    // The service's own client: the abort reaches the request only if it passes the signal on.
    const rpc = solanaRpc(`${rpcUrl}/hang`);
    const error = await rpcCall(readsWithin(100), "getEpochInfo", rpc.getEpochInfo()).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "upstream_timeout", status: 504, details: { upstream: "solana-rpc" } });
    expect((error as Error).message).toBe("The Solana RPC did not answer getEpochInfo in time.");
    for (let i = 0; i < 40 && abandoned === 0; i++) await new Promise((r) => setTimeout(r, 25));
    expect(abandoned).toBe(1);
  });

  it("a failure of the RPC: a 502 upstream_error naming the Solana RPC", async () => {
    const rpc = solanaRpc(rpcUrl);
    const error = await rpcCall(readsWithin(5_000), "getEpochInfo", rpc.getEpochInfo()).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "upstream_error", status: 502, details: { upstream: "solana-rpc" } });
    expect((error as Error).message).toBe("The Solana RPC failed getEpochInfo.");
  });

  it("rate-limited (429, Retry-After: 9): a 503 unavailable naming the Solana RPC, passing the wait on", async () => {
    const rpc = solanaRpc(`${rpcUrl}/limited`);
    const error = await rpcCall(readsWithin(5_000), "getBalance", rpc.getBalance(MINT)).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "unavailable", status: 503, details: { upstream: "solana-rpc" }, headers: { "Retry-After": "9" } });
    expect((error as Error).message).toBe("The Solana RPC is rate-limiting us while reading getBalance; retry in 9 s.");
  });

  // An account of the wrong shape read as "no such account" made meme-hunter answer 200 and charge;
  // a null one made the readers throw a TypeError (a 500).
  it.each([
    ["getAccountInfo", { weird: true }, (rpc: ReturnType<typeof solanaRpc>) => rpc.getAccountInfo(MINT, { encoding: "base64" })],
    ["getAccountInfo", null, (rpc: ReturnType<typeof solanaRpc>) => rpc.getAccountInfo(MINT, { encoding: "base64" })],
    [
      "getTokenLargestAccounts",
      { context: { slot: 1 }, value: null },
      (rpc: ReturnType<typeof solanaRpc>) => rpc.getTokenLargestAccounts(MINT),
    ],
    ["getEpochInfo", "0x1", (rpc: ReturnType<typeof solanaRpc>) => rpc.getEpochInfo()],
  ] as const)("%s answered with %j: a 502 upstream_error naming the Solana RPC", async (method, result, call) => {
    const rpc = solanaRpc(`${rpcUrl}/result/${encodeURIComponent(JSON.stringify(result))}`);
    const error = await rpcCall(readsWithin(5_000), method, call(rpc) as never).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "upstream_error", status: 502, details: { upstream: "solana-rpc" } });
    expect((error as Error).message).toBe(`The Solana RPC answered ${method} in an unexpected shape.`);
  });

  it("an account of the expected shape, and none at all, still pass", async () => {
    const account = {
      context: { slot: 1 },
      value: { owner: "11111111111111111111111111111111", data: ["", "base64"], lamports: 1, executable: false, rentEpoch: 0, space: 0 },
    };
    for (const result of [account, { context: { slot: 1 }, value: null }]) {
      const rpc = solanaRpc(`${rpcUrl}/result/${encodeURIComponent(JSON.stringify(result))}`);
      const answer = await rpcCall(readsWithin(5_000), "getAccountInfo", rpc.getAccountInfo(MINT, { encoding: "base64" }));
      expect(answer.value?.owner ?? null).toBe(result.value ? "11111111111111111111111111111111" : null);
    }
  });
});
