/**
 * `npm run buy -- <METHOD> <path-or-url> [json-body]`: pay any x402 endpoint (ours or
 * anyone's) with @x402/fetch and print the answer, the amount paid and the settlement
 * transaction. The key comes from BUYER_PRIVATE_KEY; in local mode a funded devnet buyer
 * from data/devnet.json is used when it is not set. A path is resolved against BASE_URL
 * (default http://127.0.0.1:$PORT, port 4021). `--solana` pays the Solana site instead: a path
 * is resolved against SOLANA_BASE_URL (local mode: the site in data/devnet.json) and the key is
 * SOLANA_BUYER_KEY (a 64-byte base58 secret; local mode: a devnet Solana buyer). Shortcuts: `topup [USD]`, `chat "<message>"
 * [--balance]` and `balance` (the last two sign in with the buyer's wallet when they use the balance).
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { decodePaymentResponseHeader } from "@x402/core/http";
import type { PaymentRequirements } from "@x402/core/types";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { formatUnits, isHex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { signInHeader } from "./buyer/sign-in.ts";

const USAGE = `usage: npm run buy -- <GET|POST|...> <path-or-url> [json-body]
       npm run buy -- topup [USD]                    top up your prepaid chat balance (default 5)
       npm run buy -- chat "<message>" [--balance]    ask the assistant, per call or from your balance
       npm run buy -- balance                         your balance and its last movements (signed in)
       npm run buy -- --solana <METHOD> <path-or-url> [json-body]   pay the Solana site in USDC on Solana
  e.g. npm run buy -- POST /api/payment-verify '{"tx_hash":"0x..."}'
       npm run buy -- --solana POST /v1/dinalibrium '{"token":"SOL"}'
  env: BUYER_PRIVATE_KEY (default in local mode: a devnet buyer from data/devnet.json), BASE_URL, DATA_DIR;
       SOLANA_BUYER_KEY, SOLANA_BASE_URL, SOLANA_RPC_URL (defaults in local mode: data/devnet.json's solana object)`;

/** A command that cannot run as given: its message says why (exit code 2). */
export class BuyUsageError extends Error {
  override name = "BuyUsageError";
}

function fail(message: string): never {
  throw new BuyUsageError(message);
}

function buyerKey(env: NodeJS.ProcessEnv): `0x${string}` {
  const fromEnv = env.BUYER_PRIVATE_KEY?.trim();
  if (fromEnv) {
    const key = (fromEnv.startsWith("0x") ? fromEnv : `0x${fromEnv}`) as `0x${string}`;
    if (!isHex(key) || key.length !== 66) fail("BUYER_PRIVATE_KEY must be a 32-byte hex private key (its value is not shown)");
    return key;
  }
  const devnetFile = path.join(env.DATA_DIR || "data", "devnet.json");
  if (!existsSync(devnetFile)) fail(`set BUYER_PRIVATE_KEY, or start the service in local mode (npm start) so that ${devnetFile} exists`);
  const devnet = JSON.parse(readFileSync(devnetFile, "utf8")) as { buyers: { privateKey: `0x${string}` }[] };
  const first = devnet.buyers[0];
  if (!first) fail(`${devnetFile} lists no buyers`);
  return first.privateKey;
}

/**
 * The shortcuts: `topup`, `chat` and `balance` become the request they stand for; the balance
 * ones are signed in with Sign-In-With-X by the buyer's wallet, as the service asks.
 */
async function shortcut(args: string[], env: NodeJS.ProcessEnv): Promise<[string, string, string | undefined, boolean] | undefined> {
  const [name, ...rest] = args;
  if (name === "topup") return ["POST", `/api/balance/topup?amount=${encodeURIComponent(rest[0] ?? "5")}`, undefined, false];
  if (name === "balance") return ["GET", "/api/balance", undefined, true];
  if (name === "chat") {
    const fromBalance = rest.includes("--balance");
    const message = rest.filter((a) => a !== "--balance").join(" ");
    if (!message) fail('chat needs a message: npm run buy -- chat "what is ETH doing?" [--balance]');
    const account = privateKeyToAccount(buyerKey(env));
    const body = JSON.stringify(fromBalance ? { message, user_id: account.address } : { message });
    return ["POST", "/api/chat", body, fromBalance];
  }
  return undefined;
}

