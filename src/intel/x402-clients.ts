/**
 * Whether a buyer can pay a challenge, decided by running the clients themselves, the way a
 * buyer runs them, defaults included:
 *
 * - the default client: `@x402/core`'s `x402HTTPClient` with the `@x402/evm` exact scheme,
 *   registered as the `@x402/fetch` quick start does, spend controls at their defaults (only
 *   the scheme's default assets, such as USDC, and at most $1 per payment). `payable` follows
 *   it: a seller this client refuses is not payable, whatever a loosened client would do;
 * - the same client with `spendControls: false`, to tell a seller only a loosened client would
 *   pay (`payable_with_loosened_controls`, with the control that refuses it);
 * - a v1 client (`x402` 1.x, inside `x402-fetch`/`x402-axios` 1.x), which reads the body.
 *
 * A payment the client signs is then held to what a facilitator settles: not to the zero or
 * burn address, not already expired when it arrives, over the token's own EIP-712 domain, on
 * a token with an EIP-3009 transfer. Every client signs with a throwaway key generated at
 * start: signing is offline, nothing is sent and no money can move.
 *
 * Network families branch in `optionPayability`: EVM options are signed here, Solana options by
 * src/intel/solana-payability.ts; other families are not measured (payable null).
 */
import { x402Client, x402HTTPClient } from "@x402/core/client";
import type { PaymentRequired } from "@x402/core/types";
import { findDefaultAsset } from "@x402/evm";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import type { ConformanceReportSchema } from "../../spec/routes/intel.ts";
import { isObject } from "../json.ts";
import { isCaip2, isEvmNetwork, isV1NetworkName, knownTokenDomain, normaliseNetwork } from "./networks.ts";
import { controlOf, InvalidPayment, messageOf, optionAnswer, optionChooser, signOffline } from "./sign-offline.ts";
import { isSolanaOption, loosenedSolanaChoice, solanaChoice, solanaOptionPayability } from "./solana-payability.ts";

/** The client families reported, reference first. */
export const CLIENT_FAMILIES = ["@x402/core", "x402@1"] as const;

/** A family of buyer clients. */
export type ClientFamily = (typeof CLIENT_FAMILIES)[number];

/** What each family is, for documentation. */
export const CLIENT_FAMILY_MEANINGS: Readonly<Record<ClientFamily, string>> = {
  "@x402/core":
    "the default client: @x402/core with the @x402/evm exact scheme as @x402/fetch's quick start sets it up, spend controls at their defaults (default assets such as USDC only, at most $1 per payment); pays x402 v2, and v1 challenges in the body",
  "x402@1": "v1 clients: the x402 1.x library inside x402-fetch and x402-axios 1.x (reads the JSON body of a v1 challenge only)",
};

/** The default client's answer for one payment option (see `payable_options` in the x402-check route's response). */
export type OptionPayability = ConformanceReportSchema["payable_options"][number];

/** One of the default client's spend controls that can refuse a payment. */
export type SpendControl = NonNullable<OptionPayability["control"]>;

/** One client family's answer for the whole challenge. */
export type ClientAcceptance = ConformanceReportSchema["clients"][number];

/** What the clients made of one 402 answer: the payability fields of the x402-check report. */
export type Payability = Pick<
  ConformanceReportSchema,
  | "payable"
  | "payable_reason"
  | "payable_refused_by"
  | "payable_with_default_client"
  | "payable_with_loosened_controls"
  | "refused_by_control"
  | "payable_options"
  | "clients"
>;

/** The 402 answer as a client sees it. */
export interface PaymentAnswer {
  /** Response header lookup, case-insensitive. */
  header(name: string): string | undefined;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  body: unknown;
}

/**
 * Whether a token contract has an EIP-3009 transfer: true, false, or null when it could not be
 * read. Asked only for assets the EVM scheme does not know (its default assets have one).
 */
