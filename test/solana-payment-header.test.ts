/**
 * The Solana site reads a payment header's payer, identity and signature itself (src/solana/x402.ts),
 * without kit's full transaction decoders. What it reads must be what @x402/svm reads from the same
 * bytes, since the facilitator settles by the library's reading: checked here on real payments
 * signed by the stock SVM client, and on every truncation and corruption of one. Kit's decoders
 * are lax where a length runs past the end (they read what is there); the service refuses such a
 * transaction as malformed, which no signer can have produced and no chain would accept.
 */
import {
  getBase58Decoder,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getCompiledTransactionMessageEncoder,
  getTransactionDecoder,
  getTransactionEncoder,
} from "@solana/kit";
import { x402HTTPClient } from "@x402/core/client";
import { encodePaymentSignatureHeader } from "@x402/core/http";
import type { PaymentPayload, PaymentRequired } from "@x402/core/types";
import { decodeTransactionFromPayload, getTokenPayerFromTransaction, transactionMessageHash } from "@x402/svm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalSolanaDevnet, startLocalSolana } from "../src/local/solana/devnet.ts";
import { decodeSvmPayment, svmClient, svmScheme } from "../src/solana/x402.ts";

let chain: LocalSolanaDevnet;
const payloads: PaymentPayload[] = [];

/** What the library reads from a payload's transaction: its payer, message hash (hex) and the payer's signature (base58), or "malformed". */
function libraryReading(transaction: string) {
  try {
    const tx = decodeTransactionFromPayload({ transaction });
    const payer = getTokenPayerFromTransaction(tx);
    const nonce = `0x${Buffer.from(getBase64Encoder().encode(transactionMessageHash(tx))).toString("hex")}`;
    const own = payer ? tx.signatures[payer as never] : null;
    return { payer, nonce, signature: own ? getBase58Decoder().decode(own) : "" };
  } catch {
    return "malformed";
  }
}

/** What the service reads from the same transaction, in the library's terms. */
function serviceReading(payload: PaymentPayload, transaction: string) {
  const decoded = decodeSvmPayment(encodePaymentSignatureHeader({ ...payload, payload: { transaction } }));
  if ("field" in decoded) {
    expect(decoded.field).toBe("payload.transaction");
    if (decoded.expected.includes("wire format")) return "malformed";
    return decoded.expected.includes("authority") ? "no payer" : "not signed";
  }
  return { payer: decoded.authorization.from, nonce: decoded.authorization.nonce, signature: decoded.signature };
}

/** Whether kit re-encodes the transaction and its message to exactly these bytes (nothing read past the end or left over). */
function wellFormed(transaction: string): boolean {
  try {
    const bytes = Buffer.from(transaction, "base64");
    const tx = getTransactionDecoder().decode(bytes);
    const message = getCompiledTransactionMessageEncoder().encode(getCompiledTransactionMessageDecoder().decode(tx.messageBytes));
    return (
      Buffer.compare(Buffer.from(message), Buffer.from(tx.messageBytes)) === 0 &&
      Buffer.compare(Buffer.from(getTransactionEncoder().encode(tx)), bytes) === 0
    );
  } catch {
    return false;
  }
}

/** The service's reading of a changed transaction against the library's: the same when well formed, else the same or refused as malformed. */
function expectSameReading(payload: PaymentPayload, transaction: string, label: unknown[]) {
  const ours = serviceReading(payload, transaction);
  const theirs = expected(libraryReading(transaction));
  if (wellFormed(transaction) || ours !== "malformed") expect([...label, ours]).toEqual([...label, theirs]);
}

/** The library's reading as the service reports it: a transaction without a payer or the payer's signature is refused, not read. */
function expected(reading: ReturnType<typeof libraryReading>) {
  if (reading === "malformed") return reading;
  if (!reading.payer) return "no payer";
  if (!reading.signature) return "not signed";
  return reading;
}

