/**
 * No runtime import cycles among the service's modules: a cycle makes a module's exports
 * undefined while the other evaluates, depending on which one a caller happens to load first.
 * Imports of types only (`import type`, or every name marked `type`) are erased and do not count.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect, it } from "vitest";

const root = path.resolve(import.meta.dirname, "..");
const IMPORT = /^\s*(?:import|export)\s+(?!type\b)([^;]*?)\s+from\s+"(\.[^"]+\.ts)"/gms;

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? sources(full) : full.endsWith(".ts") ? [full] : [];
  });
}

/** The modules `file` imports for their values. */
function valueImports(file: string): string[] {
  const out: string[] = [];
  for (const [, clause = "", target = ""] of readFileSync(file, "utf8").matchAll(IMPORT)) {
    const names = /^\{([^}]*)\}$/.exec(clause.trim())?.[1];
    const typeOnly = names?.split(",").every((n) => n.trim() === "" || n.trim().startsWith("type "));
    const resolved = path.resolve(path.dirname(file), target);
    if (!typeOnly && existsSync(resolved)) out.push(resolved);
  }
  return out;
}

/** Every cycle's modules (strongly connected components of more than one module, or a module importing itself). */
function cycles(files: string[]): string[][] {
  const graph = new Map(files.map((f) => [f, valueImports(f)]));
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v) as number);
    stack.push(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (stack.includes(w)) low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    for (let w = stack.pop(); w !== undefined; w = w === v ? undefined : stack.pop()) component.push(w);
    if (component.length > 1 || graph.get(v)?.includes(v)) found.push(component.map((f) => path.relative(root, f)).sort());
  };
  for (const file of files) if (!index.has(file)) visit(file);
  return found;
}

it("finds a cycle of value imports and ignores imports of types only (the check can fail)", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "cycles-"));
  try {
    writeFileSync(path.join(dir, "a.ts"), 'import { b } from "./b.ts";\nexport const a = () => b;\n');
    writeFileSync(path.join(dir, "b.ts"), 'import { type C, a } from "./a.ts";\nexport const b = 1;\n');
    writeFileSync(path.join(dir, "c.ts"), 'import type { b } from "./b.ts";\nimport { type a } from "./a.ts";\nexport const c = 2;\n');
    writeFileSync(path.join(dir, "d.ts"), 'import { c } from "./c.ts";\nexport const d = c;\n');
    const found = cycles(["a.ts", "b.ts", "c.ts", "d.ts"].map((f) => path.join(dir, f)));
    expect(found.map((c) => c.map((f) => path.basename(f)).sort())).toEqual([["a.ts", "b.ts"]]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

it("has no runtime import cycle in src/, functions/ or spec/", () => {
  const files = ["src", "functions", "spec"].flatMap((dir) => sources(path.join(root, dir)));
  expect(files.length).toBeGreaterThan(100);
  expect(cycles(files)).toEqual([]);
});
