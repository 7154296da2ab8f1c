/**
 * The routes of the Solana site (`/v1/` on its own origin): token-risk and market tools read on
 * Solana, paid in USDC on Solana. Same paths and prices as the Base site's; the answers read
 * SPL Token and Token-2022 accounts instead of EVM contracts.
 */

import { Type } from "@sinclair/typebox";
import { defineRoute, type RouteDef } from "../route.ts";
import { ClosedObject, Literals, Nullable } from "../schemas.ts";
import { RiskVerdict } from "../token-risk-schemas.ts";
import { defiSentiment, Methodology, UPSTREAM_ERRORS } from "./analytics.ts";

/** A Solana address: base58, 32 to 44 characters. */
export const SolanaAddress = Type.String({
  pattern: "^[1-9A-HJ-NP-Za-km-z]{32,44}$",
  description: "a Solana address (base58)",
  examples: ["EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"],
});

/** A mint's own risk, read from its account. */
export const MintRisk = Type.Object({
  program: Literals(["spl-token", "spl-token-2022"]),
  decimals: Type.Integer(),
  supply: Type.String({ description: "atomic units" }),
  mint_authority: Nullable(SolanaAddress, { description: "who can mint more; null: revoked" }),
  freeze_authority: Nullable(SolanaAddress, {
    description: "who can freeze any holder's account (so it cannot sell); null: none",
  }),
  extensions: Type.Object({
    transfer_fee_bps: Nullable(Type.Integer(), {
      description: "Token-2022 transfer fee in force now (this epoch), in basis points; null: none",
    }),
    transfer_fee_max: Nullable(Type.String(), { description: "the most one transfer pays now, atomic; 0: no fee is charged" }),
    transfer_fee_pending: Nullable(
      Type.Object({
        bps: Type.Integer(),
        max: Type.String({ description: "atomic" }),
        from_epoch: Type.Integer({ description: "the epoch it is in force from" }),
      }),
      { description: "a fee set but not yet in force (Token-2022 applies a new fee two epochs on); null: none" },
    ),
    transfer_hook_program: Nullable(SolanaAddress, {
      description: "a program run on every transfer, which can refuse it",
    }),
    permanent_delegate: Nullable(SolanaAddress, { description: "an address that can move or burn anyone's tokens" }),
    non_transferable: Type.Boolean(),
    default_account_state: Type.Union([Type.Literal("initialized"), Type.Literal("frozen"), Type.Null()], {
      description: "frozen: every new holder's account starts frozen",
    }),
    paused: Type.Boolean({ description: "Token-2022 pausable: every transfer is stopped" }),
    pause_authority: Nullable(SolanaAddress, { description: "who can pause every transfer; null: none" }),
  }),
  top10_share_pct: Nullable(Type.Number()),
  largest_holder_share_pct: Nullable(Type.Number()),
});

/** The verdict's vocabulary, shared with the Base site. */
export const SOLANA_VERDICT_RULES = {
  honeypot: "non-transferable, accounts frozen by default, paused, or a live freeze or pause authority: a holder may be unable to sell",
  high_tax:
    "a transfer fee taking 10% or more of a 100 USD trade (the Base site's default test buy), in force now or pending (in force within two epochs): Token-2022 charges min(amount x bps / 10,000 rounded up, the fee's maximum), the trade sized at the price of the mint's deepest pair; with no price, a rate of 10% (1,000 bps) or more",
  caution:
    "a smaller transfer fee that charges something (rate and maximum above 0, in force or pending), a transfer hook, a permanent delegate, a live mint authority, the top 10 holders over 80% of supply, or liquidity under min_liquidity_usd",
  ok: "none of these",
} as const;

