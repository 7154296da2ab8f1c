/**
 * Whether the build in `dist/` matches the sources: a hash of every input file, written
 * by `npm run build` and compared by `npm start`, which rebuilds when they differ.
 */
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";

/** Files and folders whose content decides the build. */
export const BUILD_INPUTS = ["src", "functions", "spec", "content", "scripts", "astro.config.mjs", "package.json", "tsconfig.json"];

function walk(entry: string, out: string[]): void {
  if (!existsSync(entry)) return;
  if (statSync(entry).isDirectory()) {
    for (const name of readdirSync(entry).sort()) walk(path.join(entry, name), out);
  } else out.push(entry);
}

/** The hash of all build inputs under `root`. */
export function hashBuildInputs(root = "."): string {
  const files: string[] = [];
  for (const input of BUILD_INPUTS) walk(path.join(root, input), files);
  const hash = createHash("sha256");
  for (const file of files) {
    hash.update(path.relative(root, file));
    hash.update("\0");
    hash.update(readFileSync(file));
    hash.update("\0");
  }
  return hash.digest("hex");
}

/** Where the stamp of the last build lives. */
export function stampPath(distDir = "dist"): string {
  return path.join(distDir, "build-stamp.json");
}

/** True when `dist/` was built from exactly the current inputs. */
export function buildIsCurrent(root = ".", distDir = "dist"): boolean {
  const file = stampPath(path.join(root, distDir));
  if (!existsSync(file)) return false;
  try {
    const stamp = JSON.parse(readFileSync(file, "utf8")) as { inputs?: string };
    return stamp.inputs === hashBuildInputs(root) && existsSync(path.join(root, distDir, "server/entry.mjs"));
  } catch {
    return false;
  }
}
