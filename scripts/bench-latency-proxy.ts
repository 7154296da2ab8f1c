/**
 * A proxy that holds every request `ms` before it reaches the target: a distant RPC for the
 * benchmarks. It runs in a process of its own (`startLatencyProxy`), because a provider's work
 * is not ours: in the benchmark's process it would compete with the scanner it measures. For
 * the same reason it moves bytes, not HTTP: answers are piped back untouched (read whole with
 * fetch and sent again, they cost about 40 ms of CPU per 1.3 MB log answer on the bench machine,
 * which the one-at-a-time reference paid in series and the concurrent scan paid in competition
 * for the same two cores; streamed through node:http, still a parse and a re-encoding each).
 * Run directly: `node scripts/bench-latency-proxy.ts <target> <ms>` prints its URL.
 */
import { spawn } from "node:child_process";
import { type AddressInfo, connect, createServer as createNetServer } from "node:net";
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
  // Bytes, not HTTP: each client connection gets its own connection to the target; what the
  // client sends is passed on `ms` after it arrived (in order), and the answers are piped back
  // untouched. A kept-alive HTTP/1.1 connection carries one request at a time, so each request
  // reaches the target `ms` after the client sent it.
  const server = createNetServer((client) => {
    client.setNoDelay(true);
    const target = connect({ host: upstream.hostname, port: Number(upstream.port) }, () => target.setNoDelay(true));
    client.on("data", (chunk: Buffer) => {
      setTimeout(() => {
        if (!target.destroyed) target.write(chunk);
      }, ms);
    });
    target.pipe(client);
    const close = () => {
      client.destroy();
      target.destroy();
    };
    client.on("error", close).on("close", close);
    target.on("error", close).on("close", close);
  });
  server.listen(0, "127.0.0.1", () => {
    process.stdout.write(`http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
  });
  process.once("SIGTERM", () => process.exit(0));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) serve(process.argv[2] as string, Number(process.argv[3] ?? 50));
