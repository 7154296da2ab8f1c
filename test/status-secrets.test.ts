/**
 * The public status feed never shows a secret of the operator's configuration: an RPC
 * provider's key sits in its URL's path (`/v2/<key>`), and the feed names each RPC node by its
 * host only, also when that node fails and its error is the check's detail.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { StatusDocument } from "../spec/routes/status.ts";
import type { RunningService } from "../src/server/service.ts";
import { startService } from "../src/server/service.ts";
import type { Store } from "../src/store/store.ts";
import { startDirectoryStub } from "./support/operations.ts";
import { devnet, freshSqliteStore, productionConfig } from "./support/service.ts";
import { type Stub, startStub } from "./support/stub-server.ts";

const KEY = "k3y-0f-the-operat0r-9f8e7d6c5b4a";

describe("the status feed with an RPC node refusing its key", () => {
  let store: Store;
  let directories: Stub;
  let provider: Stub;
  let service: RunningService;
  beforeAll(async () => {
    store = await freshSqliteStore();
    directories = await startDirectoryStub();
    // A provider answering every call as a revoked key is answered: 401.
    provider = await startStub((_req, res) => {
      res
        .writeHead(401, { "content-type": "application/json" })
        .end('{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"invalid key"}}');
    });
    const config = productionConfig({
      RPC_URL: `${devnet().rpcUrl},${provider.url}/v2/${KEY}?apikey=${KEY}`,
      CDP_DISCOVERY_URL: `${directories.url}/cdp`,
      X402_LIST_URL: `${directories.url}/x402-list`,
    });
    service = await startService({ config, store, maintenance: true, instance: "status-secrets" });
  });
  afterAll(async () => {
    await service?.close();
    await store?.close();
    await directories?.close();
    await provider?.close();
  });

  it("says the node is down, naming its host, and shows no part of its URL's path or query", async () => {
    let text = "";
    for (let i = 0; i < 200 && text === ""; i++) {
      const res = await fetch(`${service.url}/api/status.json`);
      if (res.status === 200) text = await res.text();
      else await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const doc = JSON.parse(text) as StatusDocument;
    const chain = doc.groups.find((g) => g.id === "chain");
    const host = new URL(provider.url).host;
    expect(chain?.checks.map((c) => [c.name, c.status])).toEqual([
      [`RPC 1 (${new URL(devnet().rpcUrl).host})`, "operational"],
      [`RPC 2 (${host})`, "down"],
    ]);
    // viem's report of the JSON-RPC error, on one line, its URL cut to the origin.
    expect(chain?.checks[1]?.detail).toBe(
      `unreachable: Missing or invalid parameters. Double check you have provided the correct parameters. URL: http://${host}/… Request body: {"method":"eth_blockNumber"} Details: invalid key Version: viem@2.57.1`,
    );
    expect(text).not.toContain(KEY);
    expect(text).not.toContain("/v2/");
  });

  it("shows a failed job's error with the URLs it names cut to their origins", async () => {
    // The ledger upkeep's last run failed on a provider's error, whose message names the full URL.
    const message = `HTTP request failed.\n\nStatus: 429\nURL: https://user:pw@base-mainnet.example.test/v2/${KEY}\nDetails: rate limited`;
    await store.query("insert into job_runs (job, instance, trigger, finished_at, outcome, detail) values ($1, $2, $3, now(), $4, $5)", [
      "ledger_upkeep",
      "status-secrets",
      "manual",
      "failed",
      message,
    ]);
    await service.jobs.runNow("status");
    const text = await (await fetch(`${service.url}/api/status.json`)).text();
    const jobs = (JSON.parse(text) as StatusDocument).groups.find((g) => g.id === "jobs");
    const upkeep = jobs?.checks.find((c) => c.name === "Ledger upkeep");
    expect(upkeep?.status).toBe("degraded");
    expect(upkeep?.detail).toMatch(
      /: failed \(HTTP request failed\. Status: 429 URL: https:\/\/base-mainnet\.example\.test\/… Details: rate limited\)$/,
    );
    expect(text).not.toContain(KEY);
    expect(text).not.toContain("user:pw");
  });
});
