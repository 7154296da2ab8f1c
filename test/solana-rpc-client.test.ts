/**
 * The service's Solana RPC client (src/solana/rpc.ts, kit's RPC over undici's `request`) answers
 * what kit's stock client (`createSolanaRpc`, over fetch) answers, bigints included, and fails the
 * same way: a JSON-RPC error and an HTTP error are the same `SolanaError`.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import { type Address, createSolanaRpc, isSolanaError, SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR, type SolanaError } from "@solana/kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalSolanaDevnet, startLocalSolana } from "../src/local/solana/devnet.ts";
import { ataOf } from "../src/local/solana/scenario.ts";
import { solanaRpc } from "../src/solana/rpc.ts";

let chain: LocalSolanaDevnet;
let overloaded: Server;
let overloadedUrl: string;
let compressing: Server;
let compressingUrl: string;
/** The accept-encoding of the last request the compressing RPC got. */
let asked: string | undefined;

beforeAll(async () => {
  chain = await startLocalSolana({});
  overloaded = createServer((_req, res) => res.writeHead(503, { "content-type": "text/plain" }).end("overloaded"));
  await new Promise<void>((resolve) => overloaded.listen(0, "127.0.0.1", resolve));
  overloadedUrl = `http://127.0.0.1:${(overloaded.address() as AddressInfo).port}`;
  // An RPC provider that gzips its answers when asked: getSlot answers a slot past 2^53.
  compressing = createServer((req, res) => {
    asked = req.headers["accept-encoding"];
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () => {
      const { id } = JSON.parse(body) as { id: unknown };
      const answer = `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":9007199254740993}`;
      const gzip = /gzip/.test(asked ?? "");
      res.writeHead(200, { "content-type": "application/json", ...(gzip ? { "content-encoding": "gzip" } : {}) });
      res.end(gzip ? gzipSync(answer) : answer);
    });
  });
  await new Promise<void>((resolve) => compressing.listen(0, "127.0.0.1", resolve));
  compressingUrl = `http://127.0.0.1:${(compressing.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => overloaded?.close(resolve));
  await new Promise((resolve) => compressing?.close(resolve));
  await chain?.stop();
});

/** The rejection of `p`, as a SolanaError's code and context. */
async function failure(p: Promise<unknown>): Promise<{ code: number; statusCode?: unknown }> {
  const error = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(isSolanaError(error)).toBe(true);
  const { __code, statusCode } = (error as SolanaError).context as { __code: number; statusCode?: unknown };
  return { code: __code, statusCode };
}

describe("solanaRpc", () => {
  it("answers exactly what kit's stock client answers on the seeded chain", async () => {
    const s = chain.scenario;
    const ours = solanaRpc(chain.rpcUrl);
    const kit = createSolanaRpc(chain.rpcUrl);
    const payToAta = await ataOf(s.payTo as Address, s.usdcMint as Address);
    const reads = [
      (rpc: typeof ours) => rpc.getBalance(s.feePayer.address).send(),
      (rpc: typeof ours) => rpc.getAccountInfo(s.usdcMint as Address, { encoding: "base64" }).send(),
      (rpc: typeof ours) => rpc.getTokenAccountBalance(payToAta).send(),
      (rpc: typeof ours) => rpc.getTokenSupply(s.usdcMint as Address).send(),
      (rpc: typeof ours) => rpc.getTokenLargestAccounts(s.usdcMint as Address).send(),
    ];
    for (const read of reads) expect(await read(ours)).toEqual(await read(kit));
    // u64 values stay bigints, as kit's own parser reads them.
    const balance = await ours.getBalance(s.feePayer.address).send();
    expect(typeof balance.value).toBe("bigint");
    expect(balance.value > 0n).toBe(true);
  });

  it("fails a JSON-RPC error as kit does", async () => {
    const bad = "not-an-address" as Address;
    const ours = await failure(solanaRpc(chain.rpcUrl).getAccountInfo(bad).send());
    const kit = await failure(createSolanaRpc(chain.rpcUrl).getAccountInfo(bad).send());
    expect(ours).toEqual(kit);
    expect(ours.code).toBe(-32602);
  });

  it("fails an HTTP error as kit does: its transport error with the status", async () => {
    const ours = await failure(solanaRpc(overloadedUrl).getSlot().send());
    const kit = await failure(createSolanaRpc(overloadedUrl).getSlot().send());
    expect(ours).toEqual({ code: SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR, statusCode: 503 });
    expect(kit).toEqual(ours);
  });

  it("asks for compressed answers and reads a gzipped one, u64 past 2^53 exact", async () => {
    expect(await solanaRpc(compressingUrl).getSlot().send()).toBe(9007199254740993n);
    expect(asked).toMatch(/gzip/);
    expect(await createSolanaRpc(compressingUrl).getSlot().send()).toBe(9007199254740993n);
  });
});
