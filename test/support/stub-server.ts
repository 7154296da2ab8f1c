/** A real local HTTP server for standing in for third-party upstreams in tests. */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** A running stub. */
export interface Stub {
  url: string;
  /** Requests received, with their parsed JSON bodies. */
  requests: { method: string; path: string; body: unknown }[];
  close(): Promise<void>;
}

/** Start a stub answering with `handle`; the request body is parsed as JSON when it is JSON. */
export async function startStub(handle: (req: IncomingMessage, res: ServerResponse, body: unknown) => void | Promise<void>): Promise<Stub> {
  const requests: Stub["requests"] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      let body: unknown = text;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {}
      requests.push({ method: req.method ?? "", path: req.url ?? "", body });
      void handle(req, res, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** Forward a JSON-RPC request (single or batch) to `rpcUrl` and return the parsed answer. */
export async function forwardRpc(rpcUrl: string, body: unknown): Promise<unknown> {
  const res = await fetch(rpcUrl, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  return res.json();
}
