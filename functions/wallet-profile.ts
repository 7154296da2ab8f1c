/**
 * `POST /api/wallet-profile`: one address read at one block: code and class, ETH and USDC
 * balances, nonce, USDC transfers in the last day of blocks, curated labels. The same function
 * answers the secondary site's `POST /v1/wallet-profile`.
 */
import { erc20Abi, formatEther, formatUnits, getAddress } from "viem";
import { walletProfile } from "../spec/routes/analytics.ts";
import { walletProfileV1 } from "../spec/routes/base-tools.ts";
import { methodologyFor, WALLET_ACTIVITY_WINDOW_BLOCKS } from "../src/analytics/methodology.ts";
import { servedChainId } from "../src/analytics/served-chain.ts";
import { analyticsOf } from "../src/analytics/services.ts";
import { readChain } from "../src/chain/rpc-error.ts";
import { defineFunction } from "../src/context.ts";

export default [walletProfile, walletProfileV1].map((route) =>
  defineFunction(route, async (input, ctx) => {
    const chainId = servedChainId(input.chain_id, ctx);
    const { scanner, classifier, labels } = analyticsOf(ctx);
    const address = getAddress(input.address);
    const usdc = ctx.config.usdc;

    const { latest, finalized } = await scanner.head();
    const blockNumber = BigInt(latest);
    const [balance, nonce, balanceUsdc] = await readChain("reading the address", () =>
      Promise.all([
        ctx.chain.getBalance({ address, blockNumber }),
        ctx.chain.getTransactionCount({ address, blockNumber }),
        ctx.chain.readContract({ address: usdc, abi: erc20Abi, functionName: "balanceOf", args: [address], blockNumber }),
      ]),
    );

    const fromBlock = Math.max(0, latest - WALLET_ACTIVITY_WINDOW_BLOCKS + 1);
    const window = { token: usdc, fromBlock, toBlock: latest };
    const [classes, sent, received] = await Promise.all([
      classifier.classify([address]),
      scanner.transfers({ ...window, from: address }, finalized),
      scanner.transfers({ ...window, to: address }, finalized),
    ]);
    const cls = classes.get(address) ?? "wallet";
    // A transfer to oneself is in both lists; count it once.
    const unique = new Set([...sent.logs, ...received.logs].map((l) => `${l.blockNumber}:${l.logIndex}`));

    return {
      address,
      chain_id: chainId,
      block_number: latest,
      is_contract: cls !== "wallet" && cls !== "zero_address",
      class: cls,
      balance_eth: formatEther(balance),
      balance_wei: balance.toString(),
      balance_usdc: formatUnits(balanceUsdc, 6),
      nonce,
      recent_usdc_activity: {
        window_blocks: latest - fromBlock + 1,
        from_block: fromBlock,
        to_block: latest,
        transfers_found: unique.size,
        sent: sent.logs.length,
        received: received.logs.length,
      },
      labels: labels.names(address),
      methodology: methodologyFor("wallet-profile"),
    };
  }),
);