/** `POST /v1/meme-hunter` on Solana. */
export const solanaMemeHunter = defineRoute({
  method: "POST",
  path: "/v1/meme-hunter",
  operationId: "solanaMemeHunter",
  summary: "New Solana tokens and pairs, each mint's own risk read on chain (authorities, Token-2022 extensions, holders) and a verdict",
  description:
    "The latest token profiles DexScreener lists on Solana, with their deepest pair (dex, liquidity, price, age). For each mint, read on Solana: mint authority and freeze authority (live or revoked; a live freeze authority can freeze a holder: the Solana honeypot), Token-2022 extensions (the transfer fee in force this epoch and any pending one, each judged by what a 100 USD trade pays under its maximum, transfer hook, permanent delegate, non-transferable, frozen default account state, paused and the pause authority), the top holders' share of supply (getTokenLargestAccounts against the supply in the mint account), and a verdict (honeypot, high_tax, caution, ok) with every reason.",
  tags: ["token risk"],
  price: 0.1,
  body: ClosedObject({
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 30, default: 20, description: "tokens listed, default 20" })),
    min_liquidity_usd: Type.Optional(
      Type.Number({ minimum: 0, maximum: 1e12, default: 0, description: "liquidity under this is a caution reason, default 0" }),
    ),
  }),
  response: Type.Object({
    network: Type.String(),
    profiles_listed: Type.Integer({ description: "Solana token profiles in DexScreener's latest list" }),
    tokens: Type.Array(
      Type.Object({
        mint: SolanaAddress,
        symbol: Nullable(Type.String()),
        pair: Nullable(
          Type.Object({
            address: Type.String(),
            dex: Type.String(),
            quote_symbol: Type.String(),
            price_usd: Nullable(Type.Number(), { description: "the mint's USD price on this pair, whichever side it is on" }),
            liquidity_usd: Nullable(Type.Number()),
            volume_24h_usd: Nullable(Type.Number()),
            created_at: Nullable(Type.String()),
            age_minutes: Nullable(Type.Integer()),
          }),
        ),
        risk: Nullable(MintRisk, { description: "null: the address is not a mint on this chain" }),
        verdict: RiskVerdict,
        verdict_reasons: Type.Array(Type.String()),
      }),
    ),
    verdict_rules: Type.Record(Type.String(), Type.String()),
    methodology: Methodology,
  }),
  errors: [...UPSTREAM_ERRORS],
  example: { input: { limit: 20 } },
});

const PegStatus = Literals(["on_peg", "drifting", "depegged"]);

/** `POST /v1/dinalibrium` on Solana. */
export const solanaDinalibrium = defineRoute({
  method: "POST",
  path: "/v1/dinalibrium",
  operationId: "solanaDinalibrium",
  summary:
    "Price equilibrium on Solana: a token's price on each Raydium, Orca and Meteora pair, its deviation from the liquidity-weighted price, and peg status",
  description:
    "For a token (a mint address or SOL, USDC, USDT; default SOL and USDC), every DexScreener pair of it on Solana's Raydium, Orca and Meteora venues: the USD price it implies, its liquidity, its deviation in basis points from the liquidity-weighted price of all of them; for stablecoins a peg status per pair and overall (on_peg under 10 bps from 1 USD, drifting under 100 bps, depegged); and the widest gap between two pairs.",
  tags: ["token risk"],
  price: 0.1,
  body: ClosedObject({
    token: Type.Optional(
      Type.String({
        // The symbols are the route's own (functions/solana-dinalibrium.ts), in any case: another is no mint to ask DexScreener for.
        pattern: "^([1-9A-HJ-NP-Za-km-z]{32,44}|[Ss][Oo][Ll]|[Uu][Ss][Dd][CcTt])$",
        description: "a mint address, or SOL, USDC or USDT; default: SOL and USDC",
      }),
    ),
  }),
  response: Type.Object({
    network: Type.String(),
    tokens: Type.Array(
      Type.Object({
        mint: SolanaAddress,
        symbol: Type.String(),
        stablecoin: Type.Boolean(),
        weighted_price_usd: Type.Number({ description: "the pairs' prices weighted by their liquidity" }),
        venues: Type.Array(
          Type.Object({
            pair: Type.String(),
            dex: Type.String(),
            quote_symbol: Type.String(),
            price_usd: Type.Number(),
            liquidity_usd: Type.Number(),
            deviation_bps: Type.Number({ description: "(price / weighted - 1) x 10,000" }),
            peg: Nullable(PegStatus),
          }),
        ),
        peg: Nullable(PegStatus, { description: "stablecoins: of the weighted price against 1 USD" }),
        max_gap_bps: Nullable(Type.Number()),
        max_gap_between: Nullable(Type.Array(Type.String(), { minItems: 2, maxItems: 2 }), {
          description: "the cheaper pair, then the dearer one",
        }),
      }),
    ),
    methodology: Methodology,
  }),
  errors: [...UPSTREAM_ERRORS, "not_found"],
  example: { input: { token: "SOL" } },
});

