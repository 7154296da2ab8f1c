/**
 * Every log line is JSON: `captureConsole` (src/log.ts) turns what libraries print through
 * `console` (x402 prints undecodable payment headers, i.e. caller-chosen bytes) into one JSON
 * line each, with control characters escaped and the text cut to 500 characters, and puts the
 * original methods back when asked. The logger itself never writes through `console`; its lines
 * have an exact shape, secret-named fields are redacted, and its default output is asynchronous.
 */
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createPublicClient, http } from "viem";
import { afterEach, beforeEach, expect, it, type Mock, vi } from "vitest";
import { captureConsole, createLogger, flushLogs, type LogLevel } from "../src/log.ts";

const METHODS = ["log", "info", "warn", "error", "debug"] as const;
type Method = (typeof METHODS)[number];

/** The real console methods, put back after each test. */
const real = Object.fromEntries(METHODS.map((m) => [m, console[m]])) as Record<Method, (...args: unknown[]) => void>;
/** Stand-ins installed before each test, so that "the original" is observable and prints nothing. */
let fakes: Record<Method, Mock<(...args: unknown[]) => void>>;

beforeEach(() => {
  fakes = Object.fromEntries(METHODS.map((m) => [m, vi.fn<(...args: unknown[]) => void>()])) as Record<
    Method,
    Mock<(...args: unknown[]) => void>
  >;
  for (const m of METHODS) console[m] = fakes[m];
});
afterEach(() => {
  for (const m of METHODS) console[m] = real[m];
  vi.restoreAllMocks();
});

/** A logger at `level` whose raw serialized lines are kept in `lines`. */
function arrayLogger(level: LogLevel = "debug") {
  const lines: string[] = [];
  return { log: createLogger(level, { service: "test" }, (line) => lines.push(line)), lines };
}

it("writes a library's console.warn of hostile bytes as one escaped, truncated JSON line at level warn", () => {
  const { log, lines } = arrayLogger();
  const restore = captureConsole(log);
  try {
    console.warn("Failed to decode PAYMENT-SIGNATURE", "\u001b[31mevil\nline" + "x".repeat(2000));
  } finally {
    restore();
  }
  expect(lines).toHaveLength(1);
  const line = lines[0] as string;
  expect(line).not.toContain("\n");
  expect(line).not.toContain("\r");
  expect(line).not.toContain("\u001b");
  expect(line).toContain("\\u001b[31mevil\\nline");
  const record = JSON.parse(line) as Record<string, unknown>;
  expect(record).toMatchObject({ level: "warn", msg: "library output", source: "console", service: "test" });
  const text = record.text as string;
  expect(text.length).toBeLessThanOrEqual(520);
  const head = "Failed to decode PAYMENT-SIGNATURE \u001b[31mevil\nline";
  expect(text).toBe(`${head}${"x".repeat(500 - head.length)}…(truncated)`);
  // Nothing reached the original method.
  expect(fakes.warn).not.toHaveBeenCalled();
});

it("maps log and info to info, warn to warn, error to error, debug to debug, and formats like console", () => {
  const { log, lines } = arrayLogger();
  const restore = captureConsole(log);
  try {
    console.log("%s=%d", "a", 5, { b: 1 });
    console.info("info");
    console.warn("warn");
    console.error(new Error("boom"));
    console.debug("debug");
  } finally {
    restore();
  }
  const records = lines.map((l) => JSON.parse(l) as { level: string; text: string; source: string });
  expect(records.map((r) => [r.level, r.source])).toEqual([
    ["info", "console"],
    ["info", "console"],
    ["warn", "console"],
    ["error", "console"],
    ["debug", "console"],
  ]);
  expect(records.map((r) => r.text.split("\n")[0])).toEqual(["a=5 { b: 1 }", "info", "warn", "Error: boom", "debug"]);
  for (const m of METHODS) expect(fakes[m]).not.toHaveBeenCalled();
});

it("keeps short text whole and respects the logger's level", () => {
  const { log, lines } = arrayLogger("warn");
  const restore = captureConsole(log);
  try {
    console.info("dropped below warn");
    console.error("x".repeat(500));
  } finally {
    restore();
  }
  expect(lines.map((l) => JSON.parse(l) as { level: string; text: string })).toEqual([
    expect.objectContaining({ level: "error", text: "x".repeat(500) }),
  ]);
});

it("restores the original console methods", () => {
  const { log, lines } = arrayLogger();
  const restore = captureConsole(log);
  for (const m of METHODS) expect(console[m]).not.toBe(fakes[m]);
  restore();
  for (const m of METHODS) expect(console[m]).toBe(fakes[m]);
  console.warn("after restore");
  expect(fakes.warn).toHaveBeenCalledWith("after restore");
  expect(lines).toEqual([]);
  // A second call changes nothing.
  restore();
  for (const m of METHODS) expect(console[m]).toBe(fakes[m]);
});

it("writes each line as exact JSON: level, ISO time, base and child fields, the call's fields, then msg", () => {
  const { log, lines } = arrayLogger("debug");
  vi.useFakeTimers({ now: new Date("2026-01-02T03:04:05.678Z"), toFake: ["Date"] });
  try {
    log.info("request", { request_id: "r-1", method: "GET", path: "/api/pricing", status: 200, ms: 0.42 });
    log.child({ part: "gate" }).warn("slow settle", { ms: 950 });
    log.debug("plain");
  } finally {
    vi.useRealTimers();
  }
  expect(lines).toEqual([
    '{"level":"info","t":"2026-01-02T03:04:05.678Z","service":"test","request_id":"r-1","method":"GET","path":"/api/pricing","status":200,"ms":0.42,"msg":"request"}',
    '{"level":"warn","t":"2026-01-02T03:04:05.678Z","service":"test","part":"gate","ms":950,"msg":"slow settle"}',
    '{"level":"debug","t":"2026-01-02T03:04:05.678Z","service":"test","msg":"plain"}',
  ]);
});

