/** Shell quoting for the commands the pages print, so each runs as pasted into bash or zsh. */

/** One shell word: as it is when plain, otherwise single-quoted (a query's & would background the command, its ? glob). */
export function shellWord(word: string): string {
  return /^[\w/.:=,@+-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/** The `npm run buy` line of this repository that buys `method path` with `body` (JSON, POST only). */
export function buyCommand(method: string, path: string, body?: unknown): string {
  return `npm run buy -- ${method} ${shellWord(path)}${body === undefined ? "" : ` ${shellWord(JSON.stringify(body))}`}`;
}

/**
 * The Node snippet that buys `path` with the reference client `@x402/fetch` and a key from the
 * environment; it defines its client in full, so it runs as pasted. `base` and `init` are code.
 */
export function fetchSnippet(path: string, base: string, init: string, log: string): string {
  return `import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { privateKeyToAccount } from "viem/accounts";

const client = new x402Client();
registerExactEvmScheme(client, { signer: privateKeyToAccount(process.env.BUYER_PRIVATE_KEY) });
const pay = wrapFetchWithPayment(fetch, client);
const res = await pay(new URL("${path}", ${base}), ${init});
console.log(${log});`;
}

/**
 * The Node snippet that buys `path` on a site paid on Solana: `@x402/svm`'s client scheme
 * registered by hand with the RPC it reads the mint and a blockhash from, and the buyer's key as
 * Solana wallets export it (64 bytes in base58), both from the environment. `base` and `init` are code.
 */
export function svmFetchSnippet(path: string, base: string, rpc: string, init: string, log: string): string {
  return `import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { ExactSvmScheme } from "@x402/svm/exact/client";
import { toClientSvmSigner } from "@x402/svm";
import { createKeyPairSignerFromBytes, getBase58Encoder } from "@solana/kit";

const signer = await createKeyPairSignerFromBytes(getBase58Encoder().encode(process.env.SOLANA_BUYER_KEY));
const client = new x402Client();
client.register("solana:*", new ExactSvmScheme(toClientSvmSigner(signer), { rpcUrl: ${rpc} }));
const pay = wrapFetchWithPayment(fetch, client);
const res = await pay(new URL("${path}", ${base}), ${init});
console.log(${log});`;
}
