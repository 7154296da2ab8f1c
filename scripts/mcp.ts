/**
 * `npm run mcp`: a stdio MCP server whose tools are this service's routes on both sites
 * (src/mcp/stdio.ts). It calls BASE_URL (default http://127.0.0.1:$PORT, port 4021) for the
 * `/api/` routes and SECONDARY_BASE_URL (default http://127.0.0.1:$SECONDARY_PORT, port 4022) for
 * the secondary site's (`/v1/` and its `/health`), and pays paid tools with
 * BUYER_PRIVATE_KEY, at most MCP_MAX_PRICE_USD per call and MCP_MAX_SPEND_USD per session
 * (both default 1.00). Stdout carries the MCP messages only; diagnostics go to stderr.
 */
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { routes, secondaryRoutes } from "../spec/routes.ts";
import { createStdioServer, McpSettingsError, stdioSettingsFromEnv } from "../src/mcp/stdio.ts";
import { usd } from "../src/mcp/tools.ts";

let settings: ReturnType<typeof stdioSettingsFromEnv>;
try {
  settings = stdioSettingsFromEnv();
} catch (error) {
  if (!(error instanceof McpSettingsError)) throw error;
  console.error(`mcp: cannot start: ${error.message}`);
  process.exit(2);
}

const server = createStdioServer({
  routes,
  secondary: { routes: secondaryRoutes, baseUrl: settings.secondaryBaseUrl },
  ...settings,
});
await server.connect(new StdioServerTransport());
const buyer = settings.buyer ? `paying as ${settings.buyer.address}` : "no BUYER_PRIVATE_KEY: free tools only";
console.error(
  `mcp: ${routes.length + secondaryRoutes.length} tools calling ${settings.baseUrl} and ${settings.secondaryBaseUrl}, ${buyer}, caps ${usd(settings.caps.maxPerCall)} per call and ${usd(settings.caps.maxSession)} per session`,
);