/** `POST /v1/wallet-profile` on Solana. */
export const solanaWalletProfile = defineRoute({
  method: "POST",
  path: "/v1/wallet-profile",
  operationId: "solanaWalletProfile",
  summary: "Solana wallet profile: SOL and USDC balances, token accounts with USD values, program or not, recent activity and labels",
  description:
    "For a Solana address: SOL (getBalance) and USDC balances, every SPL Token and Token-2022 account it owns with amount and USD value (DexScreener's price of the mint's deepest pair; USDC at 1), whether the address is a program (executable), its latest transactions (getSignaturesForAddress), the labels it carries, and what was not checked.",
  tags: ["chain analytics"],
  price: 0.1,
  body: ClosedObject({ address: SolanaAddress }),
  response: Type.Object({
    address: SolanaAddress,
    network: Type.String(),
    is_program: Type.Boolean(),
    sol: Type.Object({ lamports: Type.String(), amount: Type.Number(), usd: Nullable(Type.Number()) }),
    usdc: Type.Object({ atomic: Type.String(), amount: Type.Number() }),
    token_accounts: Type.Array(
      Type.Object({
        account: SolanaAddress,
        mint: SolanaAddress,
        symbol: Nullable(Type.String()),
        program: Literals(["spl-token", "spl-token-2022"]),
        atomic: Type.String(),
        amount: Type.Number(),
        frozen: Type.Boolean(),
        price_usd: Nullable(Type.Number()),
        usd: Nullable(Type.Number()),
      }),
    ),
    total_usd: Type.Number({ description: "SOL and every token account with a price" }),
    recent_activity: Type.Object({
      transactions: Type.Integer({ description: "transactions found (at most 100)" }),
      latest: Type.Array(
        Type.Object({
          signature: Type.String(),
          slot: Type.Integer(),
          block_time: Nullable(Type.Integer()),
          failed: Type.Boolean(),
        }),
      ),
    }),
    labels: Type.Array(Type.String()),
    not_checked: Type.Array(Type.String()),
    methodology: Methodology,
  }),
  errors: [...UPSTREAM_ERRORS],
  example: { input: { address: "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v" } },
});

/** `POST /v1/defi-sentiment` on Solana: the Base route's method, SOL by default. */
export const solanaDefiSentiment = defineRoute({
  ...defiSentiment,
  path: "/v1/defi-sentiment",
  operationId: "solanaDefiSentiment",
  summary: "DeFi sentiment on Solana (funding, open interest, TVL), scored",
  // Shorter field descriptions than the Base route's: the challenge also carries a fee payer and a blockhash.
  body: ClosedObject({
    asset: Type.Optional(Type.String({ pattern: "^[A-Za-z0-9]{1,20}$", description: "ticker (SOL)" })),
    protocol: Type.Optional(Type.String({ pattern: "^[A-Za-z0-9][A-Za-z0-9.-]{0,63}$", description: "DefiLlama slug" })),
  }),
  example: { input: { asset: "SOL", protocol: "raydium" } },
});

/** The Solana site's routes, in listing order. */
export const solanaRoutes: readonly RouteDef[] = [solanaMemeHunter, solanaDefiSentiment, solanaDinalibrium, solanaWalletProfile];
