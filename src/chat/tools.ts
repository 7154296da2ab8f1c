/**
 * The chat's data tools as an LLM sees them (OpenAI-compatible function calling): prices,
 * the watched markets, perpetual funding and open interest, gas, protocol TVL and the knowledge base. Each
 * runs on the same facts as the built-in engine and returns a JSON result for the model and
 * the sources it contributes; an upstream failure becomes an error result the model must
 * report, never a figure.
 */
import { type TObject, Type } from "@sinclair/typebox";
import { ClosedObject, NoInput } from "../../spec/schemas.ts";
import { UpstreamError } from "../errors.ts";
import type { ChatDeps } from "./deps.ts";
import {
  gasFact,
  gasFigures,
  MissingFigure,
  marketFigures,
  perpFact,
  perpFigures,
  priceFact,
  priceFigures,
  protocolsNamed,
  resolveAsset,
  tvlFact,
  tvlFigures,
  WATCHED_SYMBOLS,
} from "./facts.ts";
import type { ChatSource } from "./sources.ts";

const AssetParameter = ClosedObject({
  asset: Type.String({ description: "A ticker (ETH, BTC, cbETH, AERO, USDC, SOL, HYPE...) or a Base token contract address (0x...)." }),
});

/** One tool of the chat-completions `tools` array: its parameters are a JSON schema, written with TypeBox. */
const tool = (name: string, description: string, parameters: TObject = NoInput) => ({
  type: "function" as const,
  function: { name, description, parameters },
});

/** The tools offered to the model. */
export const CHAT_TOOLS = [
  tool(
    "get_price",
    "Live USD price and 24 h change of one asset: Base spot price from its deepest DEX pair (DexScreener, DefiLlama as fallback), or the Hyperliquid perpetual's mark price for assets not on Base.",
    AssetParameter,
  ),
  tool("get_markets", `Live prices and 24 h changes of the watched Base tokens (${WATCHED_SYMBOLS.join(", ")}).`),
  tool(
    "get_funding",
    "Hyperliquid perpetual of one asset: hourly and 8-hour funding rate in percent, open interest in coins and USD, mark price, 24 h change.",
    AssetParameter,
  ),
  tool(
    "get_gas",
    "Gas on Base now: next block's base fee, low/medium/high priority fees in gwei, USD cost of an ETH and an ERC-20 transfer.",
  ),
  tool(
    "get_tvl",
    "A DeFi protocol's total value locked in USD and its 24 h change, from DefiLlama; a parent name (aave, uniswap) covers all its versions.",
    ClosedObject({ protocol: Type.String({ description: "The protocol as DefiLlama names it: aave, aave-v3, morpho-blue, moonwell..." }) }),
  ),
  tool(
    "search_knowledge_base",
    "Search the knowledge base about x402 payments on Base (facilitators, headers, USDC, gas, verification).",
    ClosedObject({ query: Type.String({ description: "The question or keywords." }) }),
  ),
] as const;

/** What a tool call gives back. */
export interface ToolResult {
  /** JSON sent to the model as the tool message's content. */
  content: Record<string, unknown>;
  sources: ChatSource[];
}

function stringArgument(args: Record<string, unknown>, name: string): string | undefined {
  const value = args[name];
  return typeof value === "string" && value.trim() !== "" ? value.trim() : undefined;
}

/** Run tool `name` with the model's `args`; unknown tools and bad arguments are error results, not exceptions. */
export async function runChatTool(deps: ChatDeps, name: string, args: Record<string, unknown>): Promise<ToolResult> {
  try {
    return await run(deps, name, args);
  } catch (error) {
    if (error instanceof UpstreamError) {
      return {
        content: {
          error: { code: error.code, upstream: error.upstream, message: `${error.upstream} is not answering; no figure available.` },
        },
        sources: [],
      };
    }
    if (error instanceof MissingFigure) return failed("no_figure", error.message);
    throw error;
  }
}

async function run(deps: ChatDeps, name: string, args: Record<string, unknown>): Promise<ToolResult> {
  switch (name) {
    case "get_price": {
      const asset = stringArgument(args, "asset");
      if (!asset) return badArguments("asset");
      const ref = await resolveAsset(deps, asset);
      if (!ref) return unknownAsset(asset);
      const fact = await priceFact(deps, ref);
      return {
        content: {
          asset: fact.label,
          symbol: fact.symbol,
          price_usd: fact.price_usd,
          change_24h_pct: fact.change_24h_pct,
          basis: fact.basis,
          source: fact.source,
          venue: fact.venue,
          fetched_at: fact.fetched_at,
        },
        sources: priceFigures(fact),
      };
    }
    case "get_markets": {
      const { pairs } = await deps.markets();
      return {
        content: {
          pairs: pairs.map((p) => ({
            symbol: p.symbol,
            price_usd: p.price_usd,
            change_24h_pct: p.change_24h_pct,
            source: p.source,
            fetched_at: p.fetched_at,
          })),
        },
        sources: marketFigures(pairs),
      };
    }
    case "get_funding": {
      const asset = stringArgument(args, "asset");
      if (!asset) return badArguments("asset");
      const ref = await resolveAsset(deps, asset);
      const perpName = !ref ? asset.toUpperCase() : ref.kind === "perp" ? ref.name : ref.kind === "watched" ? ref.perp : null;
      const fact = perpName ? await perpFact(deps, perpName) : null;
      if (!fact) return failed("no_perpetual", `Hyperliquid lists no perpetual for ${asset}.`);
      return { content: { ...fact, source: "hyperliquid" }, sources: perpFigures(fact, { funding: true, oi: true }) };
    }
    case "get_gas": {
      const gas = await gasFact(deps);
      return { content: { ...gas }, sources: gasFigures(gas) };
    }
    case "get_tvl": {
      const protocol = stringArgument(args, "protocol");
      if (!protocol) return badArguments("protocol");
      const [slug] = await protocolsNamed(deps, protocol);
      if (!slug) return failed("unknown_protocol", `DefiLlama lists no protocol named ${protocol}.`);
      const fact = await tvlFact(deps, slug);
      return { content: { ...fact, source: "defillama" }, sources: tvlFigures(fact) };
    }
    case "search_knowledge_base": {
      const query = stringArgument(args, "query");
      if (!query) return badArguments("query");
      const { matches, best } = deps.kb.ask(query);
      if (best) {
        return {
          content: { best_match: { id: best.id, title: best.title, answer: best.answer } },
          sources: [{ kind: "kb", id: best.id, title: best.title, source: "knowledge-base" }],
        };
      }
      const top = matches.slice(0, 3);
      return {
        content: { best_match: null, matches: top.map((m) => ({ id: m.id, title: m.title })) },
        sources: top.map((m) => ({ kind: "kb", id: m.id, title: m.title, source: "knowledge-base" })),
      };
    }
    default:
      return failed("unknown_tool", `There is no tool named ${name}.`);
  }
}

/** A result with no figure: the model must say what it could not get. */
function failed(code: string, message: string): ToolResult {
  return { content: { error: { code, message } }, sources: [] };
}

function badArguments(field: string): ToolResult {
  return failed("invalid_arguments", `The argument "${field}" (a non-empty string) is required.`);
}

function unknownAsset(asset: string): ToolResult {
  return failed(
    "unknown_asset",
    `${asset} is not a watched Base token (${WATCHED_SYMBOLS.join(", ")}) nor a Hyperliquid perpetual; a Base contract address can be priced.`,
  );
}
