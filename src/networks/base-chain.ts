/**
 * Base mainnet's chain definition, the very object `viem/chains` exports as `base`, loaded from
 * the one module of viem's ES build that defines it instead of through `viem/chains`: that module
 * defines every chain viem knows (about 265 ms of a ~2 s restart on the bench machine), while the
 * definition's own module loads only the OP Stack chain config it is made of (the same module
 * instance, so the same formatters and serializers); test/networks-base-chain.test.ts holds the
 * two equal.
 */
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import type { Chain } from "viem";
import type { base as ViemBase } from "viem/chains";

// The package does not export the definition's module on its own, so it is loaded by its path.
const viemDir = path.dirname(createRequire(import.meta.url).resolve("viem/package.json"));
const definition = pathToFileURL(path.join(viemDir, "_esm/chains/definitions/base.js")).href;

/** Base mainnet (`eip155:8453`), as `viem/chains` defines it. */
export const base = ((await import(definition)) as { base: typeof ViemBase }).base satisfies Chain;
