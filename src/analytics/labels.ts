/**
 * Curated address labels from `content/labels.json`: the only source of entity names and
 * flags in any answer. Each entry names its source; entries are scoped to Base mainnet
 * (`base`), the seeded local chain (`local`) or both, so a label of a local test wallet can
 * never be shown for the same address on Base. Venue entries (exchanges, bridges, DEX pools
 * and routers, mixers) carry a venue id; several addresses with one id are one cluster (an
 * exchange's hot wallets). Flags (exploit, phishing, mixer, scam) are curated the same way.
 * A bad file stops the service at start with every problem listed.
 */
import { type Static, Type } from "@sinclair/typebox";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { type Address, getAddress } from "viem";
import labelsFile from "../../content/labels.json" with { type: "json" };
import { Flag } from "../../spec/routes/entity-intel.ts";
import { ClosedObject } from "../../spec/schemas.ts";

/** What kind of entity a label names; exchanges and bridges decide whale-watch directions. */
export const LabelCategory = Type.Union(
  [
    Type.Literal("exchange"),
    Type.Literal("bridge"),
    Type.Literal("dex"),
    Type.Literal("mixer"),
    Type.Literal("token"),
    Type.Literal("infrastructure"),
  ],
  { description: "exchange, bridge, dex, mixer, token or infrastructure" },
);
export type LabelCategory = Static<typeof LabelCategory>;

/** A curated warning about an address (the flags the entity answers carry). */
export const FlagKind = { ...Flag, description: "exploit, phishing, mixer or scam" };
export type FlagKind = Static<typeof FlagKind>;

/** The class of a venue, from its label category. */
export type VenueClass = "cex" | "bridge" | "dex" | "mixer";

/** Label categories that are venues, with the class answers give them. */
export const VENUE_CLASS_OF: Partial<Record<LabelCategory, VenueClass>> = { exchange: "cex", bridge: "bridge", dex: "dex", mixer: "mixer" };

const Networks = Type.Array(Type.Union([Type.Literal("base"), Type.Literal("local")]), {
  minItems: 1,
  description: "where the entry holds: base (mainnet) and/or local (the seeded devnet)",
});

/** One entry of content/labels.json. */
export const LabelEntry = ClosedObject({
  address: Type.String({ pattern: "^0x[0-9a-fA-F]{40}$", description: "the labelled address" }),
  name: Type.String({ minLength: 1, maxLength: 80, description: "the entity name shown in answers" }),
  category: LabelCategory,
  venue: Type.Optional(
    Type.String({
      pattern: "^[a-z0-9]+(-[a-z0-9]+)*$",
      description: "venue id (kebab-case) of an exchange, bridge, dex or mixer entry; one id over several addresses makes a cluster",
    }),
  ),
  networks: Networks,
  source: Type.String({ minLength: 1, description: "where the label comes from, so it can be re-checked" }),
});
export type LabelEntry = Static<typeof LabelEntry>;

/** One curated flag. */
export const FlagEntry = ClosedObject({
  address: Type.String({ pattern: "^0x[0-9a-fA-F]{40}$", description: "the flagged address" }),
  flag: FlagKind,
  networks: Networks,
  source: Type.String({
    minLength: 1,
    description: "where the flag comes from (an incident report, a public list), so it can be re-checked",
  }),
});
export type FlagEntry = Static<typeof FlagEntry>;

/** The whole file. */
export const LabelsFile = ClosedObject({
  description: Type.String(),
  labels: Type.Array(LabelEntry),
  flags: Type.Optional(Type.Array(FlagEntry)),
});
export type LabelsFile = Static<typeof LabelsFile>;

/** A venue: its id, class and the addresses of its cluster, with their names. */
export interface Venue {
  id: string;
  class: VenueClass;
  addresses: Address[];
  names: string[];
}

/** The labels of one address as answers show them. */
export type AddressLabel = Pick<LabelEntry, "name" | "category">;

