/**
 * Offline compilation (solc-js) and loading of the devnet's Solidity contracts.
 * CLI: `npx tsx scripts/compile-contracts.ts [outFile]`.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { Abi, Hex } from "viem";

const require = createRequire(import.meta.url);
const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const contractsDir = join(projectRoot, "src", "local", "contracts");

/** Default location of the compiled artifacts (dist/ is gitignored build output). */
export const DEFAULT_CONTRACTS_FILE = join(projectRoot, "dist", "contracts.json");

/** Names of the contracts this project compiles, one per .sol file. */
export const CONTRACT_NAMES = [
  "FiatTokenLocal",
  // The seeded analytics scenario (src/local/devnet/scenario.ts).
  "ScenarioToken",
  "ScenarioUpgradeableToken",
  "ScenarioV3Pool",
  "ScenarioRouter",
  // The seeded token-risk scenario (src/local/devnet/scenario-tokens.ts).
  "ScenarioV3Minter",
  "MemeToken",
  "HoneypotToken",
  "SellTaxToken",
  "BlacklistToken",
  "BuyTaxToken",
  // The honeypot check's simulation code, placed by state override (src/token-risk/simulate.ts).
  "TokenRiskSimulator",
] as const;

/** Contracts deployed as their publishers ship them built, not compiled here. */
const PREBUILT = {
  UniswapV2Pair: "@uniswap/v2-core/build/UniswapV2Pair.json",
  UniswapV2Factory: "@uniswap/v2-core/build/UniswapV2Factory.json",
  UniswapV3Factory: "@uniswap/v3-core/artifacts/contracts/UniswapV3Factory.sol/UniswapV3Factory.json",
  // Not deployed directly: its creation code's hash is part of each pool's CREATE2 address.
  UniswapV3Pool: "@uniswap/v3-core/artifacts/contracts/UniswapV3Pool.sol/UniswapV3Pool.json",
  // The seeded scenario's proxy token: what token-check reads is the EIP-1967 slots it writes.
  TransparentUpgradeableProxy: "@openzeppelin/contracts/build/contracts/TransparentUpgradeableProxy.json",
} as const;

/** Name of one compiled contract. */
type ContractName = (typeof CONTRACT_NAMES)[number];

/** Byte ranges of immutables inside deployedBytecode (solc's `immutableReferences`, flattened). */
export type ImmutableRange = { start: number; length: number };

/** What deploying a contract takes: its ABI and creation code. */
export type Deployable = { abi: Abi; bytecode: Hex };

/** One compiled contract: ABI, creation code, runtime code and where its immutables sit. */
export type ContractArtifact = Deployable & {
  deployedBytecode: Hex;
  immutableReferences: ImmutableRange[];
};

/** The artifact file: contracts plus the hash of everything that determined them. */
export type ContractsFile = {
  sourceHash: string;
  contracts: Record<ContractName, ContractArtifact>;
};

// Everything that can change the output goes into the hash; solc's version is read from its
// package.json so the up-to-date check does not pay for loading the 9 MB soljson.
const SETTINGS = {
  evmVersion: "cancun", // OpenZeppelin 5.x uses mcopy/transient opcodes; Base supports Cancun.
  optimizer: { enabled: true, runs: 200 },
  outputSelection: {
    "*": {
      "*": ["abi", "evm.bytecode.object", "evm.deployedBytecode.object", "evm.deployedBytecode.immutableReferences"],
    },
  },
} as const;

function readSources(): Record<string, string> {
  const sources: Record<string, string> = {};
  for (const file of readdirSync(contractsDir)
    .filter((f) => f.endsWith(".sol"))
    .sort()) {
    sources[file] = readFileSync(join(contractsDir, file), "utf8");
  }
  return sources;
}

function packageVersion(name: string): string {
  return (require(`${name}/package.json`) as { version: string }).version;
}

function hashSources(sources: Record<string, string>): string {
  const hash = createHash("sha256");
  hash.update(`solc ${packageVersion("solc")}\n`);
  // The packages of the prebuilt contracts too, and viem and canonical-weth, whose Multicall3 and
  // WETH9 code the devnet places beside these contracts.
  for (const library of [
    "@openzeppelin/contracts",
    "@openzeppelin/contracts-upgradeable",
    "@uniswap/v2-core",
    "@uniswap/v3-core",
    "viem",
    "canonical-weth",
  ]) {
    hash.update(`${library} ${packageVersion(library)}\n`);
  }
  hash.update(`${JSON.stringify(SETTINGS)}\n`);
  for (const [file, content] of Object.entries(sources)) hash.update(`${file}\n${content}\n`);
  return hash.digest("hex");
}

