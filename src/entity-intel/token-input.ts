/** The `token` input of the entity routes: `USDC`, `WETH` or an address, resolved to an address. */
import { type Address, getAddress } from "viem";
import { WETH_ADDRESS } from "../chain/addresses.ts";

/** The address of a `token` input on a service whose USDC is `usdc`; undefined when none was given. */
export function tokenAddressOf(token: string | undefined, usdc: Address): Address | undefined {
  if (token === undefined) return undefined;
  if (token === "USDC") return getAddress(usdc);
  if (token === "WETH") return WETH_ADDRESS;
  return getAddress(token);
}
