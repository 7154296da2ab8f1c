/**
 * Decoding `eth_getLogs` answers' bytes (src/chain/transfer-answer.ts) and reading them straight
 * over HTTP (src/chain/json-rpc-http.ts): real answers of the seeded devnet read by the fast
 * reader give the scenario's ground truth; reshaped answers (white space, key order, unknown
 * fields, escapes, duplicates) give exactly what `JSON.parse` gives; failures come out as the
 * viem errors the scanner's rules read.
 */
import { createHash } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import { getAddress, HttpRequestError, ResponseBodyTooLargeError, RpcRequestError, TimeoutError } from "viem";
import { afterEach, describe, expect, it } from "vitest";
import { createChainClient, rpcTransport } from "../src/chain/client.ts";
import { postJsonRpc } from "../src/chain/json-rpc-http.ts";
import { TRANSFER_TOPIC, TransferScanner } from "../src/chain/log-scanner.ts";
import { AddressBook, fastTransfers, NotLogsError, type RawLog, readTransfers, transfersOf } from "../src/chain/transfer-answer.ts";
import { base } from "../src/networks/base.ts";
import { scenario, truthLogs } from "./support/scenario.ts";
import { devnet } from "./support/service.ts";

const USDC = base.usdc.address;

/** The raw bytes of the devnet's answer to eth_getLogs for the scenario's USDC transfers (null: every token's). */
async function realAnswer(token: string | null = USDC): Promise<Buffer> {
  const s = scenario();
  const res = await fetch(devnet().rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 7,
      method: "eth_getLogs",
      params: [
        {
          ...(token ? { address: token } : {}),
          topics: [TRANSFER_TOPIC],
          fromBlock: `0x${s.startBlock.toString(16)}`,
          toBlock: `0x${s.endBlock.toString(16)}`,
        },
      ],
    }),
  });
  return Buffer.from(await res.arrayBuffer());
}

/** What JSON.parse and the field decoding make of `body` (the reference). */
function reference(body: Buffer, token: `0x${string}` | undefined) {
  return transfersOf((JSON.parse(body.toString("utf8")) as { result: RawLog[] }).result, token, new AddressBook());
}

const truth = () => truthLogs("USDC");

describe("the address book", () => {
  it("gives every address checksummed, read in place or from a string, across growth and clearing", () => {
    const book = new AddressBook(3_000);
    const hex = Array.from({ length: 5_000 }, (_, i) => createHash("sha256").update(String(i)).digest("hex").slice(0, 40));
    const text = Buffer.from(`xx${hex.join("")}`);
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < hex.length; i++) {
        const expected = getAddress(`0x${hex[i]}`);
        expect(book.at(text, 2 + i * 40)).toBe(expected);
        expect(book.get(hex[i] as string)).toBe(expected);
      }
    }
    // Upper-case digits are the same address.
    expect(book.at(Buffer.from((hex[7] as string).toUpperCase()), 0)).toBe(getAddress(`0x${hex[7]}`));
    expect(() => book.at(Buffer.from("zz".repeat(20)), 0)).toThrow();
  });
});

