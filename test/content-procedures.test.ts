/**
 * Procedures whose VERIFY must be what their steps produce, run for real where a step is a
 * command this machine can run: the x402-register SOP's step 7 `jq` must print the ownership
 * proof published at the document's root, its step 4 must create the favicon the discovery
 * audit looks for (VERIFY promises no warnings, and FAVICON_MISSING is one), the x402-register
 * playbook's favicon route must answer what its VERIFY says, the verifier-money-rules playbook's
 * greps must print the lines it says they print, and the test-buyer playbook's install step must
 * keep the seller's exact version pins.
 */
import { execFile, execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import express from "express";
import { describe, expect, it } from "vitest";
import type { CompiledContent } from "../spec/content-schema.ts";
import { base } from "../src/networks/base.ts";

const root = path.resolve(import.meta.dirname, "..");
const compiled = JSON.parse(readFileSync(path.join(root, ".generated/content.json"), "utf8")) as CompiledContent;
const sopEntry = compiled.sops.find((s) => s.record.slug === "x402-register");
const sop = sopEntry?.record;
const playbook = (id: string) => compiled.playbooks.find((p) => p.item.id === id)?.item;
if (!sop) throw new Error("no x402-register SOP");
const step = <T extends { n: number }>(steps: readonly T[], n: number): T => {
  const found = steps.find((s) => s.n === n);
  if (!found) throw new Error(`no step ${n}`);
  return found;
};

describe("the x402-register SOP", () => {
  it("step 7's jq prints the operation and the ownership proof from the document's root", () => {
    const { cmd } = step(sop.steps, 7) as { cmd: string };
    const filter = /jq -c '([^']+)'/.exec(cmd)?.[1];
    expect(filter).toBeDefined();
    const proof = `0x${"ab".repeat(65)}`;
    const document = {
      openapi: "3.1.0",
      "x-agentcash-provenance": { ownershipProofs: [proof] },
      paths: {
        "/api/quote": {
          get: {
            security: [],
            "x-payment-info": { price: { mode: "fixed", currency: "USD", amount: "0.01" }, protocols: [{ x402: {} }] },
          },
        },
      },
    };
    const out = execFileSync("jq", ["-c", filter as string], { input: JSON.stringify(document), encoding: "utf8" });
    expect(out.trim().split("\n")).toEqual([
      '{"security":[],"pay":{"price":{"mode":"fixed","currency":"USD","amount":"0.01"},"protocols":[{"x402":{}}]}}',
      `"${proof.slice(0, 10)}"`,
    ]);
    // The step's "Expected:" line (kept in the SOP's Markdown) says the same.
    expect(sopEntry?.markdown).toContain(
      'Expected: `{"security":[],"pay":{"price":{"mode":"fixed","currency":"USD","amount":"0.01"},"protocols":[{"x402":{}}]}}` and `"0x…"`',
    );
  });

  it("a step creates the favicon and the icon, so the audit VERIFY runs reports no FAVICON_MISSING", () => {
    expect(sop.verify.join(" ")).toContain("prints no warnings");
    const withScript = sop.steps.find((s) => /writeFileSync\("public\/favicon\.png"/.test(s.cmd ?? ""));
    expect(withScript?.n).toBe(3);
    const script = /node --input-type=module -e '([^']+)'/.exec(withScript?.cmd ?? "")?.[1] as string;
    const dir = mkdtempSync(path.join(tmpdir(), "favicon-"));
    try {
      mkdirSync(path.join(dir, "public"));
      execFileSync(process.execPath, ["--input-type=module", "-e", script], { cwd: dir });
      for (const file of ["favicon.png", "icon.png"]) {
        const png = readFileSync(path.join(dir, "public", file));
        expect([...png.subarray(0, 8)]).toEqual([137, 80, 78, 71, 13, 10, 26, 10]);
        expect(png.subarray(12, 16).toString()).toBe("IHDR");
        expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([64, 64]);
        expect(png.subarray(-8, -4).toString()).toBe("IEND");
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(sop.files.some((f) => f.startsWith("/srv/x402-api/public/favicon.png"))).toBe(true);
    expect(sop.files.some((f) => f.startsWith("/srv/x402-api/public/icon.png"))).toBe(true);
  });
});

