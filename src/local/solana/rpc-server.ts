/**
 * Solana JSON-RPC on loopback over the local chain, so outside buyers, facilitators and the
 * routes use their stock RPC clients. Hand-written because no maintained library serves the
 * JSON-RPC API over litesvm; it answers the methods those clients call, in the RPC's own shapes:
 * buyers getAccountInfo and getLatestBlockhash, a facilitator simulateTransaction,
 * sendTransaction and getSignatureStatuses, the routes getBalance, getAccountInfo,
 * getTokenAccountsByOwner, getTokenLargestAccounts, getTokenAccountBalance,
 * getSignaturesForAddress and getEpochInfo, plus the small ones clients probe (getSlot, getBlockHeight,
 * getTokenSupply, ...).
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { type Address, type EncodedAccount, getBase58Encoder, getBase64Encoder, getTransactionDecoder } from "@solana/kit";
import { getMintDecoder, getTokenDecoder, TOKEN_2022_PROGRAM_ADDRESS } from "@solana-program/token-2022";
import cors from "cors";
import { createJSONRPCErrorResponse, JSONRPCErrorCode, JSONRPCErrorException, JSONRPCServer } from "json-rpc-2.0";
import getRawBody from "raw-body";
import { formatUnits } from "viem";
import { closeServer, listen } from "../stubs/loopback.ts";
import { type LocalSolana, SendError } from "./local-chain.ts";
import { TOKEN_PROGRAM } from "./scenario.ts";

const TOKEN_PROGRAMS = new Set<string>([TOKEN_PROGRAM, TOKEN_2022_PROGRAM_ADDRESS]);
const MAX_BODY = 1 << 20;

const invalidParams = (message: string) => new JSONRPCErrorException(`Invalid params: ${message}`, JSONRPCErrorCode.InvalidParams);

/** Base58 to bytes (memcmp filters). */
function base58Bytes(text: string): Uint8Array {
  try {
    return getBase58Encoder().encode(text) as Uint8Array;
  } catch {
    throw invalidParams(`not base58: ${text}`);
  }
}