it("redacts secret-named fields (also in child bindings), writes errors as name and message and bigints as strings", () => {
  const { log, lines } = arrayLogger("info");
  log.child({ privateKey: "0xabc" }).error("failed", {
    authorization: "Bearer t",
    "PAYMENT-SIGNATURE": "eyJ...",
    x_payment: "p",
    db_password: "pw",
    client_secret: "s",
    error: new TypeError("bad"),
    amount: 12345678901234567890n,
    nested: { atomic: 5n, list: [1n] },
    kept: "visible",
  });
  expect(lines).toHaveLength(1);
  const record = JSON.parse(lines[0] as string) as Record<string, unknown>;
  expect(record).toEqual({
    level: "error",
    t: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    service: "test",
    privateKey: "[redacted]",
    authorization: "[redacted]",
    "PAYMENT-SIGNATURE": "[redacted]",
    x_payment: "[redacted]",
    db_password: "[redacted]",
    client_secret: "[redacted]",
    error: { name: "TypeError", message: "bad" },
    amount: "12345678901234567890",
    nested: { atomic: "5", list: ["1"] },
    kept: "visible",
    msg: "failed",
  });
  expect(lines[0]).not.toMatch(/0xabc|Bearer t|eyJ|"pw"/);
});

it("cuts the RPC URL in viem's error messages to its origin: a provider's key rides in its path or query", async () => {
  const rpc = "http://127.0.0.1:1/v2/KEY-IN-PATH?apikey=KEY-IN-QUERY";
  const client = createPublicClient({ transport: http(rpc, { retryCount: 0 }) });
  const error = (await client.getBlockNumber().catch((e: unknown) => e)) as Error;
  // What viem itself writes: the whole URL.
  expect(error.message).toContain(`URL: ${rpc}`);
  const { log, lines } = arrayLogger("info");
  log.error("chain read failed", { error, detail: error.message, plain: "URL: http://127.0.0.1:1" });
  const record = JSON.parse(lines[0] as string) as { error: { message: string }; detail: string; plain: string };
  expect(record.error.message).toContain("URL: http://127.0.0.1:1/…\n");
  expect(record.detail).toContain("URL: http://127.0.0.1:1/…\n");
  expect(record.plain).toBe("URL: http://127.0.0.1:1");
  expect(lines[0]).not.toMatch(/KEY-IN-PATH|KEY-IN-QUERY/);
});

it("drops lines below its level and writes nothing at silent", () => {
  const { log, lines } = arrayLogger("warn");
  log.debug("d");
  log.info("i");
  log.warn("w");
  log.error("e");
  const silent = arrayLogger("silent");
  silent.log.error("never");
  expect(lines.map((l) => (JSON.parse(l) as { msg: string }).msg)).toEqual(["w", "e"]);
  expect(silent.lines).toEqual([]);
});

it("the default logger writes to a file descriptor asynchronously, never through console, so capturing cannot recurse", async () => {
  const dir = mkdtempSync(path.join(tmpdir(), "log-test-"));
  const file = path.join(dir, "out.log");
  const fd = openSync(file, "w");
  const stdoutWrite = vi.spyOn(process.stdout, "write");
  const restore = captureConsole(createLogger("info", {}, { fd }));
  try {
    console.error("from a library");
    const deadline = Date.now() + 5_000;
    while (!readFileSync(file, "utf8").endsWith("\n") && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
  } finally {
    restore();
    flushLogs();
    closeSync(fd);
  }
  const written = readFileSync(file, "utf8");
  rmSync(dir, { recursive: true, force: true });
  expect(written.split("\n")).toHaveLength(2);
  expect(JSON.parse(written)).toMatchObject({ level: "error", msg: "library output", source: "console", text: "from a library" });
  expect(stdoutWrite).not.toHaveBeenCalled();
  for (const m of METHODS) expect(fakes[m]).not.toHaveBeenCalled();
});

it("gathers a file descriptor's lines and writes them together, in order; flushLogs writes what waits at once", async () => {
  const dir = mkdtempSync(path.join(tmpdir(), "log-test-"));
  const file = path.join(dir, "batched.log");
  const fd = openSync(file, "w");
  try {
    const log = createLogger("info", {}, { fd });
    for (let i = 0; i < 500; i++) log.info("request", { request_id: `r-${i}`, method: "GET", path: "/api/kb", status: 200, ms: 1 });
    const deadline = Date.now() + 5_000;
    while (readFileSync(file, "utf8").split("\n").length < 501 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    const ids = readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .map((l) => (JSON.parse(l) as { request_id: string }).request_id);
    expect(ids).toEqual(Array.from({ length: 500 }, (_, i) => `r-${i}`));
    log.warn("last words");
    // One short line waits to be gathered with others, until flushLogs.
    expect(readFileSync(file, "utf8")).not.toContain("last words");
    flushLogs();
    expect(readFileSync(file, "utf8").trim().split("\n").at(-1)).toContain('"msg":"last words"');
  } finally {
    closeSync(fd);
    rmSync(dir, { recursive: true, force: true });
  }
});
