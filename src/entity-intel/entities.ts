/**
 * What the entity routes say about an address: its class (a curated venue's class, else the
 * interface probes' class with pairs, pools and routers as `dex`), its curated names and flags,
 * and what they need about tokens (symbol, decimals, price) and USD sums, exact until the
 * last rounding.
 */
import type { Static, TObject } from "@sinclair/typebox";
import { type Address, getAddress, type PublicClient, parseAbi } from "viem";
import type { Described, EntityClass } from "../../spec/routes/entity-intel.ts";
import type { LabelBook } from "../analytics/labels.ts";
import type { PriceSource, TokenPrice } from "../analytics/price-source.ts";
import { type ExactDecimal, parseDecimal, rounded, usdOf } from "../analytics/usd-value.ts";
import { type AddressClassifier, DEX_CLASSES } from "../chain/classify.ts";
import { readMulticall } from "../chain/rpc-error.ts";

/** An address as answers describe it (without the address). */
export type EntityFacts = Omit<Static<TObject<typeof Described>>, "address">;

/** Describe addresses: curated venue class first, else the probe class; names and flags only from the label file. */
export async function describe(
  addresses: readonly Address[],
  labels: LabelBook,
  classifier: AddressClassifier,
): Promise<Map<Address, EntityFacts>> {
  const unique = [...new Set(addresses.map((a) => getAddress(a)))];
  const probed = await classifier.classify(unique.filter((a) => !labels.venueOf(a)));
  const out = new Map<Address, EntityFacts>();
  for (const address of unique) {
    const venue = labels.venueOf(address);
    const probe = probed.get(address);
    const cls: EntityClass = venue
      ? venue.class
      : probe === undefined
        ? "contract"
        : DEX_CLASSES.has(probe)
          ? "dex"
          : (probe as Exclude<typeof probe, "v2_pair" | "v3_pool" | "router">);
    out.set(address, { class: cls, labels: labels.names(address), flags: labels.flags(address) });
  }
  return out;
}

/** The facts of `address` among `facts`; one not described has class `fallback` and no labels or flags. */
export function factsOf(facts: ReadonlyMap<Address, EntityFacts>, address: Address, fallback: EntityClass = "contract"): EntityFacts {
  return facts.get(address) ?? { class: fallback, labels: [], flags: [] };
}

/** Symbol and decimals of a token. */
export interface TokenInfo {
  symbol: string | null;
  decimals: number;
}

const metaAbi = parseAbi(["function symbol() view returns (string)", "function decimals() view returns (uint8)"]);
const knownTokens = new Map<Address, TokenInfo | null>();

/**
 * Symbol and decimals of each token, one Multicall3 batch for the ones not seen before (they
 * never change, so they are kept for the process). A contract that does not answer decimals()
 * is not an ERC-20 and is absent from the map.
 */
export async function tokenInfos(client: PublicClient, tokens: readonly Address[]): Promise<Map<Address, TokenInfo>> {
  const unique = [...new Set(tokens.map((t) => getAddress(t)))];
  const unknown = unique.filter((t) => !knownTokens.has(t));
  if (unknown.length > 0) {
    const answers = await readMulticall("reading token symbols and decimals", () =>
      client.multicall({
        allowFailure: true,
        batchSize: 8_192,
        contracts: unknown.flatMap((address) => [
          { address, abi: metaAbi, functionName: "symbol" } as const,
          { address, abi: metaAbi, functionName: "decimals" } as const,
        ]),
      }),
    );
    unknown.forEach((token, i) => {
      const symbol = answers[2 * i];
      const decimals = answers[2 * i + 1];
      knownTokens.set(
        token,
        decimals?.status === "success"
          ? {
              symbol: symbol?.status === "success" && typeof symbol.result === "string" ? symbol.result : null,
              decimals: Number(decimals.result),
            }
          : null,
      );
    });
    if (knownTokens.size > 50_000) knownTokens.clear();
  }
  const out = new Map<Address, TokenInfo>();
  for (const t of unique) {
    const info = knownTokens.get(t);
    if (info) out.set(t, info);
  }
  return out;
}

/** Current prices of tokens (batched), with each as an exact decimal. */
export async function pricesOf(
  prices: PriceSource,
  tokens: readonly Address[],
): Promise<Map<Address, TokenPrice & { exact: ExactDecimal }>> {
  const found = await prices.prices(tokens);
  return new Map([...found].map(([t, p]) => [t, { ...p, exact: parseDecimal(p.price_usd) }]));
}

/** A USD amount summed exactly over several tokens and rounded once. */
export class UsdSum {
  #total: ExactDecimal = parseDecimal(0);

  /** Add `amount` smallest units of a token with `decimals` at `price`. */
  add(amount: bigint, decimals: number, price: ExactDecimal): this {
    this.#total = this.#total.plus(usdOf(amount, decimals, price));
    return this;
  }

  /** Add each token's amount of `volume` that has decimals and a price; the others are left out. */
  addVolume(
    volume: ReadonlyMap<Address, bigint>,
    infos: ReadonlyMap<Address, TokenInfo>,
    prices: ReadonlyMap<Address, { exact: ExactDecimal }>,
  ) {
    for (const [token, amount] of volume) {
      const info = infos.get(token);
      const price = prices.get(token);
      if (info && price) this.add(amount, info.decimals, price.exact);
    }
    return this;
  }

  /** The sum in USD rounded half-up to the cent (half away from zero for negative sums). */
  usd(): number {
    return rounded(this.#total, 2);
  }
}
