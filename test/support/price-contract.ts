/**
 * The price contract: every route under `/api/` (and, in SECONDARY_PRICE_CONTRACT, every route of the secondary site) with its price in USD and the atomic USDC
 * amount (6 decimals) its 402 challenge quotes, written out by hand from the endpoint tables of
 * README.md and docs/endpoints.md (and checked against `spec/routes/*.ts` when written). Tests compare what the
 * service serves with this table, never with `spec/routes.ts`: the documents and challenges
 * are generated from the route table, so comparing them with it again could not fail when a
 * price changes there.
 */

/** One route of the contract; `usd` and `atomic` are null for a free route. */
export interface ContractRoute {
  readonly method: "GET" | "POST";
  readonly path: string;
  readonly usd: number | null;
  readonly atomic: string | null;
}

const paid = (method: "GET" | "POST", path: string, usd: number, atomic: string): ContractRoute => ({ method, path, usd, atomic });
const free = (method: "GET" | "POST", path: string): ContractRoute => ({ method, path, usd: null, atomic: null });

/** Every route, in the order of docs/endpoints.md's endpoint table. */
export const PRICE_CONTRACT: readonly ContractRoute[] = [
  free("GET", "/api/health"),
  free("GET", "/api/pricing"),
  paid("POST", "/api/payment-verify", 0.1, "100000"),
  paid("POST", "/api/wallet-profile", 0.1, "100000"),
  paid("POST", "/api/gas-tracker", 0.1, "100000"),
  paid("POST", "/api/token-check", 0.1, "100000"),
  paid("POST", "/api/whale-watch", 0.1, "100000"),
  paid("POST", "/api/defi-sentiment", 0.1, "100000"),
  free("GET", "/api/markets"),
  free("GET", "/api/entity-intel"),
  paid("POST", "/api/entity-intel/use-cases", 0.1, "100000"),
  paid("POST", "/api/entity-intel/exchange-flow", 0.1, "100000"),
  paid("POST", "/api/entity-intel/portfolio", 0.1, "100000"),
  paid("POST", "/api/entity-intel/counterparties", 0.1, "100000"),
  paid("POST", "/api/entity-intel/trace", 0.1, "100000"),
  paid("POST", "/api/entity-intel/venue-users", 0.1, "100000"),
  free("GET", "/api/compute/playbook-bundle"),
  paid("POST", "/api/compute/playbook-bundle", 0.91, "910000"),
  free("GET", "/api/howto"),
  paid("GET", "/api/howto/create-x402-endpoint", 0.3, "300000"),
  paid("POST", "/api/howto/create-x402-endpoint", 0.3, "300000"),
  paid("GET", "/api/howto/vps-gdrive-connect", 0.1, "100000"),
  paid("POST", "/api/howto/vps-gdrive-connect", 0.1, "100000"),
  paid("GET", "/api/howto/x402-register", 0.3, "300000"),
  paid("POST", "/api/howto/x402-register", 0.3, "300000"),
  paid("GET", "/api/howto/youtube-auto-ai", 0.1, "100000"),
  paid("POST", "/api/howto/youtube-auto-ai", 0.1, "100000"),
  free("GET", "/api/kb"),
  free("GET", "/api/kb/categories"),
  free("GET", "/api/kb/search"),
  paid("POST", "/api/kb/ask", 0.03, "30000"),
  free("GET", "/api/ads"),
  paid("POST", "/api/chat", 0.1, "100000"),
  // The top-up's price is its ?amount= (1 to 100 USD); unpaid without one it quotes the default, 5.
  paid("POST", "/api/balance/topup", 5, "5000000"),
  free("GET", "/api/balance"),
  paid("POST", "/api/x402-check", 0.1, "100000"),
  paid("POST", "/api/x402-directory", 0.1, "100000"),
  paid("POST", "/api/x402-trust", 0.05, "50000"),
  paid("GET", "/api/trust-leaderboard", 0.05, "50000"),
  paid("POST", "/api/trust-leaderboard", 0.05, "50000"),
  free("GET", "/api/trust-leaderboard/preview"),
  free("GET", "/api/status.json"),
];

/**
 * The secondary site's routes (Base token-risk tools, served on its own origin), in the order of
 * docs/endpoints.md's table of that site.
 */
export const SECONDARY_PRICE_CONTRACT: readonly ContractRoute[] = [
  free("GET", "/health"),
  paid("POST", "/v1/honeypot-check", 0.05, "50000"),
  paid("POST", "/v1/meme-hunter", 0.1, "100000"),
  paid("POST", "/v1/dinalibrium", 0.1, "100000"),
  paid("POST", "/v1/wallet-profile", 0.1, "100000"),
  paid("POST", "/v1/defi-sentiment", 0.1, "100000"),
];

/** The secondary site's paid routes. */
export const SECONDARY_PAID_CONTRACT: readonly ContractRoute[] = SECONDARY_PRICE_CONTRACT.filter((r) => r.usd !== null);

/** The paid routes of the contract. */
export const PAID_CONTRACT: readonly ContractRoute[] = PRICE_CONTRACT.filter((r) => r.usd !== null);

/** `"POST /api/x"`, the key the discovery documents use. */
export function contractKey(route: { method: string; path: string }): string {
  return `${route.method} ${route.path}`;
}

/** The contract entry of `method path`; throws for a route the contract does not list. */
export function contractOf(method: string, path: string): ContractRoute {
  const found = PRICE_CONTRACT.find((r) => r.method === method && r.path === path);
  if (!found) throw new Error(`${method} ${path} is not in the price contract (test/support/price-contract.ts)`);
  return found;
}