export type Eip3009Probe = (network: string, asset: string) => Promise<boolean | null>;

const throwaway = privateKeyToAccount(generatePrivateKey());

/** The client a buyer gets from the @x402/fetch quick start, with its spend controls at their defaults or all off. */
function quickStartClient(spendControls: boolean): x402Client {
  const client = new x402Client();
  registerExactEvmScheme(client, { signer: throwaway });
  if (!spendControls) client.setSpendControls(false);
  return client;
}
const defaultClient = new x402HTTPClient(quickStartClient(true));
const defaultChoice = optionChooser(quickStartClient(true));
const loosenedClient = new x402HTTPClient(quickStartClient(false));
const loosenedChoice = optionChooser(quickStartClient(false));

/** The earliest a facilitator accepts an authorization's end: @x402/evm refuses one valid for less than 6 more seconds. */
export const MIN_SECONDS_LEFT = 6;

const ZERO_ADDRESS = /^0x0{40}$/i;
/** Addresses nobody holds a key for, used to burn tokens. */
const BURN_ADDRESSES = new Set(["0x000000000000000000000000000000000000dead", "0xdead000000000000000042069420694206942069"]);

/** True when `option` is paid with Permit2 rather than the token's EIP-3009 authorization. */
export const isPermit2 = (option: Record<string, unknown>) => isObject(option.extra) && option.extra.assetTransferMethod === "permit2";

/** The token's EIP-712 domain against the one the challenge names: a signature over another is refused by the token. */
function domainProblem(option: Record<string, unknown>): string | null {
  const network = normaliseNetwork(option.network);
  const domain = knownTokenDomain(network, option.asset);
  const extra = isObject(option.extra) ? option.extra : {};
  if (!domain || isPermit2(option)) return null;
  if (extra.name === domain.name && extra.version === domain.version) return null;
  return `the token's EIP-712 domain is name "${domain.name}", version "${domain.version}"; a signature over name ${JSON.stringify(extra.name)}, version ${JSON.stringify(extra.version)} is refused by the token contract`;
}

/**
 * Why a facilitator would not settle a payment signed for `option`, or null. Checked in the
 * order a facilitator meets them: where the money goes, whether the authorization is still
 * valid, the signing domain, and whether the token can move it at all.
 */
async function facilitatorRefusal(option: Record<string, unknown>, probe: Eip3009Probe | undefined): Promise<string | null> {
  const payTo = typeof option.payTo === "string" ? option.payTo : "";
  if (ZERO_ADDRESS.test(payTo)) {
    return "a facilitator refuses it: payTo is the zero address, and the token refuses a transfer to the zero address, so the payment never settles";
  }
  if (BURN_ADDRESSES.has(payTo.toLowerCase())) {
    return `a facilitator would only burn it: payTo ${payTo} is a burn address no one holds a key for, so no seller ever receives the payment`;
  }
  const timeout = option.maxTimeoutSeconds;
  if (typeof timeout === "number" && Number.isFinite(timeout) && timeout < MIN_SECONDS_LEFT) {
    return `a facilitator refuses the payment as expired: maxTimeoutSeconds ${timeout} makes the signed authorization valid until ${timeout} s after signing, and a facilitator requires at least ${MIN_SECONDS_LEFT} s left (invalid_exact_evm_payload_authorization_valid_before)`;
  }
  const domain = domainProblem(option);
  if (domain) return domain;
  const network = normaliseNetwork(option.network);
  // Only on EVM: @x402/evm reads its default assets by network key, and a network named like an
  // object's own key ("constructor") would make it throw.
  if (isEvmNetwork(network) && typeof option.asset === "string" && !isPermit2(option) && !findDefaultAsset(option.asset, network)) {
    const has = probe ? await probe(network, option.asset).catch(() => null) : null;
    if (has === false) {
      return `a facilitator cannot settle it: the asset ${option.asset} has no EIP-3009 transferWithAuthorization, so the signed authorization moves nothing`;
    }
  }
  return null;
}

