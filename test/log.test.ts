/**
 * Every log line is JSON: `captureConsole` (src/log.ts) turns what libraries print through
 * `console` (x402 prints undecodable payment headers, i.e. caller-chosen bytes) into one JSON
 * line each, with control characters escaped and the text cut to 500 characters, and puts the
 * original methods back when asked. The logger itself never writes through `console`.
 */
import { afterEach, beforeEach, expect, it, type Mock, vi } from "vitest";
import { captureConsole, createLogger, type LogLevel } from "../src/log.ts";

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

it("the default logger writes to stdout without going through console, so capturing cannot recurse", () => {
  const written: string[] = [];
  vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => {
    written.push(String(chunk));
    return true;
  });
  const restore = captureConsole(createLogger("info"));
  try {
    console.error("from a library");
  } finally {
    restore();
    vi.restoreAllMocks();
  }
  expect(written).toHaveLength(1);
  expect(written[0]?.endsWith("\n")).toBe(true);
  expect(JSON.parse(written[0] as string)).toMatchObject({ level: "error", msg: "library output", text: "from a library" });
  for (const m of METHODS) expect(fakes[m]).not.toHaveBeenCalled();
});
