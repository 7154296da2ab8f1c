/**
 * A graceful stop cuts no answer already written: an answer a slow client has not yet taken
 * whole is in flight until its socket has it, whether the Express chain wrote it (a built page)
 * or the site's handler did from memory before the chain (a free document of the process).
 * http's own close() treated such a connection as idle, since its answer was ended, and
 * destroyed it.
 */
import { connect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import type { RunningService } from "../src/server/service.ts";
import { startTestService } from "./support/service.ts";

/** The HTTP/1.1 answers in `bytes`, each with its status and whole body; how many bytes are left over (a cut answer). */
function answersIn(bytes: Buffer): { statuses: number[]; bodies: Buffer[]; rest: number } {
  const statuses: number[] = [];
  const bodies: Buffer[] = [];
  let at = 0;
  for (;;) {
    const headEnd = bytes.indexOf("\r\n\r\n", at);
    if (headEnd < 0) break;
    const head = bytes.toString("latin1", at, headEnd);
    const length = Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1] ?? 0);
    if (headEnd + 4 + length > bytes.length) break;
    statuses.push(Number(head.slice(9, 12)));
    bodies.push(bytes.subarray(headEnd + 4, headEnd + 4 + length));
    at = headEnd + 4 + length;
  }
  return { statuses, bodies, rest: bytes.length - at };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// A test that fails before its stop still stops its service (close() after shutdown() is a no-op).
const services: RunningService[] = [];
afterEach(async () => {
  await Promise.all(services.splice(0).map((s) => s.close()));
});

describe("a graceful stop and a slow client", () => {
  it.each([
    ["a built page, through the Express chain", "/methodology/"],
    ["a free document held in memory, before the chain", "/api/pricing"],
  ])("waits until the client has taken every answer already written, and cuts none: %s", async (_label, path) => {
    const service = await startTestService();
    services.push(service);
    // Its bytes (and, for a document of the process, its first answer, which puts it in memory).
    const first = await fetch(`${service.url}${path}`);
    expect(first.status).toBe(200);
    const expected = Buffer.from(await first.arrayBuffer());
    const { hostname, port } = new URL(service.url);
    const socket = connect(Number(port), hostname);
    await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
    // About 12 MB of answers to pipelined GETs, more than the kernel's buffers take on the
    // loopback (a few MB), and the client does not read: what the server wrote waits on its
    // side of the socket. At most 1,000 requests (about 50 KB), which the server reads at once:
    // requests left unread when the connection closes would make the kernel reset it.
    const requests = Math.min(1_000, Math.ceil((12 * 1024 * 1024) / expected.length));
    socket.write(`GET ${path} HTTP/1.1\r\nHost: ${hostname}\r\n\r\n`.repeat(requests));
    await sleep(500);
    let stopped = false;
    const stop = service.shutdown({ drainMs: 10_000 }).then((result) => {
      stopped = true;
      return result;
    });
    await sleep(500);
    expect(stopped).toBe(false);
    const chunks: Buffer[] = [];
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    await new Promise<void>((resolve) => socket.once("close", () => resolve()));
    expect(await stop).toEqual({ drained: true, inFlight: 0 });
    const { statuses, bodies, rest } = answersIn(Buffer.concat(chunks));
    expect(rest).toBe(0);
    const served = statuses.filter((s) => s === 200).length;
    expect(served).toBeGreaterThan(0);
    for (const body of bodies.slice(0, served)) expect(body.equals(expected)).toBe(true);
    // Any request read after the stop began is refused, asking for a retry elsewhere.
    expect(statuses.slice(served).every((s) => s === 503)).toBe(true);
  });
});
