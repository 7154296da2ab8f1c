/**
 * The curated venues and tokens of the token-risk tools, from `content/token-risk.json`: the DEX
 * factories whose pairs and pools are read, and the tokens pools are priced against. Entries are
 * scoped to Base mainnet (`base`) or the seeded local chain (`local`), like the address labels,
 * so a local test factory is never read on Base. A bad file stops the service at start.
 */
import { type Static, Type } from "@sinclair/typebox";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { type Address, getAddress } from "viem";
import venuesFile from "../../content/token-risk.json" with { type: "json" };
import { Address as AddressText, ClosedObject } from "../../spec/schemas.ts";

const Networks = Type.Array(Type.Union([Type.Literal("base"), Type.Literal("local")]), { minItems: 1 });

/** The kinds of factory read, by the interface of their pools. */
export const FactoryKind = Type.Union([
  Type.Literal("uniswap_v2"),
  Type.Literal("uniswap_v3"),
  Type.Literal("aerodrome_v2"),
  Type.Literal("aerodrome_cl"),
]);
export type FactoryKind = Static<typeof FactoryKind>;

/** One factory of the file. */
export const FactoryEntry = ClosedObject({
  name: Type.String({ minLength: 1, maxLength: 60 }),
  kind: FactoryKind,
  address: AddressText,
  /** The swap fee of a uniswap_v2 factory's pairs; the others' pools state their own. */
  fee_bps: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000 })),
  networks: Networks,
  source: Type.String({ minLength: 1 }),
});

/** One token of the file. */
export const TokenEntry = ClosedObject({
  symbol: Type.String({ minLength: 1, maxLength: 20 }),
  address: AddressText,
  decimals: Type.Integer({ minimum: 0, maximum: 36 }),
  /** Pools are priced against it (its USD price is known), so its pairs with unknown tokens are "new token" pairs. */
  quote: Type.Boolean(),
  /** The USD peg of a stablecoin; null for anything else. */
  peg_usd: Type.Union([Type.Number({ exclusiveMinimum: 0 }), Type.Null()]),
  /** Answered by the price-equilibrium tool when no token is named. */
  default: Type.Boolean(),
  networks: Networks,
  source: Type.String({ minLength: 1 }),
});

const VenuesFile = ClosedObject({ description: Type.String(), factories: Type.Array(FactoryEntry), tokens: Type.Array(TokenEntry) });

/** A factory as the tools use it: its entry of the file, the address checksummed. */
export type Factory = Omit<Static<typeof FactoryEntry>, "address" | "networks" | "source"> & { address: Address };

/** A curated token as the tools use it: its entry of the file, the address checksummed. */
export type KnownToken = Omit<Static<typeof TokenEntry>, "address" | "networks" | "source"> & { address: Address };

/** The venues and tokens of one network. */
export interface Venues {
  factories: Factory[];
  tokens: KnownToken[];
  /** A curated token by address (checksummed). */
  token(address: Address): KnownToken | undefined;
}

/** Check the file; throws one error listing every problem. */
export function parseVenues(file: unknown, where = "content/token-risk.json"): Static<typeof VenuesFile> {
  const check = TypeCompiler.Compile(VenuesFile);
  if (!check.Check(file)) {
    const problems = [...check.Errors(file)].slice(0, 20).map((e) => `${e.path || "/"}: ${e.message}`);
    throw new Error(`${where} is invalid:\n  ${problems.join("\n  ")}`);
  }
  const problems: string[] = [];
  file.factories.forEach((f, i) => {
    if (f.kind === "uniswap_v2" && f.fee_bps === undefined) problems.push(`/factories/${i}/fee_bps: required for a uniswap_v2 factory`);
  });
  for (const network of ["base", "local"] as const) {
    const seen = new Set<string>();
    file.tokens.forEach((t, i) => {
      if (!t.networks.includes(network)) return;
      const key = t.address.toLowerCase();
      if (seen.has(key)) problems.push(`/tokens/${i}: ${t.address} is listed twice on ${network}`);
      seen.add(key);
    });
  }
  if (problems.length > 0) throw new Error(`${where} is invalid:\n  ${problems.join("\n  ")}`);
  return file;
}

const byNetwork = new Map<string, Venues>();

/** The venues of `network` (`base` in production, `local` on the seeded devnet). */
export function venuesFor(network: "base" | "local"): Venues {
  let found = byNetwork.get(network);
  if (!found) {
    const file = parseVenues(venuesFile);
    const tokens = file.tokens.filter((t) => t.networks.includes(network)).map((t) => ({ ...t, address: getAddress(t.address) }));
    const byAddress = new Map(tokens.map((t) => [t.address, t]));
    found = {
      factories: file.factories.filter((f) => f.networks.includes(network)).map((f) => ({ ...f, address: getAddress(f.address) })),
      tokens,
      token: (address) => byAddress.get(getAddress(address)),
    };
    byNetwork.set(network, found);
  }
  return found;
}
