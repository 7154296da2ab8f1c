/**
 * A JSON-RPC proxy that holds every request `ms` before forwarding it: a distant RPC for the
 * benchmarks. It runs in a process of its own (`startLatencyProxy`), because a provider's work
 * is not ours: in the benchmark's process it would compete with the scanner it measures. For
 * the same reason answers are streamed through (node:http, kept-alive connections), not read
 * whole with fetch and sent again: that cost about 40 ms of CPU per 1.3 MB log answer on the
 * bench machine, which the one-at-a-time reference paid in series and the concurrent scan paid
 * in competition for the same two cores.
 * Run directly: `node scripts/bench-latency-proxy.ts <target> <ms>` prints its URL.
 */
import { spawn } from "node:child_process";
import { Agent, createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";

/** Start the proxy to `target` with `ms` of latency in a child process. */
export async function startLatencyProxy(target: string, ms: number): Promise<{ url: string; close(): Promise<void> }> {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), target, String(ms)], { stdio: ["ignore", "pipe", "inherit"] });
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (c: Buffer) => {
      out += c.toString();
      const line = out.split("\n")[0];
      if (out.includes("\n") && line) resolve(line.trim());
    });
    child.once("exit", (code) => reject(new Error(`the latency proxy exited (${code})`)));
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  process.once("exit", () => child.kill("SIGKILL"));
  return {
    url,
    close: async () => {
      if (child.exitCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}

function serve(target: string, ms: number): void {
  const upstream = new URL(target);
  // Streamed through with kept-alive connections, never buffered or re-parsed: the proxy adds
  // its latency and as little CPU as it can, since it shares the machine with what it measures.
  const agent = new Agent({ keepAlive: true });
  const server = createServer((req, res) => {
    const arrived = performance.now();
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      setTimeout(
        () => {
          const forward = request(
            {
              host: upstream.hostname,
              port: upstream.port,
              path: upstream.pathname,
              method: "POST",
              agent,
              headers: { "content-type": "application/json", "content-length": body.length },
            },
            (answer) => {
              res.writeHead(answer.statusCode ?? 502, { "content-type": answer.headers["content-type"] ?? "application/json" });
              answer.pipe(res);
            },
          );
          forward.on("error", () => {
            if (!res.headersSent) res.writeHead(502);
            res.end();
          });
          forward.end(body);
        },
        Math.max(0, ms - (performance.now() - arrived)),
      );
    });
  });
  server.listen(0, "127.0.0.1", () => {
    process.stdout.write(`http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
  });
  process.once("SIGTERM", () => process.exit(0));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) serve(process.argv[2] as string, Number(process.argv[3] ?? 50));
