/**
 * Listening and closing for the local stand-ins' loopback HTTP servers (the market-data and
 * directory stubs, the demo sellers, the local Solana's JSON-RPC; `listen` also probes anvil's port).
 */
import type { Server } from "node:http";
import type { AddressInfo, Server as NetServer } from "node:net";

/** Listen on `port` of `host` (0: a free one); resolves with the port. */
export function listen(server: NetServer, host = "127.0.0.1", port = 0): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve((server.address() as AddressInfo).port));
  });
}

/** Close `server`, dropping its open connections (idle keep-alive ones would hold it open). */
export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
