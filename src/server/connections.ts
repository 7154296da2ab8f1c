/**
 * A server's open connections, and which are idle for a graceful stop: no answer in flight on
 * them (the drain knows those: src/server/middleware/drain.ts) and nothing left to write.
 * http.Server's `closeIdleConnections()` (which its `close()` calls too) counts a connection idle
 * as soon as its answer is ended, even while a slow client has not yet taken all of it, and
 * destroys it with the answer cut. Followed per connection, not per request: the free routes'
 * answers from memory carry no listener (src/server/app.ts).
 */
import type { Server } from "node:http";
import type { Socket } from "node:net";

/** A server's open connections, and a way to close the idle ones. */
export interface Connections {
  /**
   * Destroy every connection that carries none of `busy` (the sockets of the answers in flight)
   * and has nothing left to write. A request still arriving when this runs (none of it read as
   * a request yet) loses its connection, as it would to a kept-alive connection closing.
   */
  closeIdle(busy: ReadonlySet<Socket>): void;
}

/** Follow the connections of `server` from now on. */
export function trackConnections(server: Server): Connections {
  const open = new Set<Socket>();
  server.on("connection", (socket: Socket) => {
    open.add(socket);
    socket.once("close", () => open.delete(socket));
  });
  return {
    closeIdle(busy) {
      for (const socket of open) if (!busy.has(socket) && socket.writableLength === 0) socket.destroy();
    },
  };
}