/** What a run printed, and its exit code: 0 for a 2xx answer, 1 for any other. */
export interface BuyResult {
  lines: string[];
  exitCode: number;
}

/** Run `npm run buy -- <args>`: the request, paid when it asks for payment; throws `BuyUsageError` for a command that cannot run. */
export async function buy(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<BuyResult> {
  if (args[0] === "--solana") return paySolana(args.slice(1), env);
  const lines: string[] = [];
  const named = await shortcut(args, env);
  // Without a body argument there is no body at all: a GET cannot carry one, and a POST without
  // one is the route called with its defaults.
  const [method, target, body, signIn] = named ?? [args[0], args[1], args[2], false];
  if (!method || !target || (!named && args.length > 3)) fail(USAGE);
  if (body !== undefined) {
    try {
      JSON.parse(body);
    } catch {
      fail(`the body is not valid JSON: ${body}`);
    }
  }
  const base = env.BASE_URL || `http://127.0.0.1:${env.PORT || 4021}`;
  const url = /^https?:\/\//.test(target) ? target : new URL(target, base).toString();

  const account = privateKeyToAccount(buyerKey(env));
  const client = new x402Client();
  // x402's clients cap a payment at $1 unless told otherwise: a top-up asks for the amount the buyer typed.
  if (named && target.startsWith("/api/balance/topup")) client.setSpendControls({ maxAmountPerPayment: false });
  registerExactEvmScheme(client, { signer: account });
  let quoted: PaymentRequirements | undefined;
  client.onAfterPaymentCreation(async (context) => {
    quoted = context.selectedRequirements as PaymentRequirements;
  });
  const pay = wrapFetchWithPayment(fetch, client);

  const started = Date.now();
  const headers: Record<string, string> = {
    ...(body !== undefined ? { "content-type": "application/json" } : {}),
    ...(signIn ? { "SIGN-IN-WITH-X": await signInHeader(account, url) } : {}),
  };
  // Signed in, the balance pays (or a 402 says it is short): never pay per call behind the buyer's back.
  const res = await (signIn ? fetch : pay)(url, { method: method.toUpperCase(), headers, ...(body !== undefined ? { body } : {}) });
  const text = await res.text();
  let pretty = text;
  try {
    pretty = JSON.stringify(JSON.parse(text), null, 2);
  } catch {}

  lines.push(`${method.toUpperCase()} ${url} -> ${res.status} in ${Date.now() - started} ms (buyer ${account.address})`);
  lines.push(pretty);
  const receipt = res.headers.get("payment-response");
  if (receipt) {
    const settlement = decodePaymentResponseHeader(receipt);
    const amount = quoted ? `${formatUnits(BigInt(quoted.amount), 6)} USDC (${quoted.amount} atomic) to ${quoted.payTo}` : "unknown amount";
    if (settlement.success) lines.push(`paid: ${amount}`, `settlement: ${settlement.transaction} on ${settlement.network}`);
    else lines.push(`not charged: settlement failed (${settlement.errorReason ?? "unknown reason"})`);
  } else if (quoted) {
    lines.push(`not charged: the call failed with ${res.status}, so the payment was not settled`);
  } else if (signIn && method.toUpperCase() === "POST") {
    lines.push(res.ok ? "paid from your prepaid balance: no transfer" : "not debited: the call failed");
  } else {
    lines.push(signIn ? "free: signed in with your wallet" : "no payment was asked for");
  }
  return { lines, exitCode: res.ok ? 0 : 1 };
}

/** The Solana buyer: key, RPC and site from the environment, else local mode's devnet.json. */
async function solanaBuyer(env: NodeJS.ProcessEnv): Promise<{ client: x402Client; address: string; base: string }> {
  const devnetFile = path.join(env.DATA_DIR || "data", "devnet.json");
  type LocalSolana = { siteUrl: string; rpcUrl: string; network: string; buyers: { secretKey: string }[] };
  const local = existsSync(devnetFile) ? (JSON.parse(readFileSync(devnetFile, "utf8")) as { solana?: LocalSolana }).solana : undefined;
  const secret = env.SOLANA_BUYER_KEY?.trim() || local?.buyers[0]?.secretKey;
  const rpcUrl = env.SOLANA_RPC_URL?.trim() || local?.rpcUrl;
  const base = env.SOLANA_BASE_URL?.trim() || local?.siteUrl;
  if (!secret || !rpcUrl || !base) {
    fail(
      `--solana needs SOLANA_BUYER_KEY, SOLANA_RPC_URL and SOLANA_BASE_URL, or the service in local mode (npm start) so that ${devnetFile} names them`,
    );
  }
  const [{ signerFromSecret }, { svmClient }, { solana }] = await Promise.all([
    import("../src/solana/keys.ts"),
    import("../src/solana/x402.ts"),
    import("../src/networks/solana.ts"),
  ]);
  const signer = await signerFromSecret(secret).catch(() =>
    fail("SOLANA_BUYER_KEY must be a 64-byte Solana secret key in base58 or a JSON array (its value is not shown)"),
  );
  return { client: svmClient(signer, rpcUrl, local?.network ?? solana.id), address: signer.address, base };
}

/** `--solana <METHOD> <path-or-url> [json-body]`: pay the Solana site with a Solana key. */
async function paySolana(args: string[], env: NodeJS.ProcessEnv): Promise<BuyResult> {
  const [method, target, body] = args;
  if (!method || !target || args.length > 3) fail(USAGE);
  if (body !== undefined) {
    try {
      JSON.parse(body);
    } catch {
      fail(`the body is not valid JSON: ${body}`);
    }
  }
  const { client, address, base } = await solanaBuyer(env);
  const url = /^https?:\/\//.test(target) ? target : new URL(target, base).toString();
  let quoted: PaymentRequirements | undefined;
  client.onAfterPaymentCreation(async (context) => {
    quoted = context.selectedRequirements as PaymentRequirements;
  });
  const started = Date.now();
  const res = await wrapFetchWithPayment(fetch, client)(url, {
    method: method.toUpperCase(),
    ...(body !== undefined ? { headers: { "content-type": "application/json" }, body } : {}),
  });
  const text = await res.text();
  let pretty = text;
  try {
    pretty = JSON.stringify(JSON.parse(text), null, 2);
  } catch {}
  const lines = [`${method.toUpperCase()} ${url} -> ${res.status} in ${Date.now() - started} ms (Solana buyer ${address})`, pretty];
  const receipt = res.headers.get("payment-response");
  if (receipt) {
    const settlement = decodePaymentResponseHeader(receipt);
    const amount = quoted ? `${formatUnits(BigInt(quoted.amount), 6)} USDC (${quoted.amount} atomic) to ${quoted.payTo}` : "unknown amount";
    if (settlement.success) lines.push(`paid: ${amount}`, `settlement: ${settlement.transaction} on ${settlement.network}`);
    else lines.push(`not charged: settlement failed (${settlement.errorReason ?? "unknown reason"})`);
  } else
    lines.push(quoted ? `not charged: the call failed with ${res.status}, so the payment was not settled` : "no payment was asked for");
  return { lines, exitCode: res.ok ? 0 : 1 };
}

if (import.meta.main) {
  buy(process.argv.slice(2)).then(
    ({ lines, exitCode }) => {
      console.log(lines.join("\n"));
      process.exitCode = exitCode;
    },
    (error: unknown) => {
      console.error(`buy: ${error instanceof Error ? error.message : String(error)}`);
      process.exit(2);
    },
  );
}
