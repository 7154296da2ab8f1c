import { expect, it } from "vitest";
import { movesSvg } from "../src/charts/svg.ts";

const attrs = (svg: string, symbol: string) => {
  const rect = svg.match(new RegExp(`<rect [^>]*data-symbol="${symbol}"[^>]*>`))?.[0] ?? "";
  return Object.fromEntries([...rect.matchAll(/([a-z-]+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
};

it("draws a rise right of the zero line in green, a fall left of it in red, scaled to the largest move", () => {
  const svg = movesSvg({
    title: "moves",
    rows: [
      { label: "UP", price: "$2.00", changePct: 4 },
      { label: "DOWN", price: "$1.00", changePct: -2 },
      { label: "NONE", price: "$3.00", changePct: null },
    ],
  });
  const zero = Number(svg.match(/<line x1="([\d.]+)"/)?.[1]);
  const up = attrs(svg, "UP");
  const down = attrs(svg, "DOWN");
  expect(Number(up.x)).toBe(zero);
  expect(up.style).toBe("fill: var(--ok)");
  expect(down.style).toBe("fill: var(--bad)");
  expect(Number(down.x) + Number(down.width)).toBeCloseTo(zero, 1);
  expect(Number(down.width) * 2).toBeCloseTo(Number(up.width), 0);
  expect(svg).toContain("+4.00%");
  expect(svg).toContain("−2.00%");
  // A pair without a 24 h change has no bar, and says so.
  expect(svg).not.toMatch(/<rect [^>]*data-symbol="NONE"/);
  expect(svg).toContain('data-symbol="NONE" data-change="">no 24 h change</text>');
  expect(svg).toContain('aria-label="moves"');
});