/**
 * What payability is measured on: options in other families, and Solana options in another mint
 * (the checker reads no Solana RPC), are not measured. The trust score's penalty says the same.
 */
export const MEASURED_OPTIONS = "a network this checker runs a client for (EVM, or USDC on Solana)";

/**
 * True when `option` is on a network family none of the clients run here pays (a CAIP-2 id or
 * v1 name outside eip155), written in the form its version uses: then nothing is known.
 */
function outOfReach(version: unknown, option: unknown): boolean {
  if (!isObject(option)) return false;
  const written = option.network;
  const network = normaliseNetwork(written);
  if (!network || network.startsWith("eip155:")) return false;
  return version === 1 ? isV1NetworkName(written) : isCaip2(written);
}

/** Sign `option` with `client`: ok, or the client's own reason and whether it produced a payload at all. */
async function sign(
  client: x402HTTPClient,
  required: PaymentRequired,
  option: unknown,
): Promise<{ ok: true; signed: true } | { ok: false; signed: boolean; reason: string }> {
  const failure = await signOffline(client, required, option);
  if (failure === null) return { ok: true, signed: true };
  if (failure instanceof InvalidPayment) return { ok: false, signed: true, reason: failure.message };
  return { ok: false, signed: false, reason: messageOf(failure) };
}

/**
 * One option's payability, by network family: the one place a family's own check is added.
 * Solana options are signed by the stock Solana client (src/intel/solana-payability.ts); EVM
 * (eip155:*) options as the default client, a loosened client and a facilitator see them; any
 * other family is not measured.
 */
async function optionPayability(
  index: number,
  required: PaymentRequired,
  option: unknown,
  probe: Eip3009Probe | undefined,
): Promise<OptionPayability> {
  if (isSolanaOption(required.x402Version, option)) return solanaOptionPayability(index, required, option);
  const byDefault = await sign(defaultClient, required, option);
  if (outOfReach(required.x402Version, option)) return optionAnswer(index, null, { reason: byDefault.ok ? null : byDefault.reason });
  // A facilitator is asked only about a payment some client signs: it may read the chain, and
  // an option no client pays is refused whatever a facilitator would say.
  const settles = async () => (isObject(option) ? await facilitatorRefusal(option, probe) : null);
  // A payment the client signs and sends is judged by what a facilitator does with it, even
  // when its payload also breaks the schema (an expired timeout does both).
  const refusal = byDefault.signed ? await settles() : null;
  if (refusal) return optionAnswer(index, false, { reason: refusal, refused_by: "facilitator" });
  if (byDefault.ok) return optionAnswer(index, true);
  const control = byDefault.signed ? null : controlOf(byDefault.reason);
  if (control) {
    const loosened = await sign(loosenedClient, required, option);
    return optionAnswer(index, false, {
      reason: byDefault.reason,
      refused_by: "spend_controls",
      control,
      payable_with_loosened_controls: loosened.ok && (await settles()) === null,
    });
  }
  return optionAnswer(index, false, { reason: byDefault.reason, refused_by: "client" });
}

/**
 * Options assessed per challenge. A client pays one option, and sellers list a handful; one
 * listing hundreds (a 256 KiB body holds about 1,300) must not buy hundreds of signatures and
 * chain reads for one check.
 */
export const MAX_ASSESSED_OPTIONS = 20;

/** Distinct tokens read on chain per challenge: each read goes to the RPC every paid route shares. */
export const MAX_TOKEN_READS = 3;

/** The reason given for an option after the first MAX_ASSESSED_OPTIONS. */
export const NOT_ASSESSED = `not assessed: the challenge lists more than ${MAX_ASSESSED_OPTIONS} payment options, and only the first ${MAX_ASSESSED_OPTIONS} are assessed`;

