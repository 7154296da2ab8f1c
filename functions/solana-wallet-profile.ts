/** `POST /v1/wallet-profile` on Solana: balances, token accounts with USD values, program or not, activity, labels. */
import { isAddress } from "@solana/kit";
import { solanaWalletProfile } from "../spec/routes/solana.ts";
import { defineFunction } from "../src/context.ts";
import { InvalidRequestError } from "../src/errors.ts";
import { priceOf } from "../src/solana/dexscreener.ts";
import { solanaMethodology } from "../src/solana/methodology.ts";
import { rpcCall, solanaReads, tokenAccountsOf } from "../src/solana/reads.ts";
import { SOLANA_SYMBOLS } from "./solana-dinalibrium.ts";

/** Well-known program addresses, named. */
const PROGRAM_LABELS: Record<string, string> = {
  "11111111111111111111111111111111": "System Program",
  TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA: "SPL Token program",
  TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb: "Token-2022 program",
  ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL: "Associated Token program",
  MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr: "Memo program",
  ComputeBudget111111111111111111111111111111: "Compute Budget program",
};

const LATEST = 10;
const round2 = (n: number) => Math.round(n * 100) / 100;

export default defineFunction(solanaWalletProfile, async (input, ctx) => {
  // The schema's pattern takes any 32 to 44 base58 characters; only those that decode to 32 bytes
  // are addresses. The RPC refuses the others (invalid params), which is the caller's mistake, not
  // an upstream failure.
  if (!isAddress(input.address)) {
    throw new InvalidRequestError(`Invalid request: body.address (${input.address} is not 32 bytes in base58, so not a Solana address).`, [
      { field: "body.address", expected: "a Solana address (base58 of 32 bytes)", received: input.address },
    ]);
  }
  const reads = solanaReads(ctx.solana);
  const { rpc, settings } = reads;
  const address = input.address;
  const [info, balance, accounts, signatures] = await Promise.all([
    rpcCall(reads, "getAccountInfo", rpc.getAccountInfo(address, { encoding: "base64" })),
    rpcCall(reads, "getBalance", rpc.getBalance(address)),
    tokenAccountsOf(reads, address),
    rpcCall(reads, "getSignaturesForAddress", rpc.getSignaturesForAddress(address, { limit: 100 })),
  ]);
  const sol = SOLANA_SYMBOLS.SOL?.mint as string;
  const pairs = await reads.dex.pairsOf([sol, ...accounts.map((a) => a.mint).filter((m) => m !== settings.usdcMint)]);
  const solPrice = priceOf(pairs, sol);
  const lamports = balance.value;
  const solAmount = Number(lamports) / 1e9;
  const tokenAccounts = accounts
    .map((a) => {
      const price = a.mint === settings.usdcMint ? 1 : priceOf(pairs, a.mint);
      const side =
        pairs.find((p) => p.baseToken.address === a.mint)?.baseToken ?? pairs.find((p) => p.quoteToken.address === a.mint)?.quoteToken;
      return {
        account: a.account,
        mint: a.mint,
        symbol: a.mint === settings.usdcMint ? "USDC" : (side?.symbol ?? null),
        program: a.program,
        atomic: a.atomic,
        amount: a.amount,
        frozen: a.frozen,
        price_usd: price,
        usd: price === null ? null : round2(a.amount * price),
      };
    })
    .sort((x, y) => (y.usd ?? -1) - (x.usd ?? -1) || x.account.localeCompare(y.account));
  const usdcAtomic = accounts.filter((a) => a.mint === settings.usdcMint).reduce((s, a) => s + BigInt(a.atomic), 0n);
  const solUsd = solPrice === null ? null : round2(solAmount * solPrice);
  const total = round2((solUsd ?? 0) + tokenAccounts.reduce((s, a) => s + (a.usd ?? 0), 0));
  const isProgram = info.value?.executable ?? false;
  const labels = [
    ...(PROGRAM_LABELS[address] ? [PROGRAM_LABELS[address] as string] : []),
    ...(isProgram ? ["program"] : []),
    ...(info.value === null ? ["no account (never funded, or closed)"] : []),
  ];
  return {
    address,
    network: settings.network,
    is_program: isProgram,
    sol: { lamports: lamports.toString(), amount: solAmount, usd: solUsd },
    usdc: { atomic: usdcAtomic.toString(), amount: Number(usdcAtomic) / 1e6 },
    token_accounts: tokenAccounts,
    total_usd: total,
    recent_activity: {
      transactions: signatures.length,
      latest: signatures.slice(0, LATEST).map((s) => ({
        signature: s.signature,
        slot: Number(s.slot),
        block_time: s.blockTime === null ? null : Number(s.blockTime),
        failed: s.err !== null,
      })),
    },
    labels,
    not_checked: [
      "stake accounts and staked SOL",
      "NFTs and compressed assets",
      "positions inside DeFi programs (liquidity, lending, perps)",
      "tokens without a DexScreener pair are listed without a USD value",
      "activity beyond the latest 100 transactions",
    ],
    methodology: solanaMethodology("wallet-profile"),
  };
});