beforeAll(async () => {
  chain = await startLocalSolana({});
  const s = chain.scenario;
  for (const [i, amount] of ["100000", "250000"].entries()) {
    const challenge: PaymentRequired = {
      x402Version: 2,
      resource: { url: "http://127.0.0.1/v1/dinalibrium", description: "", mimeType: "application/json" },
      accepts: [
        {
          scheme: "exact",
          network: s.network as `${string}:${string}`,
          asset: s.usdcMint,
          amount,
          payTo: s.payTo,
          maxTimeoutSeconds: 60,
          extra: { feePayer: s.feePayer.signer.address },
        },
      ],
    };
    const buyer = s.buyers[i] as (typeof s.buyers)[number];
    payloads.push(await new x402HTTPClient(svmClient(buyer.signer, chain.rpcUrl, s.network)).createPaymentPayload(challenge));
  }
}, 60_000);

afterAll(async () => {
  await chain?.stop();
});

const transactionOf = (payload: PaymentPayload) => (payload.payload as { transaction: string }).transaction;

describe("a Solana payment header, read by the service", () => {
  it("reads the payer, the message hash and the payer's signature the library reads, for real payments", () => {
    const s = chain.scenario;
    for (const [i, payload] of payloads.entries()) {
      expect(wellFormed(transactionOf(payload))).toBe(true);
      const reading = serviceReading(payload, transactionOf(payload));
      expect(reading).toEqual(libraryReading(transactionOf(payload)));
      expect(reading).toMatchObject({ payer: s.buyers[i]?.signer.address });
    }
  });

  it("agrees with the library on every truncation of a real transaction", () => {
    const payload = payloads[0] as PaymentPayload;
    const bytes = Buffer.from(transactionOf(payload), "base64");
    for (let length = 0; length < bytes.length; length++) {
      const transaction = bytes.subarray(0, length).toString("base64");
      expectSameReading(payload, transaction, [length]);
    }
  });

  it("agrees with the library on every single-byte corruption of a real transaction's message header, accounts and instructions", () => {
    const payload = payloads[1] as PaymentPayload;
    const bytes = Buffer.from(transactionOf(payload), "base64");
    // Signatures (1 + 2 × 64 bytes) are read as bytes either way; everything after them is parsed.
    for (let at = 129; at < bytes.length; at++) {
      for (const value of [0x00, 0x03, 0x80, 0xff]) {
        const changed = Buffer.from(bytes);
        changed[at] = value;
        const transaction = changed.toString("base64");
        expectSameReading(payload, transaction, [at, value]);
      }
    }
  });

  it("refuses a transaction the payer has not signed, and text that is not base64", () => {
    const payload = payloads[0] as PaymentPayload;
    const bytes = Buffer.from(transactionOf(payload), "base64");
    const reading = libraryReading(transactionOf(payload));
    if (reading === "malformed") throw new Error("the real payment must read");
    // The payer signs second, after the fee payer's slot: zero its 64 bytes.
    const unsigned = Buffer.from(bytes);
    unsigned.fill(0, 1 + 64, 1 + 128);
    expect(serviceReading(payload, unsigned.toString("base64"))).toBe("not signed");
    expect(serviceReading(payload, `${transactionOf(payload).slice(0, 40)}!${transactionOf(payload).slice(41)}`)).toBe("malformed");
  });

  it("checks the payer's Ed25519 signature on the message: a changed byte of either fails", async () => {
    const s = chain.scenario;
    const scheme = svmScheme(s.network, s.usdcMint);
    const payload = payloads[0] as PaymentPayload;
    const decode = (transaction: string) => {
      const decoded = decodeSvmPayment(encodePaymentSignatureHeader({ ...payload, payload: { transaction } }));
      if ("field" in decoded) throw new Error(decoded.expected);
      return decoded;
    };
    const real = decode(transactionOf(payload));
    expect(await scheme.signedByPayer(real)).toBe(true);
    const bytes = Buffer.from(transactionOf(payload), "base64");
    const badSignature = Buffer.from(bytes);
    badSignature[1 + 64 + 5] = ((badSignature[1 + 64 + 5] as number) + 1) % 256;
    expect(
      await scheme.signedByPayer({ ...real, payload: { ...payload, payload: { transaction: badSignature.toString("base64") } } }),
    ).toBe(false);
    const badMessage = Buffer.from(bytes);
    badMessage[bytes.length - 1] = ((badMessage[bytes.length - 1] as number) + 1) % 256;
    expect(await scheme.signedByPayer({ ...real, payload: { ...payload, payload: { transaction: badMessage.toString("base64") } } })).toBe(
      false,
    );
  });
});
