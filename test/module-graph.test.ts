/**
 * One module graph: the built server bundle holds Astro's pages and nothing of the service's own
 * modules, which it imports from source (astro.config.mjs), so the endpoint, the payment gate and
 * the functions share one copy of each; and a function edited after the build needs no rebuild.
 */
import { readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { buildIsCurrent } from "../src/build-stamp.ts";

const root = path.resolve(import.meta.dirname, "..");

function serverFiles(dir = path.join(root, "dist/server")): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? serverFiles(full) : full.endsWith(".mjs") ? [full] : [];
  });
}

it("bundles no copy of the service's modules: the server bundle imports them from source", () => {
  const files = serverFiles();
  expect(files.length).toBeGreaterThan(0);
  const bundled = files.map((f) => readFileSync(f, "utf8"));
  for (const [i, text] of bundled.entries()) {
    // The error classes, the dispatcher and the gate exist once, in src/.
    expect(text, files[i]).not.toMatch(
      /class ServiceError\b|ServiceError = class|function dispatch\(|class PaymentGate\b|PaymentGate = class/,
    );
  }
  const imported = new Set(bundled.flatMap((text) => [...text.matchAll(/from "(\/[^"]+\.ts)"/g)].map((m) => m[1] as string)));
  expect(imported).toContain(path.join(root, "src/dispatch.ts"));
  for (const file of imported) {
    expect(file.startsWith(`${root}/src/`) || file.startsWith(`${root}/spec/`) || file.startsWith(`${root}/functions/`), file).toBe(true);
    expect(statSync(file).isFile(), file).toBe(true);
  }
});

it("does not ask for a rebuild when a route's function or the gate is edited, and does when a page is", () => {
  expect(buildIsCurrent(root)).toBe(true);
  const edited = (file: string): boolean => {
    const full = path.join(root, file);
    const text = readFileSync(full);
    const { atime, mtime } = statSync(full);
    try {
      writeFileSync(full, Buffer.concat([text, Buffer.from("\n// edited\n")]));
      return buildIsCurrent(root);
    } finally {
      writeFileSync(full, text);
      utimesSync(full, atime, mtime);
    }
  };
  expect(edited("functions/wallet-profile.ts")).toBe(true);
  expect(edited("src/payments/gate.ts")).toBe(true);
  expect(edited("src/pages/health.ts")).toBe(false);
  // Spec modules the pages read are inputs too.
  expect(edited("spec/routes.ts")).toBe(false);
  expect(buildIsCurrent(root)).toBe(true);
});
