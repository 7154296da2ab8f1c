/**
 * Test support: a real headless Chromium (Debian's `chromium`) driven by playwright-core.
 * Without a browser the page tests cannot prove anything, so a missing one fails them with
 * the install command; only outside CI (`CI` unset) is it a skip, with the reason printed.
 */
import { existsSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { type BuildOptions, build } from "esbuild";
import { type Browser, chromium, type Page } from "playwright-core";

/** Where Debian installs Chromium (`apt-get install -y chromium`). */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH || "/usr/bin/chromium";

/** Flags for a quiet headless run in a container: no sandbox (root), no GPU, no background traffic. */
const ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--disable-quic",
];

/** Whether the page tests should skip: true only when Chromium is missing and `CI` is unset. */
export function skipBrowserTests(): boolean {
  if (existsSync(CHROMIUM_PATH)) return false;
  if (process.env.CI) return false;
  console.warn(
    `pages: skipping the browser tests: no Chromium at ${CHROMIUM_PATH} (install it with \`apt-get install -y chromium\`); CI would fail here.`,
  );
  return true;
}

/** Launch headless Chromium, or fail with how to get it. */
export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(`No Chromium at ${CHROMIUM_PATH}: install it with \`apt-get install -y chromium\` (or set CHROMIUM_PATH).`);
  }
  try {
    return await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: ARGS });
  } catch (error) {
    throw new Error(`Chromium at ${CHROMIUM_PATH} did not start: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** What happened while a page loaded. */
export interface PageVisit {
  status: number;
  /** Console errors, uncaught exceptions and failed or >= 400 sub-requests. */
  errors: string[];
  /** Every script the page asked for (inline or external). */
  scripts: number;
}

/** Open `url` in a new page of `browser`, recording every error; `use` inspects the loaded page. */
export async function visit<T>(browser: Browser, url: string, use: (page: Page, visit: PageVisit) => Promise<T>): Promise<T> {
  const context = await browser.newContext({ javaScriptEnabled: true });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(`console: ${message.text()}`);
  });
  page.on("pageerror", (error) => errors.push(`page error: ${error.message}`));
  page.on("requestfailed", (request) => errors.push(`request failed: ${request.url()} (${request.failure()?.errorText ?? "unknown"})`));
  page.on("response", (response) => {
    if (response.status() >= 400) errors.push(`HTTP ${response.status()}: ${response.url()}`);
  });
  try {
    const response = await page.goto(url, { waitUntil: "load" });
    const scripts = await page.locator("script").count();
    return await use(page, { status: response?.status() ?? 0, errors, scripts });
  } finally {
    await context.close();
  }
}

/** `contents`, a script's source importing from node_modules, bundled for a browser page (`options` may change the format or add plugins). */
export async function bundleForPage(contents: string, options: BuildOptions = {}): Promise<string> {
  const result = await build({
    stdin: { contents, resolveDir: process.cwd(), loader: "js" },
    bundle: true,
    format: "iife",
    platform: "browser",
    minify: true,
    write: false,
    logLevel: "error",
    ...options,
  });
  return result.outputFiles?.[0]?.text as string;
}

/** A page of its own origin (`http://localhost:<port>`, not the service's) that only loads `script`, as a classic or a module script. */
export async function servePage(
  script: string,
  type: "classic" | "module" = "classic",
): Promise<{ origin: string; close(): Promise<void> }> {
  const tag = type === "module" ? '<script type="module" src="/buyer.js"></script>' : '<script src="/buyer.js"></script>';
  const page = createServer((req, res) => {
    if (req.url === "/buyer.js") {
      res.writeHead(200, { "content-type": "text/javascript" }).end(script);
      return;
    }
    res.writeHead(200, { "content-type": "text/html" }).end(`<!doctype html><title>buyer</title>${tag}`);
  });
  await new Promise<void>((resolve) => page.listen(0, "127.0.0.1", resolve));
  return {
    origin: `http://localhost:${(page.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => page.close(() => resolve())),
  };
}
