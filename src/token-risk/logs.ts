/**
 * Reading logs of several contracts and event kinds over a block window, in chunks of 2,000
 * blocks aligned like the Transfer scanner's, a few at a time, splitting a range the provider
 * refuses (to the limit it names, else in halves) until it is accepted.
 */
import pLimit from "p-limit";
import { type Address, type Hex, numberToHex, type PublicClient } from "viem";
import { DEFAULT_CHUNK_SIZE, isRangeRefusal, rangeLimitFromRefusal } from "../chain/log-scanner.ts";
import { toChainError } from "../chain/rpc-error.ts";

/** A raw log as the node returns it. */
export interface RawLog {
  address: Address;
  topics: Hex[];
  data: Hex;
  blockNumber: Hex;
  logIndex: Hex;
  transactionHash: Hex;
  removed?: boolean;
}

/** What to read: logs of `addresses` whose first topic is one of `events`, in `[fromBlock, toBlock]`. */
export interface LogQuery {
  addresses: readonly Address[];
  events: readonly Hex[];
  fromBlock: number;
  toBlock: number;
}

/** Every log of the query in chain order. */
export async function readLogs(
  chain: PublicClient,
  query: LogQuery,
  options: { chunkSize?: number; concurrency?: number } = {},
): Promise<RawLog[]> {
  if (query.addresses.length === 0 || query.toBlock < query.fromBlock) return [];
  const size = options.chunkSize ?? DEFAULT_CHUNK_SIZE;
  const starts: number[] = [];
  for (let start = Math.floor(query.fromBlock / size) * size; start <= query.toBlock; start += size) starts.push(start);
  const parts = await pLimit(options.concurrency ?? 4).map(starts, (start) =>
    fetchRange(chain, query, Math.max(start, query.fromBlock), Math.min(start + size - 1, query.toBlock)),
  );
  return parts.flat().sort((a, b) => Number(a.blockNumber) - Number(b.blockNumber) || Number(a.logIndex) - Number(b.logIndex));
}

async function fetchRange(chain: PublicClient, query: LogQuery, from: number, to: number): Promise<RawLog[]> {
  try {
    const logs = (await chain.request({
      method: "eth_getLogs",
      params: [{ address: [...query.addresses], topics: [[...query.events]], fromBlock: numberToHex(from), toBlock: numberToHex(to) }],
    } as never)) as RawLog[];
    return logs.filter((l) => !l.removed);
  } catch (error) {
    const size = to - from + 1;
    if (!isRangeRefusal(error) || size === 1) throw toChainError(error, `reading logs of blocks ${from}-${to}`);
    const named = rangeLimitFromRefusal(error);
    const step = named !== undefined && named < size ? Math.max(1, named) : Math.ceil(size / 2);
    const out: RawLog[] = [];
    for (let start = from; start <= to; start += step) out.push(...(await fetchRange(chain, query, start, Math.min(to, start + step - 1))));
    return out;
  }
}
