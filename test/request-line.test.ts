/**
 * What reaches the service before any function: methods it does not answer, HEAD on a paid
 * GET, a Host header that tries to pick another route, and a JSON body nested to overflow
 * the stack. Raw `node:http` requests, since fetch refuses TRACE and CONNECT.
 */
import { request as httpRequest } from "node:http";
import { decodePaymentRequiredHeader } from "@x402/core/http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { base } from "../src/networks/base.ts";
import type { RunningService } from "../src/server/service.ts";
import { buyerAccount, challengeOf, rawRequest, signPayment, startTestService, usdcBalance } from "./support/service.ts";

let service: RunningService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(() => service.close());

describe("methods the route table does not know", () => {
  // OPTIONS is a CORS preflight, answered 204 before this check (test/browser-buyer.test.ts).
  it.each(["TRACE", "PROPFIND", "PUT", "DELETE"])("%s is a 405 JSON error with Allow", async (method) => {
    const res = await rawRequest(service.url, method, "/api/payment-verify");
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe("POST");
    expect(res.headers["content-type"]).toMatch(/^application\/json/);
    expect(JSON.parse(res.body).error).toMatchObject({ code: "method_not_allowed", details: { allow: ["POST"] } });
  });

  it("TRACE on a page is a 405 naming GET and HEAD", async () => {
    const res = await rawRequest(service.url, "TRACE", "/playbooks");
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe("GET, HEAD");
  });

  it("CONNECT is a 405 JSON error, not a dropped connection", async () => {
    const url = new URL(service.url);
    const answer = await new Promise<{ status: number; body: string; allow: string | undefined }>((resolve, reject) => {
      const req = httpRequest({ host: url.hostname, port: url.port, method: "CONNECT", path: "example.com:443" });
      req.on("connect", (res, socket) => {
        const chunks: Buffer[] = [];
        socket.on("data", (c: Buffer) => chunks.push(c));
        socket.on("end", () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString(), allow: res.headers.allow as string | undefined }),
        );
      });
      req.on("error", reject);
      req.end();
    });
    expect(answer.status).toBe(405);
    expect(answer.allow).toBe("GET, HEAD, POST");
  });
});

describe("HEAD on a paid GET", () => {
  it("answers 402 with the PAYMENT-REQUIRED header and no body", async () => {
    const res = await rawRequest(service.url, "HEAD", "/api/howto/x402-register");
    expect(res.status).toBe(402);
    expect(res.body).toBe("");
    const challenge = decodePaymentRequiredHeader(res.headers["payment-required"] as string);
    expect(challenge.accepts[0]?.amount).toBe("300000");
    expect(challenge.resource.url).toMatch(/\/api\/howto\/x402-register$/);
  });
});

describe("the Host header", () => {
  it.each(["x/api/howto/x402-register?", "evil.example/api/howto/x402-register#", "[bad"])(
    "%s never changes which route runs: the free health route answers",
    async (host) => {
      const res = await rawRequest(service.url, "GET", "/api/health", { host });
      expect(res.status).toBe(200);
      expect(JSON.parse(res.body)).toMatchObject({ network: base.id });
      expect(res.headers["payment-required"]).toBeUndefined();
    },
  );
});

describe("a JSON body nested 4,500 levels deep", () => {
  it("is a 400 naming the body, not a 500, and not charged", async () => {
    const buyer = buyerAccount(5);
    const before = await usdcBalance(buyer.address);
    const header = await signPayment(await challengeOf(`${service.url}/api/payment-verify`, { method: "POST" }), buyer);
    const bomb = `{"tx_hash":${"[".repeat(4500)}${"]".repeat(4500)}}`;
    expect(bomb.length).toBeLessThan(64 * 1024);
    const res = await rawRequest(
      service.url,
      "POST",
      "/api/payment-verify",
      { "content-type": "application/json", "payment-signature": header },
      bomb,
    );
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body).error).toMatchObject({
      code: "invalid_request",
      details: { fields: [{ field: "body", expected: "a JSON object nested at most 64 levels deep" }] },
    });
    expect(res.headers["payment-response"]).toBeUndefined();
    expect(await usdcBalance(buyer.address)).toBe(before);
  });

  it("a body nested 64 levels is still read (and answered on its merits)", async () => {
    const buyer = buyerAccount(5);
    const header = await signPayment(await challengeOf(`${service.url}/api/payment-verify`, { method: "POST" }), buyer);
    const deep = `{"tx_hash":${"[".repeat(63)}${"]".repeat(63)}}`;
    const res = await rawRequest(
      service.url,
      "POST",
      "/api/payment-verify",
      { "content-type": "application/json", "payment-signature": header },
      deep,
    );
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body).error.details.fields[0].field).toBe("body.tx_hash");
  });
});
