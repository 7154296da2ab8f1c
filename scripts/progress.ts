/**
 * Progress of a long command (`npm run crawl`, building the bench chain, the benches): on a
 * terminal, one line redrawn in place with a bar, done/total, rate and time left; anywhere
 * else (CI logs, a pipe, a file), a plain line every 10 seconds and one when it ends, since
 * carriage returns and escape codes only garble a log.
 */

/** Where progress is written: a stream that may be a terminal. */
export interface ProgressStream {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

/** Options of `createProgress`. */
export interface ProgressOptions {
  /** What is counted, shown first: `crawl`, `bench chain`. */
  label: string;
  /** The unit counted, plural: `origins`, `blocks`. */
  unit: string;
  /** The total, when known now (it can be given later with `update`). */
  total?: number;
  /** Default: standard error, so standard output keeps only the command's results. */
  stream?: ProgressStream;
  /** Milliseconds between plain lines off a terminal (10 s). */
  intervalMs?: number;
  /** Epoch milliseconds; tests move it. */
  now?: () => number;
}

/** A running progress display. */
export interface Progress {
  /** `done` of `total` are finished now (total when it became known or changed). */
  update(done: number, total?: number): void;
  /** One more finished. */
  tick(): void;
  /** The end: a last line (on a terminal, the bar completed and the line ended). */
  finish(): void;
}

/** A duration in words: `45 s`, `3 min 20 s`, `2 h 5 min`. */
export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds)) return "unknown";
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

/** A rate with a sensible number of digits. */
function formatRate(perSecond: number): string {
  return perSecond >= 100 ? perSecond.toFixed(0) : perSecond >= 10 ? perSecond.toFixed(1) : perSecond.toFixed(2);
}

/** Start showing progress. */
export function createProgress(options: ProgressOptions): Progress {
  const stream = options.stream ?? process.stderr;
  const now = options.now ?? Date.now;
  const interval = options.intervalMs ?? 10_000;
  const tty = stream.isTTY === true;
  const started = now();
  let done = 0;
  let total = options.total;
  let lastDrawn = Number.NEGATIVE_INFINITY;
  let finished = false;

  const figures = () => {
    const elapsed = (now() - started) / 1000;
    const rate = elapsed > 0 ? done / elapsed : 0;
    const left = total !== undefined && rate > 0 ? (total - done) / rate : Number.POSITIVE_INFINITY;
    const share = total ? Math.min(1, done / total) : 0;
    return { elapsed, rate, left, share };
  };

  const plainLine = (end: boolean) => {
    const { elapsed, rate, left, share } = figures();
    const of = total !== undefined ? `${done}/${total} ${options.unit} (${Math.floor(share * 100)}%)` : `${done} ${options.unit}`;
    const tail = end
      ? `done in ${formatDuration(elapsed)}, ${formatRate(rate)} ${options.unit}/s`
      : `${formatRate(rate)} ${options.unit}/s, ${total !== undefined ? `${formatDuration(left)} left` : "total unknown"}`;
    return `${options.label}: ${of}, ${tail}`;
  };

  const ttyLine = () => {
    const { rate, left, share } = figures();
    const width = Math.max(10, Math.min(30, (stream.columns ?? 80) - 60));
    const filled = Math.round(share * width);
    const bar = total !== undefined ? `[${"#".repeat(filled)}${"-".repeat(width - filled)}] ` : "";
    const of = total !== undefined ? `${done}/${total}` : `${done}`;
    const eta = total !== undefined ? `, ${formatDuration(left)} left` : "";
    return `${options.label} ${bar}${of} ${options.unit}, ${formatRate(rate)}/s${eta}`;
  };

  const draw = (force: boolean) => {
    if (finished) return;
    const t = now();
    if (tty) {
      // A terminal is redrawn at most ten times a second: more only costs time.
      if (!force && t - lastDrawn < 100) return;
      stream.write(`\r\x1b[2K${ttyLine()}`);
    } else {
      if (!force && t - lastDrawn < interval) return;
      stream.write(`${plainLine(false)}\n`);
    }
    lastDrawn = t;
  };

  // Off a terminal, a line every interval even while nothing finishes (a slow origin, a long block).
  const timer = tty ? undefined : setInterval(() => draw(false), interval);
  timer?.unref();
  draw(true);

  return {
    update(n, t) {
      done = n;
      if (t !== undefined) total = t;
      draw(false);
    },
    tick() {
      done++;
      draw(false);
    },
    finish() {
      if (finished) return;
      if (timer) clearInterval(timer);
      if (tty) stream.write(`\r\x1b[2K${ttyLine()}\n`);
      else stream.write(`${plainLine(true)}\n`);
      finished = true;
    },
  };
}
