/**
 * Test support for the operations tests (jobs, heartbeats, status feed, several instances): a
 * local stand-in of both x402 directories (empty lists in each one's shape), so the status
 * probes and the trust crawl never leave the machine, and a configuration pointing at it.
 */
import type { Config } from "../../src/config.ts";
import { testConfig } from "./service.ts";
import { type Stub, startStub } from "./stub-server.ts";

/** Both directories on one stub: `/cdp` answers `{items: []}`, `/x402-list` answers `{data: []}`. */
export function startDirectoryStub(): Promise<Stub> {
  return startStub((req, res) => {
    const path = req.url ?? "/";
    const body = path.startsWith("/cdp") ? { items: [] } : path.startsWith("/x402-list") ? { data: [] } : undefined;
    if (!body) return void res.writeHead(404, { "content-type": "application/json" }).end("{}");
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
  });
}

/** The test configuration with the directories on `directories` and optional overrides of the environment. */
export function operationsConfig(directories: Stub, env: Record<string, string> = {}): Config {
  return testConfig({ CDP_DISCOVERY_URL: `${directories.url}/cdp`, X402_LIST_URL: `${directories.url}/x402-list`, ...env });
}
