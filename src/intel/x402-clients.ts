/**
 * Whether a standard x402 client can pay a challenge, decided by running the clients
 * themselves: the reference client (`@x402/core`'s `x402HTTPClient` with the `@x402/evm`
 * exact scheme, registered the way its README shows, which pays v2 challenges and v1 ones)
 * reads the 402 answer with its own parser and creates a payment payload for each option in
 * turn; a v1 client (`x402` 1.x, the library inside `x402-fetch`/`x402-axios` 1.x) reads the
 * body and signs the way those clients do. Both sign with a throwaway key generated at start:
 * signing is offline, nothing is sent and no money can move. Spend caps are off, since a cap is
 * a buyer's policy, not something the seller got wrong.
 */
import { x402Client, x402HTTPClient } from "@x402/core/client";
import { parsePaymentPayload } from "@x402/core/schemas";
import type { PaymentRequired } from "@x402/core/types";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { isCaip2, isV1NetworkName, knownTokenDomain, normaliseNetwork } from "./networks.ts";
import { registerSolanaCheck, SolanaNotMeasured } from "./solana-payability.ts";

/** The client families reported, reference first. */
export const CLIENT_FAMILIES = ["@x402/core", "x402@1"] as const;

/** A family of buyer clients. */
export type ClientFamily = (typeof CLIENT_FAMILIES)[number];

/** What each family is, for documentation. */
export const CLIENT_FAMILY_MEANINGS: Readonly<Record<ClientFamily, string>> = {
  "@x402/core":
    "the reference client: @x402/core with the @x402/evm exact scheme, as @x402/fetch and @x402/axios use it (pays x402 v2, and v1 challenges in the body)",
  "x402@1": "v1 clients: the x402 1.x library inside x402-fetch and x402-axios 1.x (reads the JSON body of a v1 challenge only)",
};

/** The reference client's answer for one payment option. */
export interface OptionPayability {
  /** Position in `accepts`. */
  index: number;
  /** True: the client produced a payment; false: it could not; null: no client for this network family is run here (e.g. Solana). */
  payable: boolean | null;
  /** The client's own error message when it could not; null when it could. */
  reason: string | null;
}

/** One client family's answer for the whole challenge. */
export interface ClientAcceptance {
  family: ClientFamily;
  /** True when the family produces a payment for at least one option; null when it could not be run here. */
  accepts: boolean | null;
  reason: string | null;
}

/** What the clients made of one 402 answer. */
export interface Payability {
  /** True when the reference client pays at least one option; null when every option is on a network family no client is run for. */
  payable: boolean | null;
  /** Why not, in the reference client's words (the first failing option's); null when payable. */
  reason: string | null;
  options: OptionPayability[];
  clients: ClientAcceptance[];
}

/** The 402 answer as a client sees it. */
export interface PaymentAnswer {
  /** Response header lookup, case-insensitive. */
  header(name: string): string | undefined;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  body: unknown;
}

const throwaway = privateKeyToAccount(generatePrivateKey());