describe("the fast reader", () => {
  it("reads a real answer as the ground truth, without JSON.parse", async () => {
    const body = await realAnswer();
    const fast = fastTransfers(body, USDC, new AddressBook());
    expect(fast?.logs).toEqual(truth());
    expect(fast).toEqual(reference(body, USDC));
    expect(fast?.count).toBe((JSON.parse(body.toString()) as { result: unknown[] }).result.length);
  });

  it("reads every token's transfers when no token is asked, each with its own address", async () => {
    const body = await realAnswer(null);
    const fast = fastTransfers(body, undefined, new AddressBook());
    expect(fast).toEqual(reference(body, undefined));
    expect(new Set(fast?.logs.map((l) => l.token)).size).toBeGreaterThan(1);
    expect(fast?.logs.filter((l) => l.token === USDC)).toEqual(truth());
  });

  it("takes white space, any key order, upper-case hex quantities and unknown scalar fields", async () => {
    const answer = JSON.parse((await realAnswer()).toString()) as { jsonrpc: string; id: number; result: Record<string, unknown>[] };
    const reshaped = {
      result: answer.result.map((log) => ({
        ...Object.fromEntries(Object.entries(log).reverse()),
        blockNumber: String(log.blockNumber).toUpperCase().replace("0X", "0x"),
        extraNumber: -1.5e3,
        extraNull: null,
        extraTrue: true,
      })),
      id: answer.id,
      jsonrpc: answer.jsonrpc,
    };
    const body = Buffer.from(JSON.stringify(reshaped, null, "\t\r\n "));
    const fast = fastTransfers(body, USDC, new AddressBook());
    expect(fast).toBeDefined();
    expect(fast?.logs).toEqual(truth());
  });

  it("skips what is not an ERC-20 transfer (four topics, short data, removed) but counts it", async () => {
    const answer = JSON.parse((await realAnswer()).toString()) as { result: Record<string, unknown>[] };
    const [first, second, third, ...rest] = answer.result as (Record<string, unknown> & { topics: string[] })[];
    const odd = [
      { ...first, topics: [...(first?.topics ?? []), `0x${"00".repeat(32)}`] },
      { ...second, data: "0x" },
      { ...third, removed: true },
      ...rest,
    ];
    const body = Buffer.from(JSON.stringify({ jsonrpc: "2.0", id: 1, result: odd }));
    const fast = fastTransfers(body, USDC, new AddressBook());
    expect(fast?.count).toBe(answer.result.length);
    expect(fast?.logs).toEqual(truth().slice(3));
    expect(fast).toEqual(reference(body, USDC));
  });

  it("reads amounts of any size exactly, and refuses a digit that is not hex as transfersOf does", async () => {
    const answer = JSON.parse((await realAnswer()).toString()) as { result: Record<string, unknown>[] };
    const amounts = [0n, 1n, 2n ** 52n - 1n, 2n ** 52n, 2n ** 53n + 1n, 10n ** 30n + 7n, 2n ** 256n - 1n];
    const result = amounts.map((amount, i) => ({
      ...answer.result[i % answer.result.length],
      data: `0x${amount.toString(16).padStart(64, "0")}`,
    }));
    const body = Buffer.from(JSON.stringify({ jsonrpc: "2.0", id: 1, result }));
    expect(fastTransfers(body, USDC, new AddressBook())?.logs.map((l) => l.value)).toEqual(amounts);
    // Upper-case digits are the same amount.
    const upper = Buffer.from(body.toString().replace(/"data":"0x([0-9a-f]+)"/g, (_m, d: string) => `"data":"0x${d.toUpperCase()}"`));
    expect(fastTransfers(upper, USDC, new AddressBook())?.logs.map((l) => l.value)).toEqual(amounts);
    for (const digits of ["0".repeat(63) + "g", "0".repeat(50) + "g".padEnd(14, "1")]) {
      const bad = Buffer.from(JSON.stringify({ jsonrpc: "2.0", id: 1, result: [{ ...answer.result[0], data: `0x${digits}` }] }));
      expect(() => fastTransfers(bad, USDC, new AddressBook())).toThrow(SyntaxError);
      expect(() => reference(bad, USDC)).toThrow(SyntaxError);
    }
  });

  it("hands escapes, non-ASCII text, nested values, duplicate keys and malformed quantities to JSON.parse, with the same result", async () => {
    const text = (await realAnswer()).toString();
    const variants = [
      // An escaped character in a hash: the same string once parsed.
      text.replace(/"transactionHash":"0x/, '"transactionHash":"\\u0030x'),
      text.replace('"removed":false', '"removed":false,"note":"café"'),
      text.replace('"removed":false', '"removed":false,"extra":{"a":[1,2]}'),
      // JSON.parse keeps the last of two equal keys.
      text.replace('"removed":false', '"removed":false,"logIndex":"0x63"'),
      text.replace(/"blockNumber":"0x[0-9a-f]+"/, '"blockNumber":"12"'),
    ];
    for (const variant of variants) {
      const body = Buffer.from(variant);
      expect(fastTransfers(body, USDC, new AddressBook()), variant.slice(0, 80)).toBeUndefined();
      expect(readTransfers(body, USDC, new AddressBook())).toEqual(reference(body, USDC));
    }
    // The duplicate key's value won, as JSON.parse has it.
    expect(readTransfers(Buffer.from(variants[3] as string), USDC, new AddressBook()).logs[0]?.logIndex).toBe(0x63);
  });

  it("refuses an answer cut anywhere, as JSON.parse does, never reading a shorter one", async () => {
    const answer = JSON.parse((await realAnswer()).toString()) as { result: unknown[] };
    const text = JSON.stringify({ jsonrpc: "2.0", id: 1, result: answer.result.slice(0, 2) });
    expect(readTransfers(Buffer.from(text), USDC, new AddressBook()).logs).toHaveLength(2);
    for (let cut = 0; cut < text.length; cut++) {
      expect(() => readTransfers(Buffer.from(text.slice(0, cut)), USDC, new AddressBook()), `cut at ${cut}`).toThrow(SyntaxError);
    }
  });

  it("reads an empty list, and refuses answers without one", () => {
    expect(readTransfers(Buffer.from('{"jsonrpc":"2.0","id":1,"result":[]}'), USDC, new AddressBook())).toEqual({ logs: [], count: 0 });
    const error = { code: -32005, message: "query returned more than 10000 results" };
    const refused = (() => {
      try {
        readTransfers(Buffer.from(JSON.stringify({ jsonrpc: "2.0", id: 1, error })), USDC, new AddressBook());
      } catch (e) {
        return e;
      }
    })();
    expect(refused).toBeInstanceOf(NotLogsError);
    expect((refused as NotLogsError).answer).toEqual({ jsonrpc: "2.0", id: 1, error });
    expect(() => readTransfers(Buffer.from('{"jsonrpc":"2.0","id":1,"result":null}'), USDC, new AddressBook())).toThrow(NotLogsError);
    expect(() => readTransfers(Buffer.from('{"jsonrpc":"2.0","id":1,"result":[{"address"'), USDC, new AddressBook())).toThrow(SyntaxError);
  });
});

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

/** A local JSON-RPC server answering every request with `answer`. */
async function serve(answer: (body: string, res: import("node:http").ServerResponse) => void): Promise<string> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => answer(Buffer.concat(chunks).toString(), res));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const caught = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e,
  );
