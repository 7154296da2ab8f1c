/**
 * Structured logging: one JSON object per line on stdout, written by pino through an
 * asynchronous destination, so a request never waits for its log line to reach the terminal,
 * pipe or file (a synchronous write per request cost a third of the free routes' throughput).
 * Secrets are never passed to the logger; fields named like secrets are redacted anyway as a
 * second line of defence. Libraries that print through `console` are routed through the logger
 * too (`captureConsole`), so every line on stdout is JSON, whatever bytes a library chose to print.
 */
import { format } from "node:util";
import pino, { type DestinationStream, type Logger as PinoLogger } from "pino";

/** Severity levels, lowest first. */
export type LogLevel = "debug" | "info" | "warn" | "error" | "silent";

const SECRET_KEY = /(private[-_]?key|secret|password|authorization|payment[-_]?signature|x[-_]?payment)/i;

/** A logger that writes JSON lines; `child` adds fields to every line. */
export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
}

/**
 * Where lines go: a function receiving each line without its newline, called synchronously
 * (tests and benchmarks that read lines back), or a file descriptor written asynchronously.
 */
export type LogSink = ((line: string) => void) | { fd: number };

/**
 * How long lines wait to be written together. Writing a line costs a system call and a round
 * trip through libuv's thread pool whatever its length, which on the free routes cost more than
 * anything else the service adds to a bare server's answer (about 20 us a request on the bench
 * machine); one write per 20 ms costs next to nothing per line. A line reaches its file, pipe
 * or terminal at most this late, and `flushLogs` (called at exit, also on a crash)
 * writes out what is waiting.
 */
const LOG_BATCH_MS = 20;

/** A file descriptor's destination: lines gathered for `LOG_BATCH_MS`, then handed to pino's asynchronous writer at once. */
interface BatchedDestination extends DestinationStream {
  flushSync(): void;
}

/** One destination per file descriptor, shared by every logger writing there. */
const destinations = new Map<number, BatchedDestination>();

function destinationOf(fd: number): BatchedDestination {
  let destination = destinations.get(fd);
  if (destination) return destination;
  // SonicBoom writes asynchronously and deals with partial writes and full pipes (EAGAIN);
  // pino flushes it synchronously when the process exits.
  const sonic = pino.destination({ dest: fd, sync: false, minLength: 0 });
  let lines: string[] = [];
  let timer: NodeJS.Timeout | undefined;
  const handOver = () => {
    timer = undefined;
    if (lines.length === 0) return;
    const text = lines.join("");
    lines = [];
    sonic.write(text);
  };
  destination = {
    write(line: string) {
      lines.push(line);
      if (!timer) {
        timer = setTimeout(handOver, LOG_BATCH_MS);
        timer.unref();
      }
    },
    flushSync() {
      if (timer) clearTimeout(timer);
      handOver();
      try {
        sonic.flushSync();
      } catch {
        // Not open yet or already closed: nothing of ours is waiting in it.
      }
    },
  };
  destinations.set(fd, destination);
  if (destinations.size === 1) process.once("exit", flushLogs);
  return destination;
}

/** Write out whatever the destinations still hold (when stopping, at exit, or to read a log file back). */
export function flushLogs(): void {
  for (const destination of destinations.values()) destination.flushSync();
}

function streamOf(sink: LogSink): DestinationStream {
  if (typeof sink !== "function") return destinationOf(sink.fd);
  // pino hands over each line with its newline; the sink gets the line alone.
  return { write: (line: string) => sink(line.endsWith("\n") ? line.slice(0, -1) : line) };
}

/** Whether a field name is secret-like, remembered per name (field names come from code, so they are few). */
const secretNames = new Map<string, boolean>();
function isSecretName(key: string): boolean {
  let secret = secretNames.get(key);
  if (secret === undefined) {
    secret = SECRET_KEY.test(key);
    if (secretNames.size < 1000) secretNames.set(key, secret);
  }
  return secret;
}

