/**
 * A local stand-in for the facilitator the zoo's library sellers talk to while they build their
 * 402 answers (none of them settles anything in the zoo): `GET /supported` as x402.org's
 * facilitator answers it (EVM kinds without extra, a Solana kind with its fee payer), and
 * `POST /accepts` as a faremeter facilitator does, filling in the EIP-712 domain of USDC.
 */

import { base } from "../../../src/networks/base.ts";
import { type Stub, startStub } from "../stub-server.ts";

/** USDC on Base. */
export const BASE_USDC = base.usdc.address;
/** USDC's mint on Solana mainnet. */
export const SOLANA_USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
/** The fee payer the stand-in names for Solana. */
export const SOLANA_FEE_PAYER = "2wKupLR9q6wXYppw8Gr2NvWxKBUqm4PPJKkQfoxHDBg4";

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Start the stand-in facilitator on 127.0.0.1. */
export function startZooFacilitator(): Promise<Stub> {
  return startStub((req, res, body) => {
    res.setHeader("content-type", "application/json");
    const path = (req.url ?? "/").split("?")[0];
    if (req.method === "GET" && path === "/supported") {
      res.end(
        JSON.stringify({
          kinds: [
            { x402Version: 2, scheme: "exact", network: base.id },
            { x402Version: 2, scheme: "exact", network: "eip155:137" },
            { x402Version: 1, scheme: "exact", network: "base" },
            { x402Version: 2, scheme: "exact", network: "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp", extra: { feePayer: SOLANA_FEE_PAYER } },
          ],
          extensions: [],
          signers: {},
        }),
      );
      return;
    }
    if (req.method === "POST" && path === "/accepts" && isObject(body) && Array.isArray(body.accepts)) {
      const accepts = body.accepts.map((a: unknown) =>
        isObject(a) && typeof a.asset === "string" && a.asset.toLowerCase() === BASE_USDC.toLowerCase()
          ? { ...a, extra: { name: "USD Coin", version: "2", ...(isObject(a.extra) ? a.extra : {}) } }
          : a,
      );
      res.end(JSON.stringify({ x402Version: 2, resource: body.resource ?? { url: "" }, accepts }));
      return;
    }
    res.statusCode = 404;
    res.end(JSON.stringify({ error: "not found" }));
  });
}