const reference = (() => {
  const client = new x402Client();
  registerExactEvmScheme(client, { signer: throwaway });
  registerSolanaCheck(client);
  client.setSpendControls(false);
  return new x402HTTPClient(client);
})();

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** An error's message, without the requirement dumps some clients append, at most 300 characters. */
function messageOf(error: unknown): string {
  // The first line: viem and zod put detail lines after it.
  const text = (error instanceof Error ? error.message : String(error)).split("\n")[0] ?? "";
  const cut = text.search(/ [{[]"/);
  return (cut > 0 ? text.slice(0, cut) : text).replace(/\s+/g, " ").trim().slice(0, 300) || "the client failed without a message";
}

/**
 * True when `option` is on a network family none of the clients run here pays (a CAIP-2 id or
 * v1 name outside eip155), written in the form its version uses: then nothing is known.
 */
function outOfReach(version: unknown, option: unknown): boolean {
  if (!isObject(option)) return false;
  const written = option.network;
  const network = normaliseNetwork(written);
  if (!network || network.startsWith("eip155:") || network.startsWith("solana:")) return false;
  return version === 1 ? isV1NetworkName(written) : isCaip2(written);
}

/** A payment the client produced, checked against what the token will accept. */
function domainProblem(option: Record<string, unknown>): string | null {
  const network = normaliseNetwork(option.network);
  const domain = knownTokenDomain(network, option.asset);
  const extra = isObject(option.extra) ? option.extra : {};
  if (!domain || extra.assetTransferMethod === "permit2") return null;
  if (extra.name === domain.name && extra.version === domain.version) return null;
  return `the token's EIP-712 domain is name "${domain.name}", version "${domain.version}"; a signature over name ${JSON.stringify(extra.name)}, version ${JSON.stringify(extra.version)} is refused by the token contract`;
}

async function referenceClient(answer: PaymentAnswer): Promise<{ options: OptionPayability[]; reason: string | null }> {
  let required: PaymentRequired;
  try {
    required = reference.getPaymentRequiredResponse((name) => answer.header(name) ?? null, answer.body);
  } catch (error) {
    return { options: [], reason: messageOf(error) };
  }
  if (!isObject(required) || !Array.isArray(required.accepts) || required.accepts.length === 0) {
    return { options: [], reason: "the challenge lists no payment options (accepts)" };
  }
  const options: OptionPayability[] = [];
  for (const [index, option] of required.accepts.entries()) {
    try {
      const payload = await reference.createPaymentPayload({ ...required, accepts: [option] });
      // What the client would send must pass @x402/core's own payload schema, as a facilitator checks it.
      const parsed = parsePaymentPayload(payload);
      const invalid = parsed.success
        ? null
        : `the payment the client produced is not a valid x402 payment: ${parsed.error.issues
            .slice(0, 3)
            .map((i) => `${i.path.join(".") || "payload"}: ${i.message}`)
            .join("; ")}`;
      const problem = invalid ?? (isObject(option) ? domainProblem(option) : null);
      options.push({ index, payable: problem === null, reason: problem });
    } catch (error) {
      const unmeasured = error instanceof SolanaNotMeasured || outOfReach(required.x402Version, option);
      options.push({ index, payable: unmeasured ? null : false, reason: messageOf(error) });
    }
  }
  return { options, reason: null };
}

interface V1Library {
  parse(option: unknown): unknown;
  select(options: unknown[]): unknown;
  sign(version: number, option: unknown): Promise<string>;
}

let v1Library: Promise<V1Library | null> | undefined;

/**
 * The x402 1.x library, loaded on first use. It comes with `x402-express` 1.x and is absent
 * from a production install without development dependencies; the family is then reported as
 * not run (accepts null) rather than guessed.
 */
function loadV1(): Promise<V1Library | null> {
  v1Library ??= (async () => {
    try {
      // Specifiers in variables: bundlers leave an optional package alone.
      const clientPath = "x402/client";
      const typesPath = "x402/types";
      const client = (await import(clientPath)) as {
        createPaymentHeader(signer: unknown, version: number, option: unknown): Promise<string>;
        selectPaymentRequirements(options: unknown[], network?: unknown, scheme?: string): unknown;
      };
      const types = (await import(typesPath)) as { PaymentRequirementsSchema: { parse(value: unknown): unknown } };
      return {
        parse: (option) => types.PaymentRequirementsSchema.parse(option),
        select: (options) => client.selectPaymentRequirements(options, undefined, "exact"),
        sign: (version, option) => client.createPaymentHeader(throwaway, version, option),
      };
    } catch {
      return null;
    }
  })();
  return v1Library;
}

/** What x402-fetch 1.x does with a 402: read `{x402Version, accepts}` from the body, parse every option, select one, sign it. */
async function v1Client(answer: PaymentAnswer): Promise<ClientAcceptance> {
  const family = "x402@1" as const;
  const library = await loadV1();
  if (!library) return { family, accepts: null, reason: "the x402 1.x library is not installed on this server" };
  const body = isObject(answer.body) ? answer.body : {};
  if (!Array.isArray(body.accepts) || body.accepts.length === 0) {
    return { family, accepts: false, reason: "v1 clients read the challenge from the JSON body, which lists no payment options (accepts)" };
  }
  if (body.x402Version !== 1) {
    return { family, accepts: false, reason: `v1 clients pay x402Version 1; the body says ${JSON.stringify(body.x402Version ?? null)}` };
  }
  try {
    const parsed = body.accepts.map((option) => library.parse(option));
    const selected = library.select(parsed);
    if (isObject(selected)) {
      const problem = domainProblem(selected);
      if (problem) return { family, accepts: false, reason: problem };
    }
    await library.sign(1, selected);
    return { family, accepts: true, reason: null };
  } catch (error) {
    return { family, accepts: false, reason: messageOf(error) };
  }
}

/** Run the clients on one 402 answer. */
export async function assessPayability(answer: PaymentAnswer): Promise<Payability> {
  const [ref, v1] = await Promise.all([referenceClient(answer), v1Client(answer)]);
  const payableOption = ref.options.some((o) => o.payable === true);
  const allOutOfReach = ref.options.length > 0 && ref.options.every((o) => o.payable === null);
  const payable = payableOption ? true : allOutOfReach ? null : false;
  const reason = payable === false ? (ref.reason ?? ref.options.find((o) => o.payable === false)?.reason ?? null) : null;
  const referenceAcceptance: ClientAcceptance = {
    family: "@x402/core",
    accepts: payable,
    reason: payable === null ? "no option is on a network this checker runs a client for (EVM, eip155:*)" : reason,
  };
  return {
    payable,
    reason: payable === true ? null : referenceAcceptance.reason,
    options: ref.options,
    clients: [referenceAcceptance, v1],
  };
}

/** The payability of an answer that is not a 402 or was never received. */
export function notPayable(reason: string): Payability {
  return {
    payable: false,
    reason,
    options: [],
    clients: CLIENT_FAMILIES.map((family) => ({ family, accepts: false, reason })),
  };
}
