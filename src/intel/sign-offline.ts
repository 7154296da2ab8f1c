/**
 * Signing one option of a challenge with a buyer's client, offline, as the EVM and the Solana
 * checks (src/intel/x402-clients.ts, src/intel/solana-payability.ts) both do it.
 */
import type { x402Client, x402HTTPClient } from "@x402/core/client";
import { parsePaymentPayload } from "@x402/core/schemas";
import type { PaymentRequired } from "@x402/core/types";
import type { OptionPayability, SpendControl } from "./x402-clients.ts";

/** The client signed a payment that breaks @x402/core's own payload schema. */
export class InvalidPayment extends Error {}

/** Sign `option` with `client`: null when it produces a valid payment, else the error it threw or an `InvalidPayment`. */
export async function signOffline(client: x402HTTPClient, required: PaymentRequired, option: unknown): Promise<unknown> {
  try {
    const payload = await client.createPaymentPayload({ ...required, accepts: [option] } as PaymentRequired);
    // What the client would send must pass @x402/core's own payload schema, as a facilitator checks it.
    const parsed = parsePaymentPayload(payload);
    if (parsed.success) return null;
    return new InvalidPayment(
      `the payment the client produced is not a valid x402 payment: ${parsed.error.issues
        .slice(0, 3)
        .map((issue) => `${issue.path.join(".") || "payload"}: ${issue.message}`)
        .join("; ")}`,
    );
  } catch (error) {
    return error;
  }
}

/**
 * `client` set up to say which option of a challenge it pays, without paying: the index in
 * `accepts`, or null when it pays none. A client pays one option, the first its schemes and
 * spend controls let through (authorizations before other flows), whether or not a facilitator
 * would settle it: it never moves on to the next option when that payment is refused. `client`
 * must be used for nothing else: its payments stop before they are signed.
 */
export function optionChooser(client: x402Client): (required: PaymentRequired) => Promise<number | null> {
  const picked = new WeakMap<object, unknown>();
  client.onBeforePaymentCreation(async ({ paymentRequired, selectedRequirements }) => {
    picked.set(paymentRequired, selectedRequirements);
    return { abort: true, reason: "only choosing an option" };
  });
  return async (required) => {
    // A copy of its own, so that concurrent checks never read each other's choice.
    const asked = { ...required };
    await client.createPaymentPayload(asked).catch(() => {});
    const index = required.accepts.indexOf(picked.get(asked) as PaymentRequired["accepts"][number]);
    return index === -1 ? null : index;
  };
}

/** An error's message, without the requirement dumps some clients append, at most 300 characters. */
export function messageOf(error: unknown): string {
  // The first line: viem and zod put detail lines after it.
  const text = (error instanceof Error ? error.message : String(error)).split("\n")[0] ?? "";
  const cut = text.search(/ [{[]"/);
  return (cut > 0 ? text.slice(0, cut) : text).replace(/\s+/g, " ").trim().slice(0, 300) || "the client failed without a message";
}

/** The spend control an error of the default client names, if any. */
export function controlOf(message: string): SpendControl | null {
  if (/rejected by spendControls\.(allowedAssets )?maxAmountPerPayment/.test(message)) return "spendControls.maxAmountPerPayment";
  if (/rejected by spendControls/.test(message)) return "spendControls.allowedAssets";
  return null;
}

/** One option's answer: whether it is payable and what differs from an option nothing refuses (no reason, refuser or control). */
export function optionAnswer(index: number, payable: boolean | null, differs: Partial<OptionPayability> = {}): OptionPayability {
  return { index, payable, reason: null, refused_by: null, control: null, payable_with_loosened_controls: payable, ...differs };
}
