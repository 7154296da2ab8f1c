/**
 * The scenario's deterministic wallets and contract addresses, apart from src/local/devnet/scenario.ts so
 * that its chapters (scenario-entities.ts, scenario-tokens.ts) use them without importing the
 * module that imports them.
 */
import { getContractAddress, keccak256, type PrivateKeyAccount, stringToBytes } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import type { ScenarioGroundTruth } from "./scenario.ts";

/** The deterministic key of a scenario wallet: public, local-only, worthless anywhere else. */
export function scenarioAccount(name: string): PrivateKeyAccount {
  return privateKeyToAccount(keccak256(stringToBytes(`x402-chain-data-service/local-scenario/${name}`)));
}

/** The contract addresses the scenario deploys (the deployer's first nonces; the proxy creates its admin). */
export function scenarioContracts(): ScenarioGroundTruth["contracts"] {
  const from = scenarioAccount("deployer").address;
  const at = (nonce: number) => getContractAddress({ from, nonce: BigInt(nonce) });
  const proxyToken = at(2);
  return {
    plainToken: at(0),
    proxyImplementation: at(1),
    proxyToken,
    // OpenZeppelin 5's transparent proxy deploys its ProxyAdmin in its constructor (the proxy's nonce 1).
    proxyAdmin: getContractAddress({ from: proxyToken, nonce: 1n }),
    v2Pair: at(3),
    v3Pool: at(4),
    router: at(5),
  };
}