/** The RPC's answers, one function per method. */
function rpcMethods(chain: LocalSolana): Record<string, (params: unknown[]) => unknown> {
  const context = () => ({ slot: chain.slot, apiVersion: "2.2.0" });
  const account = (address: unknown): EncodedAccount | null => {
    if (typeof address !== "string" || address.length < 32 || address.length > 44) throw invalidParams("an address (base58)");
    let found: ReturnType<LocalSolana["svm"]["getAccount"]>;
    try {
      found = chain.svm.getAccount(address as Address);
    } catch {
      throw invalidParams(`not a base58 address: ${address}`);
    }
    return found.exists ? found : null;
  };
  /** The account at `address` when a token program owns it, else the Solana RPC's refusal of such a token read. */
  const tokenProgramAccount = (address: unknown, what: "account" | "mint"): EncodedAccount => {
    const acc = account(address);
    if (acc && TOKEN_PROGRAMS.has(acc.programAddress)) return acc;
    throw new JSONRPCErrorException(`Invalid param: could not find ${what}`, JSONRPCErrorCode.InvalidParams);
  };
  const decimalsOf = (mint: string): number => {
    const m = account(mint);
    return m ? getMintDecoder().decode(m.data).decimals : 0;
  };
  const ui = (amount: bigint, decimals: number) => {
    const whole = formatUnits(amount, decimals);
    return { amount: amount.toString(), decimals, uiAmount: Number(whole), uiAmountString: whole };
  };
  const parsedData = (acc: EncodedAccount): unknown => {
    const program = acc.programAddress === TOKEN_PROGRAM ? "spl-token" : "spl-token-2022";
    if (acc.data.length === 82 || (acc.data.length > 165 && acc.data[165] === 1)) {
      const m = getMintDecoder().decode(acc.data);
      const info = {
        decimals: m.decimals,
        freezeAuthority: m.freezeAuthority.__option === "Some" ? m.freezeAuthority.value : null,
        isInitialized: m.isInitialized,
        mintAuthority: m.mintAuthority.__option === "Some" ? m.mintAuthority.value : null,
        supply: m.supply.toString(),
      };
      return { program, parsed: { type: "mint", info }, space: acc.data.length };
    }
    const t = getTokenDecoder().decode(acc.data);
    const info = {
      isNative: t.isNative.__option === "Some",
      mint: t.mint,
      owner: t.owner,
      state: t.state === 2 ? "frozen" : "initialized",
      tokenAmount: ui(t.amount, decimalsOf(t.mint)),
    };
    return { program, parsed: { type: "account", info }, space: acc.data.length };
  };
  const encode = (acc: EncodedAccount | null, encoding: unknown) => {
    if (!acc) return null;
    const data =
      encoding === "jsonParsed" && TOKEN_PROGRAMS.has(acc.programAddress)
        ? parsedData(acc)
        : [Buffer.from(acc.data).toString("base64"), "base64"];
    return {
      data,
      executable: acc.executable,
      lamports: Number(acc.lamports),
      owner: acc.programAddress,
      rentEpoch: 0,
      space: acc.data.length,
    };
  };
  const options = (p: unknown) => (typeof p === "object" && p !== null ? (p as Record<string, unknown>) : {});
  const decodeTx = (wire: unknown, encoding: unknown) => {
    if (typeof wire !== "string") throw invalidParams("a transaction (base64)");
    try {
      const bytes = encoding === "base58" ? undefined : getBase64Encoder().encode(wire);
      if (!bytes) throw new Error("base58 transactions are not accepted here; send base64");
      return getTransactionDecoder().decode(bytes);
    } catch (error) {
      throw new JSONRPCErrorException(`invalid transaction: ${(error as Error).message}`, JSONRPCErrorCode.InvalidParams);
    }
  };
  const tokenAccountsOf = (programs: Iterable<string>) => {
    const out: EncodedAccount[] = [];
    for (const program of programs) {
      for (const acc of chain.svm.getProgramAccounts(program as Address))
        if (acc.data.length >= 165 && acc.data[165] !== 1 && acc.data.length !== 82) out.push(acc);
    }
    return out;
  };
  const amountOf = (acc: EncodedAccount) => getTokenDecoder().decode(acc.data).amount;
  return {
    getHealth: () => "ok",
    getVersion: () => ({ "solana-core": "2.2.0-litesvm", "feature-set": 0 }),
    getGenesisHash: () => "5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d",
    getSlot: () => chain.slot,
    getBlockHeight: () => chain.slot,
    // The epoch is the clock's the programs read (Token-2022 picks a mint's transfer fee by it).
    getEpochInfo: () => ({
      absoluteSlot: chain.slot,
      blockHeight: chain.slot,
      epoch: Number(chain.svm.getClock().epoch),
      slotIndex: chain.slot,
      slotsInEpoch: 432000,
      transactionCount: null,
    }),
    getLatestBlockhash: () => ({ context: context(), value: chain.latestBlockhash() }),
    isBlockhashValid: ([hash]) => ({ context: context(), value: typeof hash === "string" && chain.isBlockhashValid(hash) }),
    getMinimumBalanceForRentExemption: ([size]) => Number(chain.svm.minimumBalanceForRentExemption(BigInt(Number(size) || 0))),
    getFeeForMessage: () => ({ context: context(), value: 5000 }),
    getBalance: ([address]) => ({ context: context(), value: Number(account(address)?.lamports ?? 0n) }),
    getAccountInfo: ([address, opts]) => ({ context: context(), value: encode(account(address), options(opts).encoding) }),
    getMultipleAccounts: ([addresses, opts]) => {
      if (!Array.isArray(addresses) || addresses.length > 100) throw invalidParams("at most 100 addresses");
      return { context: context(), value: addresses.map((a) => encode(account(a), options(opts).encoding)) };
    },
    getTokenAccountBalance: ([address]) => {
      const acc = tokenProgramAccount(address, "account");
      const t = getTokenDecoder().decode(acc.data);
      return { context: context(), value: ui(t.amount, decimalsOf(t.mint)) };
    },
    getTokenSupply: ([mint]) => {
      const acc = tokenProgramAccount(mint, "mint");
      const m = getMintDecoder().decode(acc.data);
      return { context: context(), value: ui(m.supply, m.decimals) };
    },
    getTokenLargestAccounts: ([mint]) => {
      const acc = tokenProgramAccount(mint, "mint");
      const decimals = getMintDecoder().decode(acc.data).decimals;
      const holders = tokenAccountsOf([acc.programAddress])
        .filter((a) => getTokenDecoder().decode(a.data).mint === mint)
        .map((a) => ({ address: a.address, amount: amountOf(a) }))
        .sort((x, y) => (y.amount > x.amount ? 1 : y.amount < x.amount ? -1 : 0))
        .slice(0, 20);
      return { context: context(), value: holders.map((h) => ({ address: h.address, ...ui(h.amount, decimals) })) };
    },
    getTokenAccountsByOwner: ([owner, filter, opts]) => {
      account(owner);
      const f = options(filter);
      const programs = typeof f.programId === "string" ? [f.programId] : [TOKEN_PROGRAM, TOKEN_2022_PROGRAM_ADDRESS];
      if (typeof f.mint !== "string" && typeof f.programId !== "string") throw invalidParams("a filter: {mint} or {programId}");
      const accounts = tokenAccountsOf(programs).filter((a) => {
        const t = getTokenDecoder().decode(a.data);
        return t.owner === owner && (typeof f.mint !== "string" || t.mint === f.mint);
      });
      return { context: context(), value: accounts.map((a) => ({ pubkey: a.address, account: encode(a, options(opts).encoding) })) };
    },
    getProgramAccounts: ([program, opts]) => {
      const o = options(opts);
      const filters = Array.isArray(o.filters) ? (o.filters as Record<string, unknown>[]) : [];
      const accounts = chain.svm.getProgramAccounts(program as Address).filter((a) =>
        filters.every((flt) => {
          if (typeof flt.dataSize === "number") return a.data.length === flt.dataSize;
          const memcmp = flt.memcmp as { offset: number; bytes: string; encoding?: string } | undefined;
          if (!memcmp) return true;
          const want = memcmp.encoding === "base64" ? Buffer.from(memcmp.bytes, "base64") : base58Bytes(memcmp.bytes);
          return Buffer.from(a.data.slice(memcmp.offset, memcmp.offset + want.length)).equals(want);
        }),
      );
      return accounts.map((a) => ({ pubkey: a.address, account: encode(a, o.encoding) }));
    },
    getSignaturesForAddress: ([address, opts]) => {
      const limit = Math.min(Math.max(Number(options(opts).limit ?? 1000) || 1000, 1), 1000);
      const before = options(opts).before;
      return chain.signaturesFor(String(address), limit, typeof before === "string" ? before : undefined).map((tx) => ({
        signature: tx.signature,
        slot: tx.slot,
        err: tx.err,
        memo: null,
        blockTime: tx.blockTime,
        confirmationStatus: "finalized",
      }));
    },
    getSignatureStatuses: ([signatures]) => {
      if (!Array.isArray(signatures) || signatures.length > 256) throw invalidParams("at most 256 signatures");
      return {
        context: context(),
        value: signatures.map((s) => {
          const tx = chain.status(String(s));
          if (!tx) return null;
          return {
            slot: tx.slot,
            confirmations: null,
            err: tx.err,
            status: tx.err ? { Err: tx.err } : { Ok: null },
            confirmationStatus: "finalized",
          };
        }),
      };
    },
    getTransaction: ([signature, opts]) => {
      const tx = chain.status(String(signature));
      if (!tx) return null;
      return {
        slot: tx.slot,
        blockTime: tx.blockTime,
        meta: { err: tx.err, fee: 5000, innerInstructions: [], logMessages: [] },
        // The signed transaction in base64 (records from before it was kept have none); other encodings are not served.
        transaction: options(opts).encoding === "base64" && tx.wire ? [tx.wire, "base64"] : null,
        version: 0,
      };
    },
    simulateTransaction: ([wire, opts]) => {
      const o = options(opts);
      const tx = decodeTx(wire, o.encoding);
      const result = chain.simulate(tx, o.sigVerify === true);
      return {
        context: context(),
        value: {
          err: result.err,
          logs: result.logs,
          accounts: null,
          unitsConsumed: result.unitsConsumed,
          returnData: null,
          ...(o.innerInstructions ? { innerInstructions: [] } : {}),
        },
      };
    },
    sendTransaction: ([wire, opts]) => {
      const tx = decodeTx(wire, options(opts).encoding);
      try {
        return chain.send(tx).signature;
      } catch (error) {
        if (error instanceof SendError) throw new JSONRPCErrorException(error.message, -32002, { err: error.reason, logs: [] });
        throw error;
      }
    },
  };
}

