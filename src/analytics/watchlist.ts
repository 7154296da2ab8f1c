/**
 * The Base tokens the trading assistant watches (`GET /api/markets`), each priced against USD
 * through its deepest Base pair. Addresses are Base mainnet's.
 */
import type { Address } from "viem";
import { WETH_ADDRESS } from "../chain/addresses.ts";
import { base } from "../networks/base.ts";

/** One watched token. */
export interface WatchedToken {
  symbol: string;
  address: Address;
}

/** The watch list, in display order. */
export const WATCHLIST: readonly WatchedToken[] = [
  { symbol: "WETH", address: WETH_ADDRESS },
  { symbol: "cbBTC", address: "0xcbB7C0000aB88B473b1f5aFd9ef808440eed33Bf" },
  { symbol: "cbETH", address: "0x2Ae3F1Ec7F1F5012CFEab0185bfc7aa3cf0DEc22" },
  { symbol: "AERO", address: "0x940181a94A35A4569E4529A3CDfB74e38FD98631" },
  { symbol: "USDC", address: base.usdc.address },
];