/** Check the label file (labels and flags); throws one error listing every problem with its entry index. */
export function parseLabelsFile(file: unknown, where = "content/labels.json"): { labels: LabelEntry[]; flags: FlagEntry[] } {
  const check = TypeCompiler.Compile(LabelsFile);
  if (!check.Check(file)) {
    const problems = [...check.Errors(file)].slice(0, 20).map((e) => `${e.path || "/"}: ${e.message}`);
    throw new Error(`${where} is invalid:\n  ${problems.join("\n  ")}`);
  }
  const seen = new Map<string, number>();
  const problems: string[] = [];
  file.labels.forEach((entry, i) => {
    for (const network of entry.networks) {
      const key = `${network}:${entry.address.toLowerCase()}`;
      const first = seen.get(key);
      if (first !== undefined) problems.push(`/labels/${i}: ${entry.address} is labelled twice on ${network} (first at /labels/${first})`);
      seen.set(key, i);
    }
    const venueCategory = VENUE_CLASS_OF[entry.category] !== undefined;
    if (entry.venue !== undefined && !venueCategory)
      problems.push(`/labels/${i}/venue: only exchange, bridge, dex and mixer entries are venues`);
  });
  const flagged = new Set<string>();
  (file.flags ?? []).forEach((entry, i) => {
    for (const network of entry.networks) {
      const key = `${network}:${entry.address.toLowerCase()}:${entry.flag}`;
      if (flagged.has(key)) problems.push(`/flags/${i}: ${entry.address} is flagged ${entry.flag} twice on ${network}`);
      flagged.add(key);
    }
  });
  if (problems.length > 0) throw new Error(`${where} is invalid:\n  ${problems.join("\n  ")}`);
  return { labels: file.labels, flags: file.flags ?? [] };
}

/** Labels by address for one network (`base` in production, `local` on the seeded devnet). */
export class LabelBook {
  readonly #byAddress = new Map<Address, AddressLabel[]>();
  readonly #flags = new Map<Address, FlagKind[]>();
  readonly #venues = new Map<string, Venue>();
  readonly #venueOf = new Map<Address, Venue>();

  constructor(entries: readonly LabelEntry[], network: "base" | "local", flags: readonly FlagEntry[] = []) {
    for (const entry of entries) {
      if (!entry.networks.includes(network)) continue;
      const address = getAddress(entry.address);
      this.#byAddress.set(address, [...(this.#byAddress.get(address) ?? []), { name: entry.name, category: entry.category }]);
      const cls = VENUE_CLASS_OF[entry.category];
      if (cls) {
        // An entry without a venue id is a venue of its own, named by its address.
        const id = entry.venue ?? address.toLowerCase();
        const venue = this.#venues.get(id) ?? { id, class: cls, addresses: [], names: [] };
        venue.addresses.push(address);
        venue.names.push(entry.name);
        this.#venues.set(id, venue);
        this.#venueOf.set(address, venue);
      }
    }
    for (const entry of flags) {
      if (!entry.networks.includes(network)) continue;
      const address = getAddress(entry.address);
      this.#flags.set(address, [...new Set([...(this.#flags.get(address) ?? []), entry.flag])].sort());
    }
  }

  /** The curated flags of `address` (empty when it is not flagged). */
  flags(address: Address): FlagKind[] {
    return this.#flags.get(getAddress(address)) ?? [];
  }

  /** Every flagged address on this network. */
  flaggedAddresses(): Address[] {
    return [...this.#flags.keys()];
  }

  /** The venue `address` belongs to, if it is a curated venue address. */
  venueOf(address: Address): Venue | undefined {
    return this.#venueOf.get(getAddress(address));
  }

  /** The venue with this id. */
  venue(id: string): Venue | undefined {
    return this.#venues.get(id);
  }

  /** Every venue on this network, in file order. */
  venues(): Venue[] {
    return [...this.#venues.values()];
  }

  /** The labels of `address` (empty when it is not in the curated file). */
  of(address: Address): AddressLabel[] {
    return this.#byAddress.get(getAddress(address)) ?? [];
  }

  /** The label names of `address`, as answers list them. */
  names(address: Address): string[] {
    return this.of(address).map((l) => l.name);
  }

  /** True when `address` carries a label of `category`. */
  is(address: Address, category: LabelCategory): boolean {
    return this.of(address).some((l) => l.category === category);
  }

  /** Every labelled address on this network. */
  addresses(): Address[] {
    return [...this.#byAddress.keys()];
  }
}

/** The label book of content/labels.json for a service mode. */
export function loadLabelBook(mode: "local" | "production"): LabelBook {
  const { labels, flags } = parseLabelsFile(labelsFile);
  return new LabelBook(labels, mode === "local" ? "local" : "base", flags);
}
