/**
 * The local Solana's JSON-RPC server, spoken to as raw JSON-RPC 2.0 over HTTP: the framing that
 * stock clients rely on (a result per id, batches answered as arrays, the JSON-RPC error codes and
 * the Solana RPC's own `-32002` preflight refusal with its `data`), on the seeded chain.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalSolanaDevnet, startLocalSolana } from "../src/local/solana/devnet.ts";

let chain: LocalSolanaDevnet;

beforeAll(async () => {
  chain = await startLocalSolana({});
});
afterAll(async () => {
  await chain?.stop();
});

const post = (body: string) => fetch(chain.rpcUrl, { method: "POST", headers: { "content-type": "application/json" }, body });
const call = async (body: unknown) => {
  const res = await post(JSON.stringify(body));
  expect(res.status).toBe(200);
  return res.json();
};

describe("the local Solana JSON-RPC server", () => {
  it("answers a request with its id and result, and a batch (even of one) with an array in the same order", async () => {
    expect(await call({ jsonrpc: "2.0", id: 7, method: "getHealth" })).toEqual({ jsonrpc: "2.0", id: 7, result: "ok" });
    expect(await call([{ jsonrpc: "2.0", id: "a", method: "getHealth" }])).toEqual([{ jsonrpc: "2.0", id: "a", result: "ok" }]);
    const batch = (await call([
      { jsonrpc: "2.0", id: 1, method: "getSlot" },
      { jsonrpc: "2.0", id: 2, method: "getBalance", params: [chain.scenario.wallet.address] },
    ])) as { id: number; result: unknown }[];
    expect(batch.map((a) => a.id)).toEqual([1, 2]);
    expect(batch[0]?.result).toBe(chain.chain.slot);
    expect(batch[1]?.result).toEqual({ context: { slot: chain.chain.slot, apiVersion: "2.2.0" }, value: 12_000_000_000 });
  });

  it("refuses with the JSON-RPC codes: -32700 not JSON, -32601 unknown method, -32602 bad params", async () => {
    expect(await (await post("{not json")).json()).toEqual({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error" } });
    const unknown = (await call({ jsonrpc: "2.0", id: 1, method: "toString" })) as { error: { code: number } };
    expect(unknown.error.code).toBe(-32601);
    expect(await call({ jsonrpc: "2.0", id: 2, method: "getBalance", params: ["short"] })).toEqual({
      jsonrpc: "2.0",
      id: 2,
      error: { code: -32602, message: "Invalid params: an address (base58)" },
    });
    expect(await call({ jsonrpc: "2.0", id: 3, method: "getTokenSupply", params: [chain.scenario.wallet.address] })).toEqual({
      jsonrpc: "2.0",
      id: 3,
      error: { code: -32602, message: "Invalid param: could not find mint" },
    });
    const memcmp = { memcmp: { offset: 0, bytes: "0OIl" } };
    expect(
      await call({
        jsonrpc: "2.0",
        id: 4,
        method: "getProgramAccounts",
        params: ["TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA", { filters: [memcmp] }],
      }),
    ).toEqual({
      jsonrpc: "2.0",
      id: 4,
      error: { code: -32602, message: "Invalid params: not base58: 0OIl" },
    });
  });

  it("filters program accounts by a base58 memcmp", async () => {
    // The USDC token accounts whose mint (offset 0) is USDC: payTo's, the buyers' and the profiled wallet's.
    const filters = [{ dataSize: 165 }, { memcmp: { offset: 0, bytes: chain.scenario.usdcMint } }];
    const answer = (await call({
      jsonrpc: "2.0",
      id: 1,
      method: "getProgramAccounts",
      params: ["TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA", { filters }],
    })) as { result: unknown[] };
    expect(answer.result).toHaveLength(1 + chain.scenario.buyers.length + 1);
  });

  it("refuses a transaction sent twice with -32002 and the preflight's data, as the Solana RPC does", async () => {
    const [first] = (await call({
      jsonrpc: "2.0",
      id: 1,
      method: "getSignaturesForAddress",
      params: [chain.scenario.wallet.address, { limit: 1 }],
    }).then((a) => (a as { result: { signature: string }[] }).result)) as { signature: string }[];
    const tx = (await call({
      jsonrpc: "2.0",
      id: 2,
      method: "getTransaction",
      params: [first?.signature, { encoding: "base64" }],
    })) as { result: { transaction: [string, string] } };
    const again = await call({
      jsonrpc: "2.0",
      id: 3,
      method: "sendTransaction",
      params: [tx.result.transaction[0], { encoding: "base64" }],
    });
    expect(again).toEqual({
      jsonrpc: "2.0",
      id: 3,
      error: {
        code: -32002,
        message: "Transaction simulation failed: This transaction has already been processed",
        data: { err: "AlreadyProcessed", logs: [] },
      },
    });
  });

  it("answers only POST", async () => {
    const res = await fetch(chain.rpcUrl);
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("POST");
  });
});