/** `fields` as they are logged: secret-named keys redacted, errors as name and message, bigints as strings. */
function safeFields(fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key in fields) {
    const v = fields[key];
    out[key] = isSecretName(key)
      ? "[redacted]"
      : v instanceof Error
        ? { name: v.name, message: v.message }
        : typeof v === "bigint"
          ? v.toString()
          : typeof v === "object" && v !== null
            ? withoutBigints(v)
            : v;
  }
  return out;
}

/** Nested bigints as strings (JSON has no bigint); objects without any are returned as they are. */
function withoutBigints(value: object): unknown {
  let has = false;
  const text = JSON.stringify(value, (_k, v) => {
    if (typeof v !== "bigint") return v;
    has = true;
    return v.toString();
  });
  return has ? JSON.parse(text) : value;
}

/** The ISO time of the current millisecond, formatted once per millisecond (many lines share one under load). */
let isoMs = -1;
let iso = "";
function isoNow(): string {
  const now = Date.now();
  if (now !== isoMs) {
    isoMs = now;
    iso = new Date(now).toISOString();
  }
  return iso;
}

/** What `logRequest` needs to write a logger's access line itself: whether info is on, its bound fields as JSON, its stream. */
interface AccessWriter {
  info: boolean;
  /** `,"key":value` for each bound field, as pino writes them. */
  bindings: string;
  stream: DestinationStream;
}

/** The access writers of the loggers `createLogger` made (others log access lines through `info`). */
const accessWriters = new WeakMap<Logger, AccessWriter>();

function wrap(p: PinoLogger, stream: DestinationStream): Logger {
  const logger: Logger = {
    debug: (msg, fields) => (fields ? p.debug(safeFields(fields), msg) : p.debug(msg)),
    info: (msg, fields) => (fields ? p.info(safeFields(fields), msg) : p.info(msg)),
    warn: (msg, fields) => (fields ? p.warn(safeFields(fields), msg) : p.warn(msg)),
    error: (msg, fields) => (fields ? p.error(safeFields(fields), msg) : p.error(msg)),
    child: (fields) => wrap(p.child(safeFields(fields)), stream),
  };
  // pino's own serialization of the bound fields (`,"key":value...`), as it writes them in every line.
  const bindings = String((p as unknown as Record<symbol, unknown>)[pino.symbols.chindingsSym] ?? "");
  accessWriters.set(logger, { info: p.isLevelEnabled("info"), bindings, stream });
  return logger;
}

/** The fields of the access line written when a request's answer ends. */
export interface RequestLine {
  request_id: string;
  method: string;
  path: string;
  status: number;
  ms: number;
}

/**
 * Log a request's access line: `log.info("request", fields)`, byte for byte, written straight
 * to the logger's stream when `createLogger` made it. It is the one line every request writes,
 * and its fields are fixed and never secret, so the general path (copying the fields to redact
 * them, then pino's serializer) is skipped: on the free routes that path cost more than
 * anything else the service adds to a bare server's answer.
 */
export function logRequest(log: Logger, line: RequestLine): void {
  const writer = accessWriters.get(log);
  if (!writer) {
    log.info("request", { ...line });
    return;
  }
  if (!writer.info) return;
  writer.stream.write(
    `{"level":"info","t":"${isoNow()}"${writer.bindings},"request_id":${JSON.stringify(line.request_id)},"method":${JSON.stringify(line.method)},"path":${JSON.stringify(line.path)},"status":${line.status},"ms":${line.ms},"msg":"request"}\n`,
  );
}

/**
 * Create a logger at `level` with `base` fields on every line, writing to `sink` (default:
 * stdout, asynchronously). The default writes to the file descriptor, never through
 * `console`, so `captureConsole` cannot loop back into it. Each line is
 * `{"level","t",...base,...fields,"msg"}` with `t` an ISO timestamp.
 */
export function createLogger(level: LogLevel = "info", base: Record<string, unknown> = {}, sink: LogSink = { fd: 1 }): Logger {
  const stream = streamOf(sink);
  const root = pino(
    {
      level,
      base: null,
      messageKey: "msg",
      timestamp: () => `,"t":"${isoNow()}"`,
      formatters: { level: (label) => ({ level: label }) },
    },
    stream,
  );
  return wrap(Object.keys(base).length > 0 ? root.child(safeFields(base)) : root, stream);
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
