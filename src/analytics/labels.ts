/**
 * Curated address labels from `content/labels.json`: the only source of entity names in any
 * answer. Each entry names its source; entries are scoped to Base mainnet (`base`), the
 * seeded local chain (`local`) or both, so a label of a local test wallet can never be shown
 * for the same address on Base. A bad file stops the service at start with every problem listed.
 */
import { type Static, Type } from "@sinclair/typebox";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { type Address, getAddress, isAddress } from "viem";
import labelsFile from "../../content/labels.json" with { type: "json" };

/** What kind of entity a label names; exchanges and bridges decide whale-watch directions. */
export const LabelCategory = Type.Union(
  [Type.Literal("exchange"), Type.Literal("bridge"), Type.Literal("dex"), Type.Literal("token"), Type.Literal("infrastructure")],
  { description: "exchange, bridge, dex, token or infrastructure" },
);
export type LabelCategory = Static<typeof LabelCategory>;

/** One entry of content/labels.json. */
export const LabelEntry = Type.Object(
  {
    address: Type.String({ pattern: "^0x[0-9a-fA-F]{40}$", description: "the labelled address" }),
    name: Type.String({ minLength: 1, maxLength: 80, description: "the entity name shown in answers" }),
    category: LabelCategory,
    networks: Type.Array(Type.Union([Type.Literal("base"), Type.Literal("local")]), {
      minItems: 1,
      description: "where the label holds: base (mainnet) and/or local (the seeded devnet)",
    }),
    source: Type.String({ minLength: 1, description: "where the label comes from, so it can be re-checked" }),
  },
  { additionalProperties: false },
);
export type LabelEntry = Static<typeof LabelEntry>;

/** The whole file. */
export const LabelsFile = Type.Object({ description: Type.String(), labels: Type.Array(LabelEntry) }, { additionalProperties: false });
export type LabelsFile = Static<typeof LabelsFile>;

/** The labels of one address as answers show them. */
export interface AddressLabel {
  name: string;
  category: LabelCategory;
}

/** Check the label file; throws one error listing every problem with its entry index. */
export function parseLabels(file: unknown, where = "content/labels.json"): LabelEntry[] {
  const check = TypeCompiler.Compile(LabelsFile);
  if (!check.Check(file)) {
    const problems = [...check.Errors(file)].slice(0, 20).map((e) => `${e.path || "/"}: ${e.message}`);
    throw new Error(`${where} is invalid:\n  ${problems.join("\n  ")}`);
  }
  const seen = new Map<string, number>();
  const problems: string[] = [];
  file.labels.forEach((entry, i) => {
    if (!isAddress(entry.address, { strict: false })) problems.push(`/labels/${i}/address: not an address`);
    for (const network of entry.networks) {
      const key = `${network}:${entry.address.toLowerCase()}`;
      const first = seen.get(key);
      if (first !== undefined) problems.push(`/labels/${i}: ${entry.address} is labelled twice on ${network} (first at /labels/${first})`);
      seen.set(key, i);
    }
  });
  if (problems.length > 0) throw new Error(`${where} is invalid:\n  ${problems.join("\n  ")}`);
  return file.labels;
}

/** Labels by address for one network (`base` in production, `local` on the seeded devnet). */
export class LabelBook {
  readonly #byAddress = new Map<Address, AddressLabel[]>();
  readonly network: "base" | "local";

  constructor(entries: readonly LabelEntry[], network: "base" | "local") {
    this.network = network;
    for (const entry of entries) {
      if (!entry.networks.includes(network)) continue;
      const address = getAddress(entry.address);
      this.#byAddress.set(address, [...(this.#byAddress.get(address) ?? []), { name: entry.name, category: entry.category }]);
    }
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
  return new LabelBook(parseLabels(labelsFile), mode === "local" ? "local" : "base");
}
