/**
 * Entity-intelligence use cases as content: the real `content/entity-intel/` compiles to at
 * least eight plans whose every step names an entity route and carries a body that route
 * accepts; a fixture compiles to exactly its plan; and a broken use case (an unknown route, a
 * body the route refuses, a missing code block, too few files) fails the build naming the file
 * and the field. The search matches roles and tasks to the intended use case.
 */
import { mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Value } from "@sinclair/typebox/value";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { compileContent } from "../scripts/content/compile.ts";
import { ContentError, type ContentProblem } from "../scripts/content/problems.ts";
import { entityPaidRoutes } from "../spec/routes/entity-intel.ts";
import { UseCaseIndex } from "../src/content/use-cases.ts";
import { writeContentFixture } from "./support/content-fixture.ts";

const root = path.resolve(import.meta.dirname, "..");

describe("the real use cases", () => {
  it("are at least eight plans, each step a route of the entity family with a body it accepts", async () => {
    const c = await compileContent(root, { outFile: null });
    expect(c.entity_use_cases.length).toBeGreaterThanOrEqual(8);
    expect(c.entity_use_cases.map((u) => u.order)).toEqual(c.entity_use_cases.map((_u, i) => i + 1));
    for (const u of c.entity_use_cases) {
      expect(u.plan.length, u.id).toBeGreaterThanOrEqual(3);
      expect(u.plan.map((s) => s.step)).toEqual(u.plan.map((_s, i) => i + 1));
      for (const step of u.plan) {
        const route = entityPaidRoutes.find((r) => r.path === step.route);
        expect(route, `${u.id} step ${step.step}`).toBeDefined();
        expect(Value.Check(route?.body as never, step.example_body), `${u.id} step ${step.step}`).toBe(true);
        expect(step.why.length).toBeGreaterThan(40);
      }
    }
  });

  it("match each role and task to the use case written for it", async () => {
    const c = await compileContent(root, { outFile: null });
    const index = new UseCaseIndex(c.entity_use_cases);
    const best = (q: string) => index.search(q)[0]?.useCase.id;
    expect(best("exchange treasury team watching hot wallet inflows")).toBe("exchange-treasury-watch");
    expect(best("token team afraid holders will dump on exchanges")).toBe("token-team-dump-watch");
    expect(best("we were exploited, where did the stolen funds go")).toBe("exploit-incident-response");
    expect(best("dex pool growth and user retention")).toBe("dex-venue-growth");
    expect(best("vip outreach to our highest value users")).toBe("vip-outreach");
    expect(best("sybil farms before our airdrop")).toBe("airdrop-farm-detection");
    expect(best("follow a whale wallet, copy trading")).toBe("whale-following");
    expect(best("due diligence before an otc trade with a counterparty")).toBe("counterparty-due-diligence");
    expect(best("bridge operator watching cross-chain outflow")).toBe("bridge-flow-monitor");
    // Asked of the running service in a buyer's words, and first answered with another plan.
    expect(best("I need to know if a wallet I am about to trade with is linked to hacks or mixers")).toBe("counterparty-due-diligence");
    expect(best("monitor when a whale deposits to binance")).toBe("whale-following");
  });
});

describe("use case fixtures", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), "entity-content-"));
    writeContentFixture(dir);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const file = (id: string) => path.join(dir, "content/entity-intel", `${id}.md`);
  const edit = (id: string, from: string, to: string) => {
    const text = readFileSync(file(id), "utf8");
    if (!text.includes(from)) throw new Error(`fixture edit did not apply: ${from}`);
    writeFileSync(file(id), text.replace(from, to));
  };
  async function problemsOf(): Promise<ContentProblem[]> {
    try {
      await compileContent(dir, { outFile: null, today: "2026-11-21" });
    } catch (error) {
      if (error instanceof ContentError) return [...error.problems];
      throw error;
    }
    throw new Error("the fixture compiled, but a problem was expected");
  }

  it("compile to exactly the plan written", async () => {
    const c = await compileContent(dir, { outFile: null, today: "2026-11-21" });
    expect(c.entity_use_cases[0]).toEqual({
      id: "use-case-1",
      title: "Use case use-case-1",
      summary: "What use-case-1 finds out.",
      roles: ["fixture analyst"],
      tags: ["fixture"],
      order: 1,
      last_verified: "2026-11-20",
      intro: "Intro of use-case-1.",
      plan: [
        {
          step: 1,
          route: "/api/entity-intel/exchange-flow",
          why: "See the flows of use-case-1.",
          example_body: { token: "USDC", blocks: 1800 },
        },
        {
          step: 2,
          route: "/api/entity-intel/trace",
          why: "Follow the money.",
          example_body: { from: "0x4200000000000000000000000000000000000006", max_hops: 3 },
        },
      ],
      source: "content/entity-intel/use-case-1.md",
    });
  });

  it("refuse a step naming no entity route, a body its route refuses, and a step without a body, each by file and field", async () => {
    edit("use-case-2", "`exchange-flow`: See", "`whale-watch`: See");
    edit("use-case-3", '"max_hops": 3', '"max_hops": 6');
    edit("use-case-4", '   ```json\n   { "token": "USDC", "blocks": 1800 }\n   ```\n', "");
    const problems = await problemsOf();
    const at = (f: string, field: string) => problems.find((p) => p.file === `content/entity-intel/${f}.md` && p.field === field);
    expect(at("use-case-2", "plan[step=1]")?.expected).toMatch(/route in backticks.*`exchange-flow`/);
    expect(at("use-case-3", "plan[step=2].example_body")).toMatchObject({
      expected: "a valid body of POST /api/entity-intel/trace",
      found: expect.stringContaining("/max_hops"),
    });
    expect(at("use-case-4", "plan[step=1].example_body")?.found).toBe("no code block");
    expect(problems).toHaveLength(3);
  });

  it("refuse fewer than eight use cases", async () => {
    unlinkSync(file("use-case-8"));
    const problems = await problemsOf();
    expect(problems).toEqual([{ file: "content/entity-intel", field: "use cases", expected: "at least 8 use cases", found: "7" }]);
  });
});
