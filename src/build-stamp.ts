/**
 * Whether the build in `dist/` matches its inputs: a hash of every file the build read, written
 * by `npm run build` and compared by `npm start` and the tests, which rebuild when they differ.
 * A module the built pages do not load (a route's function, the gate) is not an input.
 */

import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";

/**
 * Files and folders whose content decides the build whatever it imports: what Astro compiles
 * (pages, components, layouts), the content, the contracts and the configuration. The service's
 * other modules are not bundled (astro.config.mjs): only those the build itself loaded (to
 * prerender pages, to write the discovery documents) are added, by `scripts/build.ts`.
 */
export const BUILD_INPUTS = [
  "src/pages",
  "src/components",
  "src/layouts",
  // Astro's middleware: whether it exists decides the bundle's middleware module.
  "src/middleware.ts",
  "src/local/contracts",
  "content",
  "public",
  "astro.config.mjs",
  "scripts/build.ts",
  "package.json",
  "tsconfig.json",
];

function walk(entry: string, out: string[]): void {
  if (!existsSync(entry)) return;
  if (statSync(entry).isDirectory()) {
    for (const name of readdirSync(entry).sort()) walk(path.join(entry, name), out);
  } else out.push(entry);
}

/** Every input file under `root`: the fixed inputs and `loaded` (paths relative to `root`), each once, sorted. */
function inputFiles(root: string, loaded: readonly string[]): string[] {
  const files: string[] = [];
  for (const input of BUILD_INPUTS) walk(path.join(root, input), files);
  for (const file of loaded) if (existsSync(path.join(root, file))) files.push(path.join(root, file));
  return [...new Set(files)].sort();
}

/** The hash of the build's inputs under `root` (its absolute path included: the bundle imports modules by it). */
export function hashBuildInputs(root = ".", loaded: readonly string[] = []): string {
  const hash = createHash("sha256").update(path.resolve(root)).update("\0");
  for (const file of inputFiles(root, loaded)) {
    hash.update(path.relative(root, file));
    hash.update("\0");
    hash.update(readFileSync(file));
    hash.update("\0");
  }
  return hash.digest("hex");
}

/**
 * A cheap fingerprint of the build inputs: every file's path, size and modification time,
 * without reading any content. Equal fingerprints mean nothing was touched since the build,
 * so a restart skips hashing every input (most of a warm start's time otherwise).
 */
export function statBuildInputs(root = ".", loaded: readonly string[] = []): string {
  const hash = createHash("sha256");
  for (const file of inputFiles(root, loaded)) {
    const stat = statSync(file);
    hash.update(`${path.relative(root, file)}\0${stat.size}\0${stat.mtimeMs}\n`);
  }
  return hash.digest("hex");
}

/** Where the stamp of the last build lives. */
export function stampPath(distDir = "dist"): string {
  return path.join(distDir, "build-stamp.json");
}

/**
 * True when `dist/` was built from exactly the current inputs. When no input was touched since
 * the stamp was written (same sizes and times), that is enough; otherwise the contents decide,
 * and an unchanged content (a checkout that only touched times) refreshes the stamp's times.
 */
export function buildIsCurrent(root = ".", distDir = "dist"): boolean {
  const file = stampPath(path.join(root, distDir));
  if (!existsSync(file) || !existsSync(path.join(root, distDir, "server/entry.mjs"))) return false;
  try {
    const stamp = JSON.parse(readFileSync(file, "utf8")) as { inputs?: string; stats?: string; loaded?: string[] };
    const loaded = stamp.loaded ?? [];
    const stats = statBuildInputs(root, loaded);
    if (stamp.stats === stats) return true;
    if (stamp.inputs !== hashBuildInputs(root, loaded)) return false;
    writeFileSync(file, `${JSON.stringify({ ...stamp, stats })}\n`);
    return true;
  } catch {
    return false;
  }
}

const LOCK_STALE_MS = 5 * 60_000;

/**
 * Build if `dist/` is missing or stale. A lock folder makes concurrent callers (several test
 * runs, or `npm start` beside `npm test`) wait for one build instead of writing `dist/` together.
 */
export async function ensureBuild(root = "."): Promise<void> {
  const lock = path.join(root, ".build.lock");
  for (;;) {
    if (buildIsCurrent(root)) return;
    try {
      mkdirSync(lock);
    } catch {
      const age = existsSync(lock) ? Date.now() - statSync(lock).mtimeMs : 0;
      if (age > LOCK_STALE_MS) rmSync(lock, { recursive: true, force: true });
      await new Promise((resolve) => setTimeout(resolve, 500));
      continue;
    }
    try {
      if (buildIsCurrent(root)) return;
      const result = spawnSync(process.execPath, ["scripts/build.ts"], { cwd: root, stdio: "inherit" });
      if (result.status !== 0) throw new Error("the build failed (see above); fix it and run `npm run build`");
      return;
    } finally {
      rmSync(lock, { recursive: true, force: true });
    }
  }
}
