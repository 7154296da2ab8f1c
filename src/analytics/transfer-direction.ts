/**
 * Where a transfer's money went, in one word, from its counterparties' classes and curated
 * labels; the rules and their order are stated in the whale-watch methodology.
 */
import type { Address } from "viem";
import type { WhaleTransfer } from "../../spec/routes/analytics.ts";
import { type AddressClass, DEX_CLASSES } from "../chain/classify.ts";
import type { LabelBook } from "./labels.ts";

/** The direction of a transfer from its counterparties, by the first rule that applies (see methodology). */
export function transferDirection(
  from: { address: Address; cls: AddressClass },
  to: { address: Address; cls: AddressClass },
  labels: LabelBook,
): WhaleTransfer["direction"] {
  if (from.cls === "zero_address") return "mint";
  if (to.cls === "zero_address") return "burn";
  if (labels.is(to.address, "exchange")) return "to_exchange";
  if (labels.is(from.address, "exchange")) return "from_exchange";
  if (labels.is(to.address, "bridge")) return "to_bridge";
  if (labels.is(from.address, "bridge")) return "from_bridge";
  if (DEX_CLASSES.has(to.cls)) return "into_dex";
  if (DEX_CLASSES.has(from.cls)) return "out_of_dex";
  if (from.cls === "wallet" && to.cls === "wallet") return "wallet_to_wallet";
  return "other";
}
