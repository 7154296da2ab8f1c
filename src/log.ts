/**
 * Structured logging: one JSON object per line on stdout. Secrets are never passed to
 * the logger; fields named like secrets are redacted anyway as a second line of defence.
 */

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

/** Create a logger at `level` writing to `write` (default: stdout). */
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
