/**
 * `POST /api/entity-intel/trace`: where money went from an address or a transaction (or where
 * it came from), hop by hop. Each hop is one indexed-topic read for its whole frontier; a path
 * stops at a venue, where nothing moves on, where the money fans out, at max_hops, or when the
 * budget runs out, and every node says which.
 */
import { type Address, formatUnits, getAddress, type Hash, isHash, TransactionReceiptNotFoundError } from "viem";
import { ENTITY_LIMITS, TERMINALS, type Terminal, trace } from "../spec/routes/entity-intel.ts";
import { explained, TRACE_FAN_OUT_LIMIT, TRACE_MAX_FRONTIER } from "../src/analytics/methodology.ts";
import { analyticsOf } from "../src/analytics/services.ts";
import { smallestWorth, usdValue } from "../src/analytics/usd-value.ts";
import { TRANSFER_TOPIC, type TransferLog, transfersOf } from "../src/chain/log-scanner.ts";
import { toChainError } from "../src/chain/rpc-error.ts";
import { defineFunction } from "../src/context.ts";
import { describe, type EntityFacts, factsOf, type pricesOf, type TokenInfo, tokenInfos } from "../src/entity-intel/entities.ts";
import { cappedPrices, MAX_PRICED_TOKENS } from "../src/entity-intel/pricing.ts";
import { DEFAULT_BUDGET, resolveWindow, ScanBudget, scanBudgeted } from "../src/entity-intel/scan.ts";
import { tokenAddressOf } from "../src/entity-intel/token-input.ts";
import { InvalidRequestError, NotFoundError } from "../src/errors.ts";

/** A position on the chain: block, then log index. */
type Position = [number, number];
const before = (a: Position, b: Position) => a[0] < b[0] || (a[0] === b[0] && a[1] < b[1]);

