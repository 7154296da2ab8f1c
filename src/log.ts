/**
 * Structured logging: one JSON object per line on stdout. Secrets are never passed to
 * the logger; fields named like secrets are redacted anyway as a second line of defence.
 * Libraries that print through `console` are routed through the logger too (`captureConsole`),
 * so every line on stdout is JSON, whatever bytes a library chose to print.
 */
import { format } from "node:util";

/** Severity levels, lowest first. */
export type LogLevel = "debug" | "info" | "warn" | "error" | "silent";

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };
const SECRET_KEY = /(private_?key|secret|password|authorization|payment-signature|x-payment)/i;

/** A logger that writes JSON lines; `child` adds fields to every line. */
export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
}

/**
 * Create a logger at `level` writing to `write` (default: stdout). The default writes with
 * `process.stdout.write`, never through `console`, so `captureConsole` cannot loop back into it.
 */
export function createLogger(
  level: LogLevel = "info",
  base: Record<string, unknown> = {},
  write: (line: string) => void = (line) => process.stdout.write(`${line}\n`),
): Logger {
  const min = ORDER[level];
  const emit = (lvl: Exclude<LogLevel, "silent">, msg: string, fields?: Record<string, unknown>) => {
    if (ORDER[lvl] < min) return;
    const record: Record<string, unknown> = { t: new Date().toISOString(), level: lvl, msg, ...base };
    for (const [k, v] of Object.entries(fields ?? {})) {
      record[k] = SECRET_KEY.test(k) ? "[redacted]" : v instanceof Error ? { name: v.name, message: v.message } : v;
    }
    write(JSON.stringify(record, (_k, v) => (typeof v === "bigint" ? v.toString() : v)));
  };
  return {
    debug: (m, f) => emit("debug", m, f),
    info: (m, f) => emit("info", m, f),
    warn: (m, f) => emit("warn", m, f),
    error: (m, f) => emit("error", m, f),
    child: (fields) => createLogger(level, { ...base, ...fields }, write),
  };
}

/** The `console` methods `captureConsole` replaces, and the level each one logs at. */
const CONSOLE_LEVELS = { log: "info", info: "info", warn: "warn", error: "error", debug: "debug" } as const;
type ConsoleMethod = keyof typeof CONSOLE_LEVELS;

/** Characters of library output kept in one line. */
export const CONSOLE_TEXT_LIMIT = 500;
const TRUNCATED = "…(truncated)";

/** `console`-formatted text of `args`, cut to `CONSOLE_TEXT_LIMIT` characters (never inside a surrogate pair). */
function consoleText(args: unknown[]): string {
  const text = format(...args);
  if (text.length <= CONSOLE_TEXT_LIMIT) return text;
  let end = CONSOLE_TEXT_LIMIT;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${text.slice(0, end)}${TRUNCATED}`;
}

/**
 * Route `console.log/info/warn/error/debug` through `log`: each call becomes one JSON line
 * `{level, msg: "library output", source: "console", text}`, where `text` is the arguments as
 * `console` would format them, cut to 500 characters. Control characters (newlines, ANSI
 * escapes) in it are escaped by the JSON encoding, so a library printing caller-chosen bytes
 * cannot forge or break log lines. Returns a function that puts the original methods back.
 */
export function captureConsole(log: Logger): () => void {
  const methods = Object.keys(CONSOLE_LEVELS) as ConsoleMethod[];
  const originals = new Map(methods.map((m) => [m, console[m]] as const));
  let writing = false;
  for (const method of methods) {
    const level = CONSOLE_LEVELS[method];
    console[method] = (...args: unknown[]) => {
      // A sink that itself prints through console would recurse: let that one call through as is.
      if (writing) return void originals.get(method)?.apply(console, args);
      writing = true;
      try {
        log[level]("library output", { source: "console", text: consoleText(args) });
      } finally {
        writing = false;
      }
    };
  }
  let restored = false;
  return () => {
    if (restored) return;
    restored = true;
    for (const [method, original] of originals) console[method] = original;
  };
}
