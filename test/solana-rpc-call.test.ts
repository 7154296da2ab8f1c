/**
 * A Solana RPC call of the site's reads past its time budget is a 504 upstream_timeout (the
 * request aborted), and one the RPC fails is a 502 upstream_error, both naming the Solana RPC.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rpcCall } from "../src/solana/reads.ts";
import { solanaRpc } from "../src/solana/rpc.ts";

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
});
