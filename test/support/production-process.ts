/**
 * The service as a production process (`src/server/main.ts` under tsx, production settings in
 * `env`), for the tests that kill, pause or restart it; resolves once it announces production mode.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";

export interface ServiceProcess {
  proc: ChildProcess;
  /** Everything it wrote to stdout and stderr so far. */
  output: () => string;
}

/** A port free on loopback now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Start the service with `env` added to this process's environment; rejects if it exits or is not up within `timeoutMs`. */
export async function startServiceProcess(env: Record<string, string>, timeoutMs: number): Promise<ServiceProcess> {
  const proc = spawn(process.execPath, ["--import", "tsx", "src/server/main.ts"], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  proc.stdout?.on("data", (c: Buffer) => (output += c.toString()));
  proc.stderr?.on("data", (c: Buffer) => (output += c.toString()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the service did not start:\n${output}`)), timeoutMs);
    const poll = setInterval(() => {
      if (output.includes("PRODUCTION MODE")) {
        clearTimeout(timer);
        clearInterval(poll);
        resolve();
      }
    }, 50);
    proc.once("exit", (code) => {
      clearTimeout(timer);
      clearInterval(poll);
      reject(new Error(`the service exited with ${code}:\n${output}`));
    });
  });
  proc.removeAllListeners("exit");
  return { proc, output: () => output };
}
