/**
 * A remote facilitator with CDP keys signs each call with a CDP JWT (`@coinbase/x402`, loaded at
 * the first call): checked against a local stand-in of the facilitator, with a fresh Ed25519 key
 * whose public half verifies the signature.
 */
import { createPublicKey, generateKeyPairSync, verify } from "node:crypto";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { base } from "../src/networks/base.ts";
import { createRemoteFacilitator } from "../src/payments/facilitator.ts";

const seen: { method: string; url: string; headers: IncomingHttpHeaders }[] = [];
const server = createServer((req, res) => {
  seen.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers });
  req.resume();
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify({ kinds: [{ x402Version: 2, scheme: "exact", network: base.id }], extensions: [], signers: {} }));
});
let url = "";
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/platform/v2/x402`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const json = (part: string) => JSON.parse(Buffer.from(part, "base64url").toString("utf8")) as Record<string, unknown>;

describe("a remote facilitator with CDP keys", () => {
  it("sends a CDP JWT signed with the key, naming the key and the call", async () => {
    const { privateKey, publicKey } = generateKeyPairSync("ed25519");
    const seed = privateKey.export({ format: "der", type: "pkcs8" }).subarray(-32);
    const raw = publicKey.export({ format: "der", type: "spki" }).subarray(-32);
    const keySecret = Buffer.concat([seed, raw]).toString("base64");
    const client = createRemoteFacilitator(url, { keyId: "key-id-1", keySecret }, 5_000);

    const supported = await client.getSupported();
    expect(supported.kinds).toEqual([{ x402Version: 2, scheme: "exact", network: base.id }]);
    expect(seen.map((r) => [r.method, r.url])).toEqual([["GET", "/platform/v2/x402/supported"]]);
    const auth = seen[0]?.headers.authorization ?? "";
    expect(auth).toMatch(/^Bearer [\w-]+\.[\w-]+\.[\w-]+$/);
    const [header, payload, signature] = auth.slice("Bearer ".length).split(".") as [string, string, string];
    expect(json(header)).toMatchObject({ alg: "EdDSA", kid: "key-id-1", typ: "JWT" });
    // The JWT names the call on CDP's own host, which is what CDP's facilitator checks.
    expect(json(payload)).toMatchObject({ sub: "key-id-1", iss: "cdp", uris: ["GET api.cdp.coinbase.com/platform/v2/x402/supported"] });
    const key = createPublicKey({ key: publicKey.export({ format: "der", type: "spki" }), format: "der", type: "spki" });
    expect(verify(null, Buffer.from(`${header}.${payload}`), key, Buffer.from(signature, "base64url"))).toBe(true);
  });

  it("sends no Authorization header without keys", async () => {
    seen.length = 0;
    await createRemoteFacilitator(url, undefined, 5_000).getSupported();
    expect(seen.map((r) => r.headers.authorization)).toEqual([undefined]);
  });
});
