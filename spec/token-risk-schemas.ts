/**
 * The honeypot simulation's answer, shared by `POST /v1/honeypot-check`, `POST /api/token-check`
 * (its `simulation`) and the new-pair hunter's verdicts: every input of the verdict is shown.
 */
import { type Static, Type } from "@sinclair/typebox";
import { Address, Literals, Nullable } from "./schemas.ts";

/** A decimal number written as a string, exact (e.g. token amounts). */
export const DecimalString = Type.String({ pattern: "^-?[0-9]+(\\.[0-9]+)?$", description: "decimal number as a string, exact" });

/** The verdict of the honeypot check, worst first. */
export const RiskVerdict = Literals(["honeypot", "high_tax", "caution", "ok"], {
  description:
    "honeypot: a sell or a transfer reverts, or a sell keeps at least half; high_tax: a tax of 10% or more; caution: a smaller tax, owner privileges, a proxy, a limit, a failed buy, thin liquidity or no pool to simulate; ok: none of these",
});
export type RiskVerdict = Static<typeof RiskVerdict>;

/** The simulation's answer. */
export const HoneypotSimulation = Type.Object({
  token: Address,
  pool: Nullable(
    Type.Object({
      address: Address,
      dex: Type.String({ description: "the factory's name in the curated list" }),
      kind: Type.String({ description: "uniswap_v2 or aerodrome_v2: the pools a buy and a sell are simulated through" }),
      quote_symbol: Type.String(),
      quote: Address,
      fee_bps: Type.Number(),
      liquidity_usd: Type.Number({
        description:
          "twice the quote side's value in USD (concentrated liquidity: the quote side of the liquidity in range at the price, at most what the pool holds)",
      }),
    }),
    {
      description:
        "the pool traded through: the deepest of the token (v2-style or concentrated liquidity, by liquidity_usd); null when it has none on the curated factories",
    },
  ),
  pools_found: Type.Integer({ description: "pools of the token on the curated factories, of every kind" }),
  amount_in: Nullable(
    Type.Object({
      quote_symbol: Type.String(),
      amount: DecimalString,
      usd: Type.Number(),
      capped: Type.Boolean({ description: "true when amount_usd was more than 10% of the pool's quote reserve and was reduced to it" }),
    }),
  ),
  can_buy: Nullable(Type.Boolean()),
  can_sell: Nullable(Type.Boolean()),
  can_transfer: Nullable(Type.Boolean()),
  buy_tax_pct: Nullable(Type.Number(), { description: "1 - tokens received / tokens the pool sent, in percent" }),
  sell_tax_pct: Nullable(Type.Number(), { description: "1 - tokens that reached the pool / tokens sold, in percent" }),
  transfer_tax_pct: Nullable(Type.Number(), {
    description: "1 - tokens received / tokens sent between two fresh addresses, in percent",
  }),
  buy_revert_reason: Nullable(Type.String()),
  sell_revert_reason: Nullable(Type.String()),
  transfer_revert_reason: Nullable(Type.String()),
  limits: Type.Object({
    max_transaction: Nullable(DecimalString, { description: "declared maximum transaction, in tokens" }),
    max_wallet: Nullable(DecimalString, { description: "declared maximum wallet size, in tokens" }),
    hit: Type.Boolean({ description: "the simulated buy was above a declared limit" }),
  }),
  owner_privileges: Type.Object({
    owner: Nullable(Address),
    renounced: Type.Boolean({
      description: "owner() or getOwner() answers the zero address; false when neither answers (who holds a privilege is then unknown)",
    }),
    proxy: Nullable(Type.Object({ standard: Type.String(), implementation: Nullable(Address) })),
    privileges: Type.Array(
      Type.Object({
        privilege: Literals(["mint", "blacklist", "pause", "set_fee"]),
        signature: Type.String(),
        selector: Type.String({ pattern: "^0x[0-9a-f]{8}$" }),
        found_in: Literals(["token", "implementation"]),
      }),
      { description: "privileged functions whose selectors the bytecode (and a proxy's implementation) dispatches" },
    ),
  }),
  verdict: RiskVerdict,
  reasons: Type.Array(Type.String(), { description: "every finding behind the verdict" }),
  simulated_at_block: Type.Integer(),
});
export type HoneypotSimulation = Static<typeof HoneypotSimulation>;

/** The same numbers the answers quote, for tests and the docs. */
export const RISK_THRESHOLDS = {
  /** A tax at or above this is high_tax. */
  highTaxPct: 10,
  /** A sell that keeps at least this share is a honeypot. */
  honeypotSellTaxPct: 50,
  /** A tax above this (and below high) is worth a caution. */
  cautionTaxPct: 0.5,
  /** Thin liquidity: below this in USD. */
  minLiquidityUsd: 1_000,
  /** The simulated buy is at most this share of the pool's quote reserve. */
  maxShareOfReserve: 0.1,
} as const;
