/**
 * How a server stops for a graceful stop: no new connections, the idle ones closed, and the rest
 * left to the drain (src/server/middleware/drain.ts) until it is over. Idle means no answer in
 * flight (the drain knows those) and nothing left to write. Not through http.Server's `close()`:
 * with `closeIdleConnections()` it counts a connection idle as soon as its answer is ended, even
 * while a slow client has not yet taken all of it, and destroys it with the answer cut.
 * Connections are followed per connection, not per request: the free routes' answers from memory
 * carry no listener (src/server/app.ts).
 */
import type { Server } from "node:http";
import { Server as NetServer, type Socket } from "node:net";

/** Follow the connections of `server` from now on: a listening server, stopped in two steps. */
export function trackConnections(server: Server) {
  const open = new Set<Socket>();
  server.on("connection", (socket: Socket) => {
    open.add(socket);
    socket.once("close", () => open.delete(socket));
  });
  return {
    /**
     * Accept no new connection, and destroy every connection that carries none of `busy` (the
     * sockets of the answers in flight) and has nothing left to write; resolves once every
     * connection has closed. A request still arriving at this moment (none of it read as a
     * request yet) loses its connection, as it would to a kept-alive connection closing.
     */
    stop(busy: ReadonlySet<Socket>): Promise<void> {
      const closed = new Promise<void>((resolve) =>
        NetServer.prototype.close.call(server, () => {
          // http's close() now only stops its timer that checks the connections' time limits.
          server.close(() => {});
          resolve();
        }),
      );
      for (const socket of open) if (!busy.has(socket) && socket.writableLength === 0) socket.destroy();
      return closed;
    },
    /** Destroy every connection still open (the drain is over). */
    closeAll() {
      server.closeAllConnections();
    },
  };
}