/** `answer`, or null (not known) once `signal` aborts; a failed read is not known either. */
function untilAborted(answer: Promise<boolean | null>, signal: AbortSignal | undefined): Promise<boolean | null> {
  const settled = answer.catch(() => null);
  if (!signal) return settled;
  if (signal.aborted) return Promise.resolve(null);
  return new Promise((resolve) => {
    const stop = () => resolve(null);
    signal.addEventListener("abort", stop, { once: true });
    void settled.then((value) => {
      signal.removeEventListener("abort", stop);
      resolve(value);
    });
  });
}

/**
 * `probe` for one challenge: at most MAX_TOKEN_READS distinct tokens asked, none once `signal`
 * aborts, and an answer not come by then is not known (null), as a failed read is.
 */
function boundedProbe(probe: Eip3009Probe | undefined, signal: AbortSignal | undefined): Eip3009Probe | undefined {
  if (!probe) return undefined;
  const asked = new Map<string, Promise<boolean | null>>();
  return (network, asset) => {
    const key = `${network} ${asset.toLowerCase()}`;
    const known = asked.get(key);
    if (known) return known;
    if (asked.size >= MAX_TOKEN_READS || signal?.aborted) return Promise.resolve(null);
    const answer = untilAborted(probe(network, asset), signal);
    asked.set(key, answer);
    return answer;
  };
}

async function referenceClient(
  answer: PaymentAnswer,
  probe: Eip3009Probe | undefined,
): Promise<{ options: OptionPayability[]; chosen: number[]; loosenedChosen: number[]; reason: string | null }> {
  let required: PaymentRequired;
  try {
    required = defaultClient.getPaymentRequiredResponse((name) => answer.header(name) ?? null, answer.body);
  } catch (error) {
    return { options: [], chosen: [], loosenedChosen: [], reason: messageOf(error) };
  }
  if (!isObject(required) || !Array.isArray(required.accepts) || required.accepts.length === 0) {
    return { options: [], chosen: [], loosenedChosen: [], reason: "the challenge lists no payment options (accepts)" };
  }
  // The one option each buyer's client pays: the EVM quick start's and the stock Solana client's,
  // with their spend controls at their defaults and off.
  const [chosen, loosenedChosen] = await Promise.all([
    Promise.all([defaultChoice(required), solanaChoice(required)]),
    Promise.all([loosenedChoice(required), loosenedSolanaChoice(required)]),
  ]);
  const options: OptionPayability[] = [];
  for (const [index, option] of required.accepts.entries()) {
    options.push(
      index < MAX_ASSESSED_OPTIONS
        ? await optionPayability(index, required, option, probe)
        : optionAnswer(index, null, { reason: NOT_ASSESSED }),
    );
  }
  const found = (indices: (number | null)[]) => indices.filter((i) => i !== null);
  return { options, chosen: found(chosen), loosenedChosen: found(loosenedChosen), reason: null };
}

/** The x402 1.x library: its client and its types. */
type V1Library = [typeof import("x402/client"), typeof import("x402/types")];

let v1Library: Promise<V1Library | null> | undefined;

/**
 * The x402 1.x library, loaded on first use (only this check needs it). Should it fail to load,
 * the family is reported as not run (accepts null) rather than guessed.
 */
function loadV1(): Promise<V1Library | null> {
  v1Library ??= Promise.all([import("x402/client"), import("x402/types")]).catch(() => null);
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
    const [client, types] = library;
    const parsed = body.accepts.map((option) => types.PaymentRequirementsSchema.parse(option));
    const selected = client.selectPaymentRequirements(parsed, undefined, "exact");
    const problem = await facilitatorRefusal(selected, undefined);
    if (problem) return { family, accepts: false, reason: problem };
    await client.createPaymentHeader(throwaway, 1, selected);
    return { family, accepts: true, reason: null };
  } catch (error) {
    return { family, accepts: false, reason: messageOf(error) };
  }
}

