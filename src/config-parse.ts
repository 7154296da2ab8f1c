/**
 * Reading one setting from an environment variable: the value, or the fallback with a line
 * added to `problems` saying what was expected, so a configuration names every problem at once
 * (`loadConfig` in src/config.ts, `chatConfigFromEnv` in src/chat/config.ts).
 */

export function parsePort(name: string, text: string | undefined, fallback: number, problems: string[]): number {
  return parseInteger(name, text, fallback, 0, 65535, problems, "a port number");
}

/** An integer from `min` to `max`; the problem calls it `what`. */
export function parseInteger(
  name: string,
  text: string | undefined,
  fallback: number,
  min: number,
  max: number,
  problems: string[],
  what = "an integer",
): number {
  if (text === undefined || text === "") return fallback;
  const n = Number(text);
  if (!Number.isInteger(n) || n < min || n > max) {
    problems.push(`${name} must be ${what} ${min}-${max}, got "${text}"`);
    return fallback;
  }
  return n;
}

export function parseUrl(name: string, text: string, problems: string[]): string | undefined {
  try {
    const url = new URL(text);
    if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error("scheme");
    return url.toString().replace(/\/+$/, "");
  } catch {
    problems.push(`${name} must be an http(s) URL, got "${text}"`);
    return undefined;
  }
}

/** A comma-separated list of http(s) URLs, each checked as `parseUrl` does. */
export function parseUrlList(name: string, text: string, problems: string[]): string[] {
  return text
    .split(",")
    .map((u) => u.trim())
    .filter(Boolean)
    .flatMap((u) => parseUrl(name, u, problems) ?? []);
}
