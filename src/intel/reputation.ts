/**
 * On-chain reputation of a seller's `payTo`: its last 25 incoming USDC transfers on the
 * settlement chain, read from `Transfer` logs through the chain client, newest first, in
 * chunks of 2,000 blocks (halved when the node refuses the range) back to a bounded window.
 * When the node refuses or fails, the answer says 'NOT measured' instead of guessing.
 */
import type { Static } from "@sinclair/typebox";
import { getAddress, type PublicClient } from "viem";
import type { ReputationSchema } from "../../spec/routes/intel.ts";
import { isRangeRefusal, TRANSFER_EVENT } from "../chain/log-scanner.ts";
import { toChainError } from "../chain/rpc-error.ts";
import { ServiceError } from "../errors.ts";

/** How many incoming transfers the reputation looks at. */
export const REPUTATION_TRANSFERS = 25;

/** The window scanned: about 24 hours of 2-second Base blocks. */
export const REPUTATION_WINDOW_BLOCKS = 43_200n;

/** The payTo reputation of one row: measured (counts and ages, null ages when no transfer came), or every figure null and a note starting with "NOT measured". */
export type Reputation = Static<typeof ReputationSchema>;

/** Settings of a reputation read. */
export interface ReputationOptions {
  chain: PublicClient;
  /** The CAIP-2 id of the chain `chain` reads (an id of src/networks/). */
  network: string;
  usdc: `0x${string}`;
  now?: () => Date;
}

/** A reputation that was not measured, saying why. */
export function notMeasured(why: string): Reputation {
  return {
    measured: false,
    transfers: null,
    distinct_payers: null,
    newest_age_hours: null,
    oldest_age_hours: null,
    window_blocks: null,
    note: `NOT measured: ${why}`,
  };
}

const round1 = (n: number) => Math.round(n * 10) / 10;

/** Read the reputation of `payTo` on `network`; never throws for chain failures (they become 'NOT measured'). */
export async function payToReputation(payTo: string | null, payToNetwork: string | null, options: ReputationOptions): Promise<Reputation> {
  if (!payTo) return notMeasured("no payTo address in the challenge");
  if (payToNetwork !== options.network)
    return notMeasured(`payTo is on ${payToNetwork ?? "an unknown network"}, reputation is read on ${options.network} only`);
  if (!/^0x[0-9a-fA-F]{40}$/.test(payTo)) return notMeasured("payTo is not an EVM address");
  const to = getAddress(payTo);
  let chunk = 2_000n;
  const now = options.now ?? (() => new Date());
  try {
    const latest = await options.chain.getBlockNumber({ cacheTime: 0 });
    const floor = latest - REPUTATION_WINDOW_BLOCKS + 1n > 0n ? latest - REPUTATION_WINDOW_BLOCKS + 1n : 0n;
    const found: { from: `0x${string}`; block: bigint; index: number }[] = [];
    let toBlock = latest;
    while (toBlock >= floor && found.length < REPUTATION_TRANSFERS) {
      const fromBlock = toBlock - chunk + 1n > floor ? toBlock - chunk + 1n : floor;
      let logs: Awaited<ReturnType<typeof getTransfers>>;
      try {
        logs = await getTransfers(options.chain, options.usdc, to, fromBlock, toBlock);
      } catch (error) {
        // Providers cap eth_getLogs ranges differently; shrink and retry the same span.
        if (chunk > 125n && isRangeRefusal(error)) {
          chunk /= 2n;
          continue;
        }
        throw error;
      }
      const sorted = logs
        .map((l) => ({ from: l.args.from as `0x${string}`, block: l.blockNumber as bigint, index: l.logIndex as number }))
        .sort((a, b) => (a.block === b.block ? b.index - a.index : a.block > b.block ? -1 : 1));
      found.push(...sorted);
      toBlock = fromBlock - 1n;
    }
    const last = found.slice(0, REPUTATION_TRANSFERS);
    const payers = new Set(last.map((t) => t.from.toLowerCase())).size;
    const scanned = Number(latest - floor + 1n);
    if (last.length === 0) {
      return {
        measured: true,
        transfers: 0,
        distinct_payers: 0,
        newest_age_hours: null,
        oldest_age_hours: null,
        window_blocks: scanned,
        note: `no incoming USDC in the last ${scanned} blocks`,
      };
    }
    const newest = last[0] as (typeof last)[number];
    const oldest = last[last.length - 1] as (typeof last)[number];
    const [newestBlock, oldestBlock] = await Promise.all([
      options.chain.getBlock({ blockNumber: newest.block }),
      newest.block === oldest.block ? undefined : options.chain.getBlock({ blockNumber: oldest.block }),
    ]);
    const ageHours = (timestamp: bigint) => round1(Math.max(0, now().getTime() / 1000 - Number(timestamp)) / 3600);
    const newestAge = ageHours(newestBlock.timestamp);
    const oldestAge = ageHours((oldestBlock ?? newestBlock).timestamp);
    return {
      measured: true,
      transfers: last.length,
      distinct_payers: payers,
      newest_age_hours: newestAge,
      oldest_age_hours: oldestAge,
      window_blocks: scanned,
      note: `${last.length} incoming USDC transfer(s) from ${payers} payer(s), newest ${newestAge} h ago`,
    };
  } catch (error) {
    const wrapped = toChainError(error, "reading payTo transfers");
    const why = wrapped instanceof ServiceError ? wrapped.code.replaceAll("_", " ") : "unexpected failure";
    return notMeasured(`the RPC refused or failed the log query (${why})`);
  }
}

function getTransfers(chain: PublicClient, usdc: `0x${string}`, to: `0x${string}`, fromBlock: bigint, toBlock: bigint) {
  return chain.getLogs({ address: usdc, event: TRANSFER_EVENT, args: { to }, fromBlock, toBlock, strict: true });
}