/**
 * Run the clients on one 402 answer; `probe` tells whether an unknown token has an EIP-3009
 * transfer. The first MAX_ASSESSED_OPTIONS options are assessed, at most MAX_TOKEN_READS tokens
 * are read on chain, and no read is waited for once `signal` aborts (the check's budget): a
 * token not read is not judged. Signing is offline and bounded by the option cap.
 */
export async function assessPayability(answer: PaymentAnswer, probe?: Eip3009Probe, signal?: AbortSignal): Promise<Payability> {
  const [ref, v1] = await Promise.all([referenceClient(answer, boundedProbe(probe, signal)), v1Client(answer)]);
  // A client pays the option it chooses and no other: a later option a facilitator would settle
  // is never reached when the chosen one is refused.
  const measuredAt = (indices: number[]) =>
    indices.flatMap((i) => {
      const option = ref.options[i];
      return option && option.payable !== null ? [option] : [];
    });
  const chosen = measuredAt(ref.chosen);
  const payableOption = chosen.length > 0 ? chosen.some((o) => o.payable === true) : ref.options.some((o) => o.payable === true);
  const allOutOfReach = ref.options.length > 0 && ref.options.every((o) => o.payable === null);
  const payable = payableOption ? true : allOutOfReach ? null : false;
  const failing = payable === false ? (chosen.find((o) => o.payable === false) ?? ref.options.find((o) => o.payable === false)) : undefined;
  const passedOver = failing && chosen.includes(failing) ? ref.options.find((o) => o.payable === true) : undefined;
  const failingReason =
    failing && passedOver
      ? `the default client pays the first option it accepts, option ${failing.index}, and never tries option ${passedOver.index}: ${failing.reason}`
      : (failing?.reason ?? null);
  const unassessed = ref.options.length - MAX_ASSESSED_OPTIONS;
  // Not paying the first options says nothing of the ones after them.
  const noting = (text: string) =>
    unassessed > 0
      ? `${text.replace(/\.$/, "")}; the options after the first ${MAX_ASSESSED_OPTIONS} were not assessed (${unassessed} of ${ref.options.length})`
      : text;
  const reason = payable === false ? (ref.reason ?? failingReason) : null;
  const referenceAcceptance: ClientAcceptance = {
    family: "@x402/core",
    accepts: payable,
    reason:
      payable === null
        ? noting(`no ${unassessed > 0 ? "assessed " : ""}option is on ${MEASURED_OPTIONS}`)
        : reason === null
          ? null
          : noting(reason),
  };
  const measured = ref.options.filter((o) => o.payable !== null);
  const byDefault = payable === null ? null : measured.some((o) => o.payable === true || o.refused_by === "facilitator");
  // The same for a client with its spend controls off: it pays the first option it can sign.
  const loosenedChosen = measuredAt(ref.loosenedChosen);
  const loosened =
    payable === null
      ? null
      : (loosenedChosen.length > 0 ? loosenedChosen : measured).some((o) => o.payable_with_loosened_controls === true);
  const control = payable === false ? (measured.find((o) => o.control !== null)?.control ?? null) : null;
  return {
    payable,
    payable_reason: payable === true ? null : referenceAcceptance.reason,
    payable_refused_by: payable === false ? (ref.reason !== null ? "client" : (failing?.refused_by ?? "client")) : null,
    payable_with_default_client: byDefault,
    payable_with_loosened_controls: loosened,
    refused_by_control: control,
    payable_options: ref.options,
    clients: [referenceAcceptance, v1],
  };
}

/** The payability of an answer that is not a 402 or was never received. */
export function notPayable(reason: string): Payability {
  return {
    payable: false,
    payable_reason: reason,
    payable_refused_by: "client",
    payable_with_default_client: false,
    payable_with_loosened_controls: false,
    refused_by_control: null,
    payable_options: [],
    clients: CLIENT_FAMILIES.map((family) => ({ family, accepts: false, reason })),
  };
}
