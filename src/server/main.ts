/**
 * `npm start`: check the configuration, build if the build is missing or stale, start the
 * local chain in local mode, then serve. Ctrl-C stops cleanly and keeps the chain's state.
 */
import { buildIsCurrent, ensureBuild } from "../build-stamp.ts";
import { ConfigError, loadConfig } from "../config.ts";
import { createLogger } from "../log.ts";
import { startService } from "./service.ts";

async function main(): Promise<void> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`Cannot start: ${error.message}`);
      process.exit(2);
    }
    throw error;
  }

  if (!buildIsCurrent()) {
    console.log("The build is missing or older than the sources: building first (npm run build)...");
    await ensureBuild();
  }

  const log = createLogger(config.logLevel);
  let devnet: Awaited<ReturnType<typeof import("../devnet/devnet.ts").startDevnet>> | undefined;
  if (config.mode === "local") {
    const { startDevnet } = await import("../devnet/devnet.ts");
    devnet = await startDevnet({ dataDir: config.dataDir, port: config.anvilPort, persist: true });
  }

  const service = await startService({ config, log, ...(devnet ? { devnet } : {}) });
  const lines =
    config.mode === "local" && devnet
      ? [
          "",
          `  LOCAL MODE: a development chain on this machine, not Base mainnet. Test USDC only.`,
          `  Service        ${service.url}   (routes: ${service.url}/ , ${service.url}/openapi.json)`,
          `  Chain (anvil)  ${devnet.rpcUrl}   chain id ${devnet.chainId}, state in ${config.dataDir}/anvil-state.json`,
          `  USDC           ${devnet.usdc}   (EIP-3009, "USD Coin" v2, 6 decimals)`,
          `  Pay-to         ${devnet.payTo}`,
          `  Facilitator    ${devnet.facilitator.address}   (pays gas for settlement)`,
          `  Buyers         ${devnet.buyers.length} funded accounts, keys in ${config.dataDir}/devnet.json`,
          `  Try it         npm run buy -- POST /api/payment-verify '{"tx_hash":"0x${"0".repeat(64)}"}'`,
          "",
        ]
      : [
          "",
          `  PRODUCTION MODE on ${config.network}`,
          `  Service        ${service.url}${config.publicUrl ? `   (public URL ${config.publicUrl})` : ""}`,
          `  RPC            ${config.rpcUrls.length} URL(s), used in order with fallback`,
          `  Pay-to         ${service.payTo}`,
          `  Facilitator    ${config.facilitator.kind === "remote" ? config.facilitator.url : `self-hosted, gas paid by ${service.facilitatorAddress}`}`,
          "",
        ];
  console.log(lines.join("\n"));

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info("stopping", { signal });
    await service.close();
    await devnet?.stop();
    process.exit(0);
  };
  process.on("SIGINT", () => void stop("SIGINT"));
  process.on("SIGTERM", () => void stop("SIGTERM"));
}

main().catch((error) => {
  console.error("Cannot start:", error instanceof Error ? error.message : error);
  process.exit(1);
});