function readExisting(outFile: string): ContractsFile | undefined {
  if (!existsSync(outFile)) return undefined;
  try {
    return JSON.parse(readFileSync(outFile, "utf8")) as ContractsFile;
  } catch {
    return undefined; // A torn or hand-edited file is just stale.
  }
}

function findImports(path: string): { contents: string } | { error: string } {
  try {
    return { contents: readFileSync(require.resolve(path), "utf8") };
  } catch {
    return { error: `File not found: ${path}` };
  }
}

type SolcError = { severity: "error" | "warning" | "info"; formattedMessage: string };
type SolcContract = {
  abi: Abi;
  evm: {
    bytecode: { object: string };
    deployedBytecode: { object: string; immutableReferences?: Record<string, ImmutableRange[]> };
  };
};
type SolcOutput = { errors?: SolcError[]; contracts?: Record<string, Record<string, SolcContract>> };

function compile(sources: Record<string, string>): Record<ContractName, ContractArtifact> {
  // Loaded lazily: requiring solc instantiates the whole compiler (~1 s).
  const solc = require("solc") as { compile(input: string, callbacks: { import: typeof findImports }): string };
  const input = {
    language: "Solidity",
    sources: Object.fromEntries(Object.entries(sources).map(([file, content]) => [file, { content }])),
    settings: SETTINGS,
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input), { import: findImports })) as SolcOutput;
  const errors = (output.errors ?? []).filter((e) => e.severity === "error");
  if (errors.length > 0) {
    throw new Error(`solc failed:\n${errors.map((e) => e.formattedMessage).join("\n")}`);
  }
  for (const warning of (output.errors ?? []).filter((e) => e.severity === "warning")) {
    console.warn(warning.formattedMessage);
  }
  const artifacts = {} as Record<ContractName, ContractArtifact>;
  for (const name of CONTRACT_NAMES) {
    const compiled = output.contracts?.[`${name}.sol`]?.[name];
    if (!compiled) throw new Error(`solc produced no output for ${name}.sol:${name}`);
    artifacts[name] = {
      abi: compiled.abi,
      bytecode: `0x${compiled.evm.bytecode.object}`,
      deployedBytecode: `0x${compiled.evm.deployedBytecode.object}`,
      immutableReferences: Object.values(compiled.evm.deployedBytecode.immutableReferences ?? {})
        .flat()
        .sort((a, b) => a.start - b.start),
    };
  }
  return artifacts;
}

/** Compiles the contracts into outFile unless it already holds artifacts for the same sources; returns them. */
export function compileContracts(outFile: string = DEFAULT_CONTRACTS_FILE): ContractsFile {
  const sources = readSources();
  const sourceHash = hashSources(sources);
  const existing = readExisting(outFile);
  if (existing?.sourceHash === sourceHash) return existing;

  const result: ContractsFile = { sourceHash, contracts: compile(sources) };
  mkdirSync(dirname(resolve(outFile)), { recursive: true });
  // Write-then-rename so parallel test workers never read a half-written file.
  const tmp = `${outFile}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(result, null, 2)}\n`);
  renameSync(tmp, outFile);
  return result;
}

/** Returns the compiled artifacts from file (compiling first if it is missing or stale) and the prebuilt ones. */
export function loadContracts(
  file: string = DEFAULT_CONTRACTS_FILE,
): Record<ContractName, ContractArtifact> & Record<keyof typeof PREBUILT, Deployable> {
  const prebuilt = Object.entries(PREBUILT).map(([name, path]) => {
    const { abi, bytecode } = require(path) as { abi: Abi; bytecode: string };
    return [name, { abi, bytecode: bytecode.startsWith("0x") ? bytecode : `0x${bytecode}` }];
  });
  return { ...compileContracts(file).contracts, ...(Object.fromEntries(prebuilt) as Record<keyof typeof PREBUILT, Deployable>) };
}