/** The RPC server on `127.0.0.1:port` (0: a free one). */
export async function startSolanaRpc(chain: LocalSolana, port = 0): Promise<{ url: string; close(): Promise<void> }> {
  // JSON-RPC 2.0 over `rpcMethods`: requests, batches and error answers are json-rpc-2.0's. A
  // refused call is an answer to its caller, nothing for this process to log.
  const rpc = new JSONRPCServer({ errorListener: () => {} });
  for (const [name, method] of Object.entries(rpcMethods(chain))) {
    rpc.addMethod(name, (params) => method(Array.isArray(params) ? params : []));
  }
  // What no method meant to throw is -32603, as Solana's RPC answers it (the library's own code is 0).
  rpc.mapErrorToJSONRPCErrorResponse = (id, error) =>
    error instanceof JSONRPCErrorException
      ? createJSONRPCErrorResponse(id, error.code, error.message, error.data)
      : createJSONRPCErrorResponse(id, JSONRPCErrorCode.InternalError, `Internal error: ${(error as Error).message}`);
  // A page paying the Solana site from a browser reads the mint and a blockhash here, as it would
  // from a public Solana RPC, which answers any origin and the headers it asks for: without these
  // headers the browser blocks the read and the page cannot sign a payment.
  const allowPages = cors({ origin: "*", methods: ["POST"], maxAge: 86_400, optionsSuccessStatus: 204 });
  const serve = (req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== "POST") {
      res.writeHead(405, { allow: "POST", "content-type": "application/json" }).end('{"error":"POST JSON-RPC 2.0"}');
      return;
    }
    getRawBody(req, { limit: MAX_BODY, encoding: "utf8" })
      .then(async (text) => {
        const answer = await rpc.receiveJSON(text);
        // A batch is answered with an array even when it holds one request (the library answers that one bare).
        const batch = answer !== null && !Array.isArray(answer) && text.trimStart().startsWith("[") ? [answer] : answer;
        res
          .writeHead(answer === null ? 204 : 200, { "content-type": "application/json" })
          .end(answer === null ? undefined : JSON.stringify(batch, (_k, v) => (typeof v === "bigint" ? Number(v) : v)));
      })
      // A body over MAX_BODY, or a batch holding something that is not a request object.
      .catch(() => req.destroy());
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => allowPages(req, res, () => serve(req, res)));
  const url = `http://127.0.0.1:${await listen(server, "127.0.0.1", port)}`;
  return { url, close: () => closeServer(server) };
}
