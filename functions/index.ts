/**
 * Every function of the service, and `functionFor`, the lookup `src/dispatch.ts` uses to find
 * the one answering a route. Each module binds its entry of `spec/routes/<area>.ts` with
 * `defineFunction` (`src/context.ts`); a new route's module is added to `functions` here. The
 * checks below run once, when this module loads: a route of `spec/routes.ts` without a
 * function, with two, or a function whose route is not in the table stops the service at start.
 */
import { type RouteDef, routeKey } from "../spec/route.ts";
import { allRoutes } from "../spec/routes.ts";
import type { RouteFunction } from "../src/context.ts";
import ads from "./ads.ts";
import balance from "./balance.ts";
import balanceTopup from "./balance-topup.ts";
import chat from "./chat.ts";
import defiSentiment from "./defi-sentiment.ts";
import dinalibrium from "./dinalibrium.ts";
import entityCounterparties from "./entity-intel-counterparties.ts";
import entityExchangeFlow from "./entity-intel-exchange-flow.ts";
import entityIntelIndex from "./entity-intel-index.ts";
import entityPortfolio from "./entity-intel-portfolio.ts";
import entityTrace from "./entity-intel-trace.ts";
import entityUseCases from "./entity-intel-use-cases.ts";
import entityVenueUsers from "./entity-intel-venue-users.ts";
import gasTracker from "./gas-tracker.ts";
import health from "./health.ts";
import honeypotCheck from "./honeypot-check.ts";
import howto from "./howto.ts";
import howtoIndex from "./howto-index.ts";
import kbAsk from "./kb-ask.ts";
import kbCategories from "./kb-categories.ts";
import kbList from "./kb-list.ts";
import kbSearch from "./kb-search.ts";
import markets from "./markets.ts";
import memeHunter from "./meme-hunter.ts";
import paymentVerify from "./payment-verify.ts";
import playbookBundleBuy from "./playbook-bundle-buy.ts";
import playbookBundlePreview from "./playbook-bundle-preview.ts";
import pricing from "./pricing.ts";
import solanaDefiSentiment from "./solana-defi-sentiment.ts";
import solanaDinalibrium from "./solana-dinalibrium.ts";
import solanaMemeHunter from "./solana-meme-hunter.ts";
import solanaWalletProfile from "./solana-wallet-profile.ts";
import status from "./status.ts";
import tokenCheck from "./token-check.ts";
import trustLeaderboard from "./trust-leaderboard.ts";
import v1DefiSentiment from "./v1-defi-sentiment.ts";
import v1Health from "./v1-health.ts";
import v1WalletProfile from "./v1-wallet-profile.ts";
import walletProfile from "./wallet-profile.ts";
import whaleWatch from "./whale-watch.ts";
import x402Check from "./x402-check.ts";
import x402Directory from "./x402-directory.ts";
import x402Trust from "./x402-trust.ts";

/** Every function, in the order of the route table. */
export const functions: readonly RouteFunction[] = [
  // spec/routes/core.ts
  health,
  pricing,
  paymentVerify,
  // spec/routes/content.ts
  playbookBundlePreview,
  playbookBundleBuy,
  howtoIndex,
  ...howto,
  kbList,
  kbCategories,
  kbSearch,
  kbAsk,
  ads,
  // spec/routes/analytics.ts
  walletProfile,
  gasTracker,
  tokenCheck,
  whaleWatch,
  defiSentiment,
  markets,
  // spec/routes/entity-intel.ts
  entityIntelIndex,
  entityUseCases,
  entityExchangeFlow,
  entityPortfolio,
  entityCounterparties,
  entityTrace,
  entityVenueUsers,
  // spec/routes/assistant.ts
  chat,
  balanceTopup,
  balance,
  // spec/routes/intel.ts
  x402Check,
  x402Directory,
  x402Trust,
  ...trustLeaderboard,
  // spec/routes/status.ts
  status,
  // spec/routes/base-tools.ts (the secondary site)
  v1Health,
  honeypotCheck,
  memeHunter,
  dinalibrium,
  v1WalletProfile,
  v1DefiSentiment,
  // spec/routes/solana.ts (the Solana site)
  solanaMemeHunter,
  solanaDefiSentiment,
  solanaDinalibrium,
  solanaWalletProfile,
];

/** Each route of the table to its function, keyed by the route object itself. */
const byRoute = new Map<RouteDef, RouteFunction>();
{
  const inTable = new Set<RouteDef>(allRoutes);
  for (const fn of functions) {
    const key = routeKey(fn.route);
    if (!inTable.has(fn.route)) throw new Error(`functions/index.ts: a function answers ${key}, which is not a route of spec/routes.ts`);
    if (byRoute.has(fn.route)) throw new Error(`functions/index.ts: ${key} has two functions`);
    byRoute.set(fn.route, fn);
  }
  const missing = allRoutes.filter((r) => !byRoute.has(r)).map(routeKey);
  if (missing.length > 0) throw new Error(`functions/index.ts: no function answers ${missing.join(", ")}`);
}

/** The function answering `route`, a route of `spec/routes.ts`. */
export function functionFor(route: RouteDef): RouteFunction {
  const fn = byRoute.get(route);
  if (!fn) throw new Error(`${routeKey(route)} is not a route of spec/routes.ts`);
  return fn;
}
