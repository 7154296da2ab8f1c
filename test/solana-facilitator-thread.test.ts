import { execFile } from "node:child_process";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { promisify } from "node:util";
import { x402HTTPClient } from "@x402/core/client";
import { decodePaymentRequiredHeader } from "@x402/core/http";
import type { PaymentPayload } from "@x402/core/types";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalSolanaDevnet, startLocalSolana } from "../src/local/solana/devnet.ts";
import { svmFacilitatorThread } from "../src/solana/facilitator-thread.ts";
import { createSvmFacilitator, svmClient } from "../src/solana/x402.ts";
import { usdcOn } from "./support/solana.ts";

let chain: LocalSolanaDevnet;
let thread: ReturnType<typeof svmFacilitatorThread>;

beforeAll(async () => {
  chain = await startLocalSolana({});
  thread = svmFacilitatorThread(chain.scenario.feePayer.signer, chain.rpcUrl, chain.scenario.network);
});
afterAll(async () => {
  await thread?.close();
  await chain?.stop();
});

/** A payment of `amount` USDC (atomic) from scenario buyer `i` to payTo, signed by the stock SVM client. */
async function payment(i: number, amount: string): Promise<PaymentPayload> {
  const s = chain.scenario;
  const buyer = s.buyers[i] as (typeof s.buyers)[number];
  const requirements = {
    scheme: "exact",
    network: s.network,
    asset: s.usdcMint,
    amount,
    payTo: s.payTo,
    maxTimeoutSeconds: 60,
    extra: { feePayer: s.feePayer.address },
  };
  const challenge = { x402Version: 2, resource: { url: "http://localhost/v1/test" }, accepts: [requirements] };
  const client = new x402HTTPClient(svmClient(buyer.signer, chain.rpcUrl, s.network));
  return client.createPaymentPayload(decodePaymentRequiredHeader(Buffer.from(JSON.stringify(challenge)).toString("base64")));
}

describe("the Solana facilitator on its own thread", () => {
  it("answers what the same facilitator answers in process: supported kinds, verify, and a settlement that moves exactly the amount", async () => {
    const s = chain.scenario;
    const inProcess = createSvmFacilitator(s.feePayer.signer, chain.rpcUrl, s.network);
    expect(await thread.getSupported()).toEqual(await inProcess.getSupported());

    const paid = await payment(0, "12345");
    const verified = await thread.verify(paid, paid.accepted);
    expect(verified).toEqual(await inProcess.verify(paid, paid.accepted));
    expect(verified).toMatchObject({ isValid: true, payer: s.buyers[0]?.address });

    const before = await usdcOn(chain.rpcUrl, s.payTo);
    const settled = await thread.settle(paid, paid.accepted);
    expect(settled).toMatchObject({ success: true, network: s.network, payer: s.buyers[0]?.address });
    expect(await usdcOn(chain.rpcUrl, s.payTo)).toBe(before + 12_345n);
    // The thread's facilitator remembers what it settled: the same transaction is refused.
    expect(await thread.settle(paid, paid.accepted)).toMatchObject({ success: false });
    expect(await usdcOn(chain.rpcUrl, s.payTo)).toBe(before + 12_345n);
  });

  it("fails the calls in flight when the thread ends, and serves later calls on a new one", async () => {
    const paid = await payment(1, "1000");
    const inFlight = thread.verify(paid, paid.accepted);
    await thread.close();
    await expect(inFlight).rejects.toThrow(/the Solana facilitator thread ended/);
    expect(await thread.verify(paid, paid.accepted)).toMatchObject({ isValid: true, payer: chain.scenario.buyers[1]?.address });
  });

  it("keeps a process alive while a call waits on it (the chain answering slowly), and not after", async () => {
    // The chain's RPC behind a proxy that answers 1.5 s late: the call outlives the thread's start.
    const slow = createServer((req, res) => {
      const body: Buffer[] = [];
      req.on("data", (c: Buffer) => body.push(c));
      req.on("end", () => {
        setTimeout(async () => {
          const answer = await fetch(chain.rpcUrl, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: Buffer.concat(body),
          });
          res.writeHead(answer.status, { "content-type": "application/json" }).end(Buffer.from(await answer.arrayBuffer()));
        }, 1_500);
      });
    });
    await new Promise<void>((resolve) => slow.listen(0, "127.0.0.1", resolve));
    try {
      const paid = await payment(2, "1000");
      // A process whose only pending work is that call: it must wait for the answer, then end.
      const script = `
        import { signerFromSecret } from "./src/solana/keys.ts";
        import { svmFacilitatorThread } from "./src/solana/facilitator-thread.ts";
        const paid = ${JSON.stringify(paid)};
        const f = svmFacilitatorThread(await signerFromSecret("${chain.scenario.feePayer.secretKey}"), "http://127.0.0.1:${(slow.address() as AddressInfo).port}", paid.accepted.network);
        console.log(JSON.stringify(await f.verify(paid, paid.accepted)));`;
      const { stdout } = await promisify(execFile)(process.execPath, ["--input-type=module", "-e", script], { timeout: 30_000 });
      expect(JSON.parse(stdout)).toMatchObject({ isValid: true, payer: chain.scenario.buyers[2]?.address });
    } finally {
      slow.closeAllConnections();
      await new Promise((resolve) => slow.close(resolve));
    }
  });
});