export default defineFunction(trace, async (input, ctx) => {
  const { scanner, classifier, labels, prices } = analyticsOf(ctx);
  const budget = new ScanBudget(ctx.analytics?.entityBudget ?? DEFAULT_BUDGET);
  const direction = input.direction ?? "out";
  const maxHops = input.max_hops ?? ENTITY_LIMITS.maxHops;
  const minUsd = input.min_usd ?? ENTITY_LIMITS.minUsd;
  const token = tokenAddressOf(input.token, ctx.config.usdc);
  const window = await resolveWindow(scanner, input.blocks ?? ENTITY_LIMITS.blocks, input.to_block);
  const out = direction === "out";

  // Prices and decimals of every token met, fetched as tokens appear. Like the other entity
  // routes, one answer asks prices for at most MAX_PRICED_TOKENS tokens over all its hops (the
  // most active of each hop's new ones while any are left), since every price call spends the
  // DexScreener rate limit the whole service shares; a token past it stays unpriced, and the
  // answer lists it so a path stopped by it is not read as money that stayed put.
  const infos = new Map<Address, TokenInfo>();
  const priced = new Map<Address, Awaited<ReturnType<typeof pricesOf>> extends Map<Address, infer P> ? P : never>();
  const asked = new Set<Address>();
  const notLookedUp = new Set<Address>();
  let pricesLeft = ctx.analytics?.pricedTokens ?? MAX_PRICED_TOKENS;
  /** The smallest amount of each token met that is worth minUsd (none: unpriced, never qualifies). */
  const leastOf = new Map<Address, bigint>();
  const learn = async (logs: readonly TransferLog[]) => {
    const freshLogs = logs.filter((l) => !asked.has(l.token));
    const fresh = [...new Set(freshLogs.map((l) => l.token))];
    if (fresh.length === 0) return;
    for (const t of fresh) asked.add(t);
    const [i, p] = await Promise.all([tokenInfos(ctx.chain, fresh), cappedPrices(prices, freshLogs, { max: pricesLeft })]);
    pricesLeft -= Math.min(pricesLeft, fresh.length);
    for (const [t, v] of i) infos.set(t, v);
    for (const [t, v] of p.priced) priced.set(t, v);
    for (const t of p.notLookedUp) notLookedUp.add(t);
    // Worked out once per token rather than once per transfer scanned.
    for (const t of fresh) {
      const info = infos.get(t);
      const price = priced.get(t);
      const least = info && price ? smallestWorth(minUsd, info.decimals, price.exact) : null;
      if (least !== null) leastOf.set(t, least);
    }
  };
  const qualifies = (log: TransferLog) => {
    const least = leastOf.get(log.token);
    return least !== undefined && log.value >= least;
  };

  /**
   * `at`: where the money reached the node (out) or left it (in). `read`: the `at` its last
   * expansion started from (its transfers beyond it were followed then); undefined until it is
   * expanded. `queued`: it waits in the frontier. `movedOn`: an expansion followed money on.
   */
  type Node = {
    address: Address;
    hop: number;
    terminal: Terminal | null;
    at: Position;
    read?: Position;
    queued?: boolean;
    movedOn?: boolean;
  };
  const nodes = new Map<Address, Node>();
  const hops: { hop: number; edges: TransferLog[] }[] = [];
  /** The edges listed so far, by block and log index: a node expanded again never lists one twice. */
  const listed = new Set<string>();
  const keyOf = (l: TransferLog) => `${l.blockNumber}:${l.logIndex}`;
  let truncated = false;
  let frontier: Node[] = [];
  let firstHop = 1;

  // Reached again: the money can move on from the earliest arrival (out) or the latest departure (in).
  // A node still waiting to be expanded just moves its `at`; one already expanded (or a start of a
  // transaction trace, never expanded) is expanded again over the part it has not read, or the
  // money that came back by another path, or in a loop, would be lost without a word.
  const reopenable = new Set<Terminal | null>([null, "no_further_transfers", "tokens_not_priced"]);
  const reach = (log: TransferLog, hop: number): Node | undefined => {
    const next = out ? log.to : log.from;
    const at: Position = [log.blockNumber, log.logIndex];
    const known = nodes.get(next);
    if (known) {
      if (!(out ? before(at, known.at) : before(known.at, at))) return undefined;
      if (known.queued) {
        known.at = at;
        return undefined;
      }
      const cls = described.get(known.address)?.class;
      if (!reopenable.has(known.terminal) || cls === "cex" || cls === "bridge" || cls === "dex" || cls === "zero_address") {
        return undefined;
      }
      known.at = at;
      known.terminal = null;
      known.queued = true;
      return known;
    }
    const node: Node = { address: next, hop, terminal: null, at, queued: true };
    nodes.set(next, node);
    return node;
  };
  /** Whether a transfer at `p` is one the node's expansion has not followed yet. */
  const unread = (node: Node, p: Position) =>
    out
      ? before(node.at, p) && (node.read === undefined || !before(node.read, p))
      : before(p, node.at) && (node.read === undefined || !before(p, node.read));
  // New and re-reached nodes stop at a venue, at a burn or mint (the zero address), or at max_hops; the rest go on.
  const settle = async (fresh: Node[], hop: number, facts: Map<Address, EntityFacts>) => {
    const next: Node[] = [];
    for (const node of fresh) {
      const cls = facts.get(node.address)?.class;
      if (cls === "cex" || cls === "bridge" || cls === "dex") node.terminal = cls;
      else if (cls === "zero_address") node.terminal = "no_further_transfers";
      else if (hop >= maxHops) node.terminal = "max_hops";
      else next.push(node);
    }
    const going = new Set(next);
    for (const node of fresh) node.queued = going.has(node);
    return next;
  };
  const described = new Map<Address, EntityFacts>();
  const describeNew = async (addresses: Address[]) => {
    const fresh = addresses.filter((a) => !described.has(a));
    if (fresh.length === 0) return described;
    for (const [a, f] of await describe(fresh, labels, classifier)) described.set(a, f);
    return described;
  };

  let origin: string;
  let originKind: "address" | "transaction";
  if (isHash(input.from) && input.from.length === 66) {
    originKind = "transaction";
    origin = input.from;
    const receipt = await ctx.chain.getTransactionReceipt({ hash: input.from as Hash }).catch((error: unknown) => {
      if (error instanceof TransactionReceiptNotFoundError) return null;
      throw toChainError(error, "reading the transaction");
    });
    if (!receipt) throw new NotFoundError(`No transaction ${input.from} on this chain.`, { from: input.from });
    const block = Number(receipt.blockNumber);
    if (block < window.fromBlock || block > window.toBlock) {
      throw new InvalidRequestError(
        `Invalid request: the transaction is in block ${block}, outside the window ${window.fromBlock}-${window.toBlock}.`,
        [
          {
            field: "body.from",
            expected: `a transaction in blocks ${window.fromBlock}-${window.toBlock} (or widen blocks / set to_block)`,
            received: input.from,
          },
        ],
      );
    }
    // Read as the scanner reads Transfer logs: ERC-20's only (ERC-721's indexed token id makes a fourth topic).
    const transfers = receipt.logs.filter((log) => log.topics[0] === TRANSFER_TOPIC);
    const logs = transfersOf(transfers, undefined).filter((log) => !token || log.token === token);
    await learn(logs);
    const edges = logs.filter(qualifies);
    for (const e of edges) {
      const start = out ? e.from : e.to;
      // Money the transaction moved away has not reached its start, so no position is `at` yet.
      if (!nodes.has(start)) {
        nodes.set(start, {
          address: start,
          hop: 0,
          terminal: null,
          at: out ? [Number.POSITIVE_INFINITY, 0] : [Number.NEGATIVE_INFINITY, 0],
        });
      }
    }
    const fresh = edges.map((e) => reach(e, 1)).filter((n): n is Node => n !== undefined);
    hops.push({ hop: 1, edges });
    for (const e of edges) listed.add(keyOf(e));
    frontier = await settle(fresh, 1, await describeNew([...nodes.keys()]));
    firstHop = 2;
  } else {
    originKind = "address";
    const address = getAddress(input.from);
    origin = address;
    const start: Node = { address, hop: 0, terminal: null, at: out ? [window.fromBlock, -1] : [window.toBlock + 1, 0] };
    nodes.set(address, start);
    await describeNew([address]);
    frontier = [start];
  }

  for (let hop = firstHop; hop <= maxHops && frontier.length > 0; hop++) {
    if (budget.exhausted()) {
      for (const node of frontier) node.terminal = "budget";
      truncated = true;
      break;
    }
    for (const node of frontier) node.queued = false;
    const expanding = frontier.slice(0, TRACE_MAX_FRONTIER);
    for (const node of frontier.slice(TRACE_MAX_FRONTIER)) node.terminal = "budget";
    if (frontier.length > TRACE_MAX_FRONTIER) truncated = true;
    const addresses = expanding.map((n) => n.address);
    const scanWindow = out
      ? { ...window, fromBlock: Math.max(window.fromBlock, Math.min(...expanding.map((n) => n.at[0]))) }
      : { ...window, toBlock: Math.min(window.toBlock, Math.max(...expanding.map((n) => n.at[0]))) };
    const result = await scanBudgeted(scanner, [out ? { token, from: addresses } : { token, to: addresses }], scanWindow, budget);
    if (result.truncated) {
      for (const node of expanding) node.terminal = "budget";
      truncated = true;
      break;
    }
    await learn(result.logs);
    const edges: TransferLog[] = [];
    for (const node of expanding) {
      const onward = result.logs.filter(
        (l) => (out ? l.from : l.to) === node.address && unread(node, [l.blockNumber, l.logIndex]) && !listed.has(keyOf(l)),
      );
      node.read = node.at;
      const own = onward.filter(qualifies);
      if (own.length === 0) {
        // A transfer in a token past the price cap may well be worth min_usd: the trace cannot
        // tell, so it does not claim that nothing moved on.
        if (!node.movedOn) {
          node.terminal = onward.some((l) => notLookedUp.has(l.token)) ? "tokens_not_priced" : "no_further_transfers";
        }
        continue;
      }
      if (new Set(own.map((l) => (out ? l.to : l.from))).size > TRACE_FAN_OUT_LIMIT) {
        node.terminal = "fan_out_limit";
        continue;
      }
      node.movedOn = true;
      edges.push(...own);
    }
    edges.sort((a, b) => a.blockNumber - b.blockNumber || a.logIndex - b.logIndex);
    for (const e of edges) listed.add(keyOf(e));
    const fresh = edges.map((e) => reach(e, hop)).filter((n): n is Node => n !== undefined);
    hops.push({ hop, edges });
    frontier = await settle(fresh, hop, await describeNew(fresh.map((n) => n.address)));
  }

  const reached = Object.fromEntries(TERMINALS.map((t) => [t, 0])) as Record<Terminal, number>;
  for (const node of nodes.values()) if (node.terminal) reached[node.terminal]++;
  return {
    origin,
    origin_kind: originKind,
    direction,
    token: token ?? null,
    min_usd: minUsd,
    max_hops: maxHops,
    from_block: window.fromBlock,
    to_block: window.toBlock,
    hops: hops.map(({ hop, edges }) => ({
      hop,
      edges: edges.map((e) => {
        const info = infos.get(e.token) as TokenInfo;
        const price = priced.get(e.token);
        return {
          from: e.from,
          to: e.to,
          token: e.token,
          symbol: info.symbol,
          amount: formatUnits(e.value, info.decimals),
          amount_usd: price ? usdValue(e.value, info.decimals, price.exact) : 0,
          tx_hash: e.txHash,
          block: e.blockNumber,
          log_index: e.logIndex,
        };
      }),
    })),
    nodes: [...nodes.values()]
      .sort((a, b) => a.hop - b.hop)
      .map((n) => ({ address: n.address, hop: n.hop, ...factsOf(described, n.address), terminal: n.terminal })),
    reached,
    truncated,
    tokens_not_looked_up: [...notLookedUp],
    budget: budget.report(),
    ...explained("entity-intel/trace"),
  };
});
