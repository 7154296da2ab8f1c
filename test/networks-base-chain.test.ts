/**
 * src/networks/base-chain.ts builds Base's definition without loading `viem/chains`; it must be the
 * very definition viem exports, formatters and serializers included. Node loads both in a child
 * process, as the service does (vitest's module runner would load viem's op-stack module a second
 * time, so the functions could not be the same objects here).
 */
import { execFileSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";

const root = path.resolve(import.meta.dirname, "..");

describe("Base's chain definition", () => {
  it("is viem/chains' base: equal field by field, with the very same OP Stack formatters and serializers", () => {
    const script = `
      import { isDeepStrictEqual } from "node:util";
      import { base } from "./src/networks/base-chain.ts";
      import { base as viemBase } from "viem/chains";
      // \`extend\` is a closure over each definition, so it is compared by what it gives.
      const { extend, ...fields } = base;
      const { extend: viemExtend, ...viemFields } = viemBase;
      const same = (a, b) => Object.keys(a ?? {}).length === Object.keys(b ?? {}).length && Object.keys(a ?? {}).every((k) => a[k] === b[k]);
      console.log(JSON.stringify({
        deepEqual: isDeepStrictEqual(fields, viemFields),
        extend: isDeepStrictEqual(JSON.stringify(extend({ x: 1 })), JSON.stringify(viemExtend({ x: 1 }))),
        keys: Object.keys(base).sort().join() === Object.keys(viemBase).sort().join(),
        formatters: same(base.formatters, viemBase.formatters),
        serializers: same(base.serializers, viemBase.serializers),
        id: base.id,
        multicall3: base.contracts.multicall3.address,
      }));`;
    const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], { cwd: root, encoding: "utf8" });
    expect(JSON.parse(out)).toEqual({
      deepEqual: true,
      extend: true,
      keys: true,
      formatters: true,
      serializers: true,
      id: 8453,
      multicall3: "0xca11bde05977b3631167028862be2a173976ca11",
    });
  });
});
