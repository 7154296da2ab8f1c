/**
 * `npm run mcp`: a stdio MCP server whose tools are this service's routes on both sites
 * (scripts/mcp/stdio.ts). It calls BASE_URL (default http://127.0.0.1:$PORT, port 4021) for the
 * `/api/` routes and SECONDARY_BASE_URL (default http://127.0.0.1:$SECONDARY_PORT, port 4022) for
 * the secondary site's (`/v1/` and its `/health`), and SOLANA_BASE_URL (default
 * http://127.0.0.1:$SOLANA_PORT, port 4023) for the Solana site's, and pays paid tools with
 * BUYER_PRIVATE_KEY (Solana's with SOLANA_BUYER_KEY and SOLANA_RPC_URL; in local mode a devnet
 * Solana buyer from data/devnet.json when they are not set), at most MCP_MAX_PRICE_USD per call and MCP_MAX_SPEND_USD per session
 * (both default 1.00), only to MCP_EXPECTED_PAY_TO (MCP_EXPECTED_SOLANA_PAY_TO on Solana; locally,
 * with the origins left at their defaults, the devnet's payees) when set. Stdout carries the MCP messages only; diagnostics go to stderr.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { baseToolsRoutes } from "../spec/routes/base-tools.ts";
import { solanaRoutes } from "../spec/routes/solana.ts";
import { routes } from "../spec/routes.ts";
import { usd } from "../src/mcp/tools.ts";
import { createStdioServer, McpSettingsError, stdioSettingsFromEnv } from "./mcp/stdio.ts";

let settings: ReturnType<typeof stdioSettingsFromEnv>;
try {
  settings = stdioSettingsFromEnv();
} catch (error) {
  if (!(error instanceof McpSettingsError)) throw error;
  console.error(`mcp: cannot start: ${error.message}`);
  process.exit(2);
}

// Local mode: the devnet's Solana buyer and RPC, unless the environment names them.
const devnetFile = path.join(process.env.DATA_DIR || "data", "devnet.json");
const devnet = existsSync(devnetFile)
  ? (JSON.parse(readFileSync(devnetFile, "utf8")) as {
      payTo?: string;
      solana?: { siteUrl: string; rpcUrl: string; payTo?: string; buyers: { secretKey: string }[] };
    })
  : undefined;
const localSolana = !process.env.SOLANA_BUYER_KEY ? devnet?.solana : undefined;
// The payee a challenge must name: the setting, or, for a site called at its local default, the devnet's.
const expectedPayTo = settings.expectedPayTo ?? (!process.env.BASE_URL ? devnet?.payTo : undefined);
const expectedSolanaPayTo = settings.expectedSolanaPayTo ?? (!process.env.SOLANA_BASE_URL ? devnet?.solana?.payTo : undefined);
const solanaBuyer =
  settings.solanaBuyer ?? (localSolana?.buyers[0] ? { secretKey: localSolana.buyers[0].secretKey, rpcUrl: localSolana.rpcUrl } : undefined);
const solanaBaseUrl = process.env.SOLANA_BASE_URL ? settings.solanaBaseUrl : (localSolana?.siteUrl ?? settings.solanaBaseUrl);

const server = createStdioServer({
  routes,
  secondary: { routes: baseToolsRoutes, baseUrl: settings.secondaryBaseUrl },
  solana: { routes: solanaRoutes, baseUrl: solanaBaseUrl, buyer: solanaBuyer },
  ...settings,
  expectedPayTo,
  expectedSolanaPayTo,
});
await server.connect(new StdioServerTransport());
const buyer = settings.buyer ? `paying as ${settings.buyer.address}` : "no BUYER_PRIVATE_KEY: free tools only";
console.error(
  `mcp: ${routes.length + baseToolsRoutes.length + solanaRoutes.length} tools calling ${settings.baseUrl}, ${settings.secondaryBaseUrl} and ${solanaBaseUrl} (Solana${solanaBuyer ? "" : ": no SOLANA_BUYER_KEY, free tools only"}), ${buyer}, caps ${usd(settings.caps.maxPerCall)} per call and ${usd(settings.caps.maxSession)} per session, payee ${expectedPayTo ?? "not checked (MCP_EXPECTED_PAY_TO)"}`,
);