describe("the x402-register playbook", () => {
  it("serves the favicon its VERIFY checks, with the status and type it says", async () => {
    const item = playbook("x402-register");
    const text = item?.steps.map((s) => s.do).join("\n") ?? "";
    const route = /`(app\.get\("\/favicon\.svg"[^`]+)`/.exec(text)?.[1];
    expect(route).toBeDefined();
    const check = item?.verify.find((v) => v.includes("/favicon.svg")) ?? "";
    const promised = /prints `([^`]+)`/.exec(check)?.[1];
    const app = express();
    new Function("app", route as string)(app);
    const server = app.listen(0);
    try {
      await new Promise((resolve) => server.once("listening", resolve));
      const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/favicon.svg`);
      expect(`${res.status} ${res.headers.get("content-type")}`).toBe(promised);
      expect(await res.text()).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    } finally {
      server.close();
    }
  });
});

describe("the verifier-money-rules playbook", () => {
  it("step 1's greps print the lines its comments name, in the packages the project installs", () => {
    const { cmd } = step(playbook("verifier-money-rules")?.steps ?? [], 1);
    const lines = (cmd ?? "").replace(/\\\n\s*/g, "").split("\n");
    const greps = lines.filter((l) => l.startsWith("grep -n "));
    expect(greps).toHaveLength(2);
    // The comment lines after each grep: every "<line>:" they name, in order.
    const promised = greps.map((g) => {
      const after = lines.slice(lines.indexOf(g) + 1);
      const end = after.findIndex((l) => !l.startsWith("#"));
      const comments = end === -1 ? after : after.slice(0, end);
      return comments.flatMap((c) => [...c.matchAll(/(\d+):/g)].map((m) => Number(m[1])));
    });
    const printed = greps.map((g) =>
      execFileSync("bash", ["-c", g], { cwd: root, encoding: "utf8" })
        .trim()
        .split("\n")
        .map((l) => Number(l.split(":")[0])),
    );
    expect(printed).toEqual(promised);
    expect(promised).toEqual([[293], [116, 185, 196, 216, 434]]);
  });
});

describe("the fix-bug-base-rpc playbook", () => {
  it("step 2's rpc-health.ts asks a valid 2,000-block getLogs of a chain younger than 2,000 blocks (a fresh anvil)", async () => {
    const { cmd } = step(playbook("fix-bug-base-rpc")?.steps ?? [], 2);
    const asked: unknown[] = [];
    // A node's JSON-RPC at block 597: block numbers must be hex quantities, as geth and anvil require.
    const quantity = /^0x(0|[1-9a-f][0-9a-f]*)$/;
    const rpc = express().use(express.json());
    rpc.post("/", (req, res) => {
      const { id, method, params } = req.body as { id: number; method: string; params: { fromBlock: string; toBlock: string }[] };
      if (method === "eth_chainId") return void res.json({ jsonrpc: "2.0", id, result: `0x${base.chainId.toString(16)}` });
      if (method === "eth_blockNumber") return void res.json({ jsonrpc: "2.0", id, result: "0x255" });
      const filter = params[0] as { fromBlock: string; toBlock: string };
      asked.push(filter);
      if (!quantity.test(filter.fromBlock) || !quantity.test(filter.toBlock))
        return void res.json({ jsonrpc: "2.0", id, error: { code: -32602, message: "invalid digit found in string" } });
      res.json({ jsonrpc: "2.0", id, result: [] });
    });
    const server = rpc.listen(0);
    const dir = mkdtempSync(path.join(tmpdir(), "rpc-health-"));
    try {
      await new Promise((resolve) => server.once("listening", resolve));
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
      writeFileSync(path.join(dir, "rpc-health.ts"), cmd ?? "");
      const out = await new Promise<string>((resolve, reject) =>
        execFile(process.execPath, ["rpc-health.ts"], { cwd: dir, env: { ...process.env, RPC_URLS: url } }, (error, stdout) =>
          error ? reject(error) : resolve(stdout),
        ),
      );
      expect(asked).toEqual([{ address: base.usdc.address, fromBlock: "0x0", toBlock: "0x255", topics: [] }]);
      expect(out).toMatch(
        new RegExp(
          `^ok +${url.replaceAll(".", "\\.")}  chain=${base.chainId} block=597 lag=0 \\d+ms getLogs\\(2000\\)=ok \\(0 logs\\) \\n$`,
        ),
      );
    } finally {
      server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("the test-buyer playbook", () => {
  it("installs at exact versions with --save-exact, so the seller's pins stay pins", () => {
    const install = step(playbook("test-buyer")?.steps ?? [], 1).cmd ?? "";
    const npm = install.split("\n").filter((line) => /^npm i(nstall)? /.test(line));
    expect(npm.length).toBeGreaterThan(0);
    for (const line of npm) {
      expect(line).toContain("--save-exact");
      const packages = line
        .replace(/#.*$/, "")
        .split(/\s+/)
        .slice(2)
        .filter((w) => !w.startsWith("-"));
      for (const spec of packages) expect(spec, line).toMatch(/^(@[\w.-]+\/)?[\w.-]+@\d+\.\d+\.\d+$/);
    }
  });
});
