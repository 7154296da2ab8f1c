/** How each Solana route answers, returned with every answer. */
import type { Methodology } from "../../spec/routes/analytics.ts";

const METHODS: Record<"meme-hunter" | "dinalibrium" | "wallet-profile", Methodology> = {
  "meme-hunter": {
    summary: "DexScreener's latest Solana token profiles, each mint read on Solana itself.",
    steps: [
      "GET DexScreener /token-profiles/latest/v1, keep chainId solana, newest first, at most `limit`",
      "GET /tokens/v1/solana/{mints}: each mint's deepest pair by liquidity",
      "getAccountInfo(mint): mint and freeze authorities, Token-2022 extensions (transfer fee, transfer hook, permanent delegate, non-transferable, default account state)",
      "getTokenLargestAccounts against the supply in the mint account (getAccountInfo): the top 10 and the largest holder's share of supply",
      "transfer fee (in force and pending): Token-2022's fee on a 100 USD trade, min(ceil(amount x bps / 10,000), maximum fee), the amount at the mint's price on its deepest pair that prices it (priceUsd on the base side, priceUsd / priceNative on the quote side) (the cap named in tokens and USD); with no price, the rate alone (said in the reason)",
      "verdict: honeypot, then high_tax, then caution, else ok (verdict_rules)",
    ],
    chain: "Solana mainnet (solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp) through the configured RPC",
    not_checked: [
      "the transfer hook program's code",
      "the pair's own pool accounts (liquidity is DexScreener's)",
      "holders behind token accounts owned by programs (pools, vaults)",
    ],
  },
  dinalibrium: {
    summary: "A token's USD price on each Raydium, Orca and Meteora pair against the liquidity-weighted price of all of them.",
    steps: [
      "GET DexScreener /tokens/v1/solana/{mint}: pairs where the token is the base side, on raydium, orca or meteora, with liquidity",
      "weighted price: sum(price x liquidity) / sum(liquidity)",
      "each pair's deviation in bps from it; for stablecoins the peg status of each pair and of the weighted price against 1 USD",
    ],
    prices: "DexScreener's priceUsd of each pair",
    not_checked: ["pool fees", "prices read from the pools' own accounts", "venues other than Raydium, Orca and Meteora"],
  },
  "wallet-profile": {
    summary: "A Solana address's balances, token accounts, activity and labels, read through the RPC.",
    steps: [
      "getAccountInfo: whether it is a program (executable)",
      "getBalance: SOL",
      "getTokenAccountsByOwner under SPL Token and Token-2022 (jsonParsed): every token account with its amount",
      "USD values: USDC at 1, SOL and other mints at their price on their deepest DexScreener pair that prices them, on either side",
      "getSignaturesForAddress (100): recent activity",
    ],
    chain: "Solana mainnet through the configured RPC",
    not_checked: ["stake accounts", "NFTs", "DeFi positions"],
  },
};

export function solanaMethodology(endpoint: keyof typeof METHODS): Methodology {
  const m = METHODS[endpoint];
  return { ...m, steps: [...m.steps], not_checked: [...m.not_checked] };
}
