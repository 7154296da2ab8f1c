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
 * A file descriptor's lines are gathered by pino's SonicBoom destination and written together
 * (`minLength`), at the latest every `LOG_FLUSH_MS` (`periodicFlush`): one write per request cost
 * a third of the free routes' throughput. pino flushes them synchronously at exit.
 */
const LOG_FLUSH_MS = 50;

/** One destination per file descriptor, shared by every logger writing there. */
const destinations = new Map<number, ReturnType<typeof pino.destination>>();

function destinationOf(fd: number): DestinationStream {
  let destination = destinations.get(fd);
  if (!destination) {
    const opened = pino.destination({ dest: fd, sync: false, minLength: 4096, periodicFlush: LOG_FLUSH_MS });
    // A descriptor closed under it (a log file a test or script closed) ends it; other failures stay loud.
    opened.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code !== "EBADF") throw error;
      destinations.delete(fd);
      opened.destroy();
    });
    destinations.set(fd, opened);
    destination = opened;
  }
  return destination;
}

/** Write out whatever the destinations still hold (when stopping, or to read a log file back). */
export function flushLogs(): void {
  for (const destination of destinations.values()) {
    try {
      destination.flushSync();
    } catch {
      // Not open yet or already closed: nothing of ours is waiting in it.
    }
  }
}

function streamOf(sink: LogSink): DestinationStream {
  if (typeof sink !== "function") return destinationOf(sink.fd);
  // pino hands over each line with its newline; the sink gets the line alone.
  return { write: (line: string) => sink(line.endsWith("\n") ? line.slice(0, -1) : line) };
}

/** Any URL in a text: what precedes it (nothing), its scheme, its authority (user info included) and the rest. */
const URL_IN_TEXT = /\b()(https?|wss?):\/\/([^\s/?#]+)([^\s]*)/g;
/** The URL on viem's request errors' `URL: …` line, the only URLs the logs cut (others name what was reached). */
const REQUEST_URL = /\b(URL: )(https?|wss?):\/\/([^\s/?#]+)([^\s]*)/g;

/**
 * `text` with each URL `pattern` finds cut to its origin, user info dropped: an RPC provider's API
 * key is often in the URL's path or query (`/v2/<key>`, `?apikey=`), and viem names the URL in its
 * messages.
 */
export function urlsCutToOrigin(text: string, pattern: RegExp = URL_IN_TEXT): string {
  return text.replace(pattern, (_whole, lead: string, scheme: string, authority: string, rest: string) => {
    const origin = `${scheme}://${authority.replace(/^[^@]*@/, "")}`;
    return `${lead}${rest === "" || rest === "/" ? `${origin}${rest}` : `${origin}/…`}`;
  });
}

const withoutUrlSecrets = (text: string) => urlsCutToOrigin(text, REQUEST_URL);

/**
 * `fields` as they are logged: secret-named keys redacted, errors as name and message, bigints as
 * strings, RPC URLs in viem's messages cut to their origin. pino's `redact` takes paths, not a
 * pattern of key names, so this is pino's `log` formatter.
 */
function safeFields(fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key in fields) {
    const v = fields[key];
    out[key] = SECRET_KEY.test(key)
      ? "[redacted]"
      : v instanceof Error
        ? { name: v.name, message: withoutUrlSecrets(v.message) }
        : typeof v === "bigint"
          ? v.toString()
          : typeof v === "string"
            ? withoutUrlSecrets(v)
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

function wrap(p: PinoLogger): Logger {
  return {
    debug: (msg, fields) => p.debug(fields ?? {}, msg),
    info: (msg, fields) => p.info(fields ?? {}, msg),
    warn: (msg, fields) => p.warn(fields ?? {}, msg),
    error: (msg, fields) => p.error(fields ?? {}, msg),
    child: (fields) => wrap(p.child(safeFields(fields))),
  };
}

/**
 * Create a logger at `level` with `base` fields on every line, writing to `sink` (default:
 * stdout, asynchronously). The default writes to the file descriptor, never through
 * `console`, so `captureConsole` cannot loop back into it. Each line is
 * `{"level","t",...base,...fields,"msg"}` with `t` an ISO timestamp.
 */
export function createLogger(level: LogLevel = "info", base: Record<string, unknown> = {}, sink: LogSink = { fd: 1 }): Logger {
  const root = pino(
    {
      level,
      base: null,
      messageKey: "msg",
      timestamp: () => `,"t":"${new Date().toISOString()}"`,
      formatters: { level: (label) => ({ level: label }), log: safeFields },
    },
    streamOf(sink),
  );
  return wrap(Object.keys(base).length > 0 ? root.child(safeFields(base)) : root);
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