const options = { timeoutMs: 2_000, maxBodyBytes: 4 * 1024 * 1024 };

describe("JSON-RPC straight over HTTP", () => {
  it("decodes gzip answers, as fetch does", async () => {
    const body = await realAnswer();
    const url = await serve((_req, res) =>
      res.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip" }).end(gzipSync(body)),
    );
    const answer = await postJsonRpc([url], "eth_getLogs", [], options);
    expect(answer.body.equals(body)).toBe(true);
  });

  it("fails at once, as a network error, when a compressed answer is cut off", async () => {
    const body = gzipSync(await realAnswer());
    const cut = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip", "content-length": body.length });
      res.write(body.subarray(0, body.length >> 1), () => res.socket?.destroy());
    });
    const started = performance.now();
    const error = await caught(postJsonRpc([cut], "eth_getLogs", [], options));
    expect(error).toBeInstanceOf(HttpRequestError);
    expect(performance.now() - started).toBeLessThan(options.timeoutMs / 2);
  });

  it("tries the next URL after an HTTP error without a JSON-RPC answer (a refused key, a wrong path)", async () => {
    const forbidden = await serve((_req, res) => res.writeHead(403).end("forbidden"));
    const good = await serve((_req, res) => res.writeHead(200).end('{"jsonrpc":"2.0","id":1,"result":[]}'));
    expect((await postJsonRpc([forbidden, good], "eth_getLogs", [], options)).url).toBe(`${good}/`);
    const alone = await caught(postJsonRpc([forbidden], "eth_getLogs", [], options));
    expect(alone).toMatchObject({ status: 403 });
  });

  it("tries the next URL when one does not answer, and not after a JSON-RPC error", async () => {
    const down = await serve((_req, res) => res.writeHead(503).end("down"));
    const limited = await serve((_req, res) => res.writeHead(429, { "retry-after": "2" }).end("slow down"));
    const good = await serve((_req, res) => res.writeHead(200).end('{"jsonrpc":"2.0","id":1,"result":[]}'));
    expect((await postJsonRpc([down, limited, good], "eth_getLogs", [], options)).url).toBe(`${good}/`);
    const refusing = await serve((_req, res) =>
      res.writeHead(400).end('{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"block range too large"}}'),
    );
    const error = await caught(postJsonRpc([refusing, good], "eth_getLogs", [], options));
    expect(error).toBeInstanceOf(RpcRequestError);
    expect(error).toMatchObject({ code: -32602, details: "block range too large" });
    const last = await caught(postJsonRpc([down, limited], "eth_getLogs", [], options));
    expect(last).toBeInstanceOf(HttpRequestError);
    expect(last).toMatchObject({ status: 429 });
    expect((last as HttpRequestError).headers?.get("retry-after")).toBe("2");
  });

  it("stops reading an answer past the cap, and gives up on a node that does not answer in time", async () => {
    const chunked = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write(`{"jsonrpc":"2.0","id":1,"result":["${"0".repeat(3_000)}`);
      res.end(`${"0".repeat(3_000)}"]}`);
    });
    const tooLarge = await caught(postJsonRpc([chunked], "eth_getLogs", [], { ...options, maxBodyBytes: 4_000 }));
    expect(tooLarge).toBeInstanceOf(ResponseBodyTooLargeError);
    const silent = await serve(() => {});
    const started = performance.now();
    const timeout = await caught(postJsonRpc([silent], "eth_getLogs", [], { ...options, timeoutMs: 200 }));
    expect(timeout).toBeInstanceOf(TimeoutError);
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it("turns a JSON-RPC error and an unreadable answer into the scanner's upstream errors", async () => {
    const client = (url: string) => createChainClient(base.chainAt([url]), rpcTransport([url], { retryCount: 0 }));
    const refusing = await serve((_req, res) =>
      res.writeHead(200).end('{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"execution aborted"}}'),
    );
    const scanner = new TransferScanner(client(refusing), { rpcUrls: [refusing], attempts: 1 });
    expect(await caught(scanner.transfers({ token: USDC, fromBlock: 0, toBlock: 10 }, 0))).toMatchObject({
      code: "upstream_error",
      status: 502,
      upstream: "rpc",
    });
    const garbled = await serve((_req, res) => res.writeHead(200).end("<html>gateway</html>"));
    const confused = new TransferScanner(client(garbled), { rpcUrls: [garbled], attempts: 1 });
    expect(await caught(confused.transfers({ token: USDC, fromBlock: 0, toBlock: 10 }, 0))).toMatchObject({
      code: "unavailable",
      status: 503,
      upstream: "rpc",
    });
  });
});
