/**
 * `npm run ownership-proof`: sign this service's public origin with the `payTo` private key and
 * print the line to put in the service's environment, `OWNERSHIP_PROOFS=0x…`. Run it on your
 * own machine: only the signature goes to the server, never the key.
 *
 *   PUBLIC_URL=https://api.example.com PAY_TO=0x… npm run ownership-proof
 *     asks for the key (not echoed), or reads it from PAY_TO_PRIVATE_KEY or piped stdin
 *   npm run ownership-proof -- --origin https://api.example.com
 *   npm run ownership-proof      (no PUBLIC_URL, no PAY_TO: local mode, http://127.0.0.1:4021,
 *                                 signed with the devnet payTo key, which is public)
 *
 * The proof is an EIP-191 signature of the origin string (`https://host[:port]`); x402scan
 * recovers its signer and checks it against the `payTo` of the origin's challenges.
 */
import { type Hex, isAddress, isAddressEqual, isHex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { devnetPayToAccount, ownershipProofSigner } from "../src/discovery/ownership-proof.ts";

/** What the script was asked to sign, from its arguments and environment. */
export interface ProofRequest {
  origin: string;
  /** The key to sign with; undefined: ask for it. */
  privateKey: Hex | undefined;
  /** The expected signer (PAY_TO); undefined: not checked. */
  payTo: `0x${string}` | undefined;
  /** Local mode: the devnet key signs. */
  local: boolean;
}

/** Read the request from `argv` (after the script) and `env`; throws with a message naming what to fix. */
export function proofRequest(argv: readonly string[], env: Record<string, string | undefined>): ProofRequest {
  const flag = argv.indexOf("--origin");
  const originArg = flag >= 0 ? argv[flag + 1] : undefined;
  if (flag >= 0 && !originArg) throw new Error("--origin needs a URL, e.g. --origin https://api.example.com");
  const payTo = env.PAY_TO || undefined;
  if (payTo && !isAddress(payTo, { strict: false })) throw new Error(`PAY_TO must be an EVM address, got "${payTo}"`);
  const keyText = env.PAY_TO_PRIVATE_KEY?.trim() || undefined;
  const local = !originArg && !env.PUBLIC_URL && !payTo && !keyText;
  const url = originArg ?? env.PUBLIC_URL ?? `http://127.0.0.1:${env.PORT || 4021}`;
  let origin: string;
  try {
    origin = new URL(url).origin;
    if (!/^https?:$/.test(new URL(url).protocol)) throw new Error("scheme");
  } catch {
    throw new Error(`the origin must be an http(s) URL, got "${url}"`);
  }
  return {
    origin,
    privateKey: keyText ? parsePrivateKey(keyText) : local ? devnetPayToKey() : undefined,
    payTo: payTo as `0x${string}` | undefined,
    local,
  };
}

function parsePrivateKey(text: string): Hex {
  const key = (text.startsWith("0x") ? text : `0x${text}`) as Hex;
  if (!isHex(key) || key.length !== 66) throw new Error("the private key must be 32 bytes in hex (64 hex digits); it is not shown");
  return key;
}

function devnetPayToKey(): Hex {
  const key = devnetPayToAccount().getHdKey().privateKey;
  if (!key) throw new Error("the devnet mnemonic gave no private key");
  return `0x${Buffer.from(key).toString("hex")}`;
}

/** Read one line from the terminal without echoing it, or all of piped stdin. */
async function readSecret(prompt: string): Promise<string> {
  const stdin = process.stdin;
  if (!stdin.isTTY) {
    let text = "";
    for await (const chunk of stdin) text += String(chunk);
    return text.trim();
  }
  process.stderr.write(prompt);
  stdin.setRawMode(true);
  stdin.resume();
  return new Promise((resolve, reject) => {
    let text = "";
    const onData = (chunk: Buffer) => {
      for (const char of chunk.toString("utf8")) {
        if (char === "\u0003") {
          stdin.setRawMode(false);
          reject(new Error("cancelled"));
          return;
        }
        if (char === "\r" || char === "\n") {
          stdin.setRawMode(false);
          stdin.pause();
          stdin.off("data", onData);
          process.stderr.write("\n");
          resolve(text.trim());
          return;
        }
        text = char === "\u007f" ? text.slice(0, -1) : text + char;
      }
    };
    stdin.on("data", onData);
  });
}

/** Sign the request: the proof, checked by recovering its signer as x402scan does. */
export async function makeProof(request: ProofRequest, privateKey: Hex): Promise<{ proof: Hex; signer: `0x${string}` }> {
  const account = privateKeyToAccount(privateKey);
  const signer = account.address;
  if (request.payTo && !isAddressEqual(signer, request.payTo)) {
    throw new Error(`this key belongs to ${signer}, not PAY_TO ${request.payTo}: sign with the key of the address that receives payments`);
  }
  // The message is the origin exactly as `new URL(url).origin` prints it (request.origin is).
  const proof = await account.signMessage({ message: request.origin });
  const recovered = await ownershipProofSigner(proof, request.origin);
  if (!recovered || !isAddressEqual(recovered, signer)) throw new Error("the signature does not recover its signer; nothing printed");
  return { proof, signer };
}

async function main(): Promise<void> {
  const request = proofRequest(process.argv.slice(2), process.env);
  const privateKey = request.privateKey ?? parsePrivateKey(await readSecret(`Private key of ${request.payTo ?? "the payTo address"}: `));
  const { proof, signer } = await makeProof(request, privateKey);
  if (request.local) process.stderr.write("Local mode: signed with the devnet payTo key (public, worthless off the devnet).\n");
  process.stderr.write(`Signed ${request.origin} as ${signer}. Add this line to the service's environment:\n`);
  process.stdout.write(`OWNERSHIP_PROOFS=${proof}\n`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((error) => {
    console.error(`ownership-proof: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  });
}
