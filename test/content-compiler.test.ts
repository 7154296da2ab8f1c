/**
 * The content compiler: on the real `content/` it yields exactly the catalogue of the spec
 * (13 playbooks, 4 SOPs with their prices and step/pitfall counts, 15 KB entries); on small
 * fixtures it compiles the format exactly, and each broken fixture fails the build with the
 * file, the field and what was expected.
 */
import { mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { compileContent } from "../scripts/content/compile.ts";
import { ContentError, type ContentProblem } from "../scripts/content/problems.ts";
import { KB_CATEGORIES, PLAYBOOK_IDS } from "../spec/content-schema.ts";
import { kb, playbook, words, writeContentFixture } from "./support/content-fixture.ts";

const root = path.resolve(import.meta.dirname, "..");

describe("the real content", () => {
  it("compiles to the catalogue of the spec: 13 playbooks, 4 SOPs at their prices and counts, 15 KB entries", async () => {
    const c = await compileContent(root, { outFile: null });
    expect(c.bundle).toMatchObject({ bundle_id: "playbook-bundle", version: "1.0.0", price_usdc: 0.91 });
    expect(c.bundle.how_to_buy).toContain("POST /api/compute/playbook-bundle");
    expect(c.playbooks.map((p) => p.item.id).sort()).toEqual([...PLAYBOOK_IDS].sort());
    expect(c.playbooks.map((p) => p.order)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]);
    for (const p of c.playbooks) {
      // requested_by_owner as the file's own frontmatter line says, read here without the compiler.
      const frontmatter = readFileSync(path.join(root, "content/playbooks", `${p.item.id}.md`), "utf8").split(/^---$/m)[1] ?? "";
      const requested = frontmatter.match(/^requested_by_owner: (true|false)$/m)?.[1];
      const verified = frontmatter.match(/^last_verified: "?(\d{4}-\d{2}-\d{2})"?$/m)?.[1];
      expect(requested, p.item.id).toBeDefined();
      expect(p.preview).toEqual({ id: p.item.id, title: p.item.title, requested_by_owner: requested === "true" });
      expect(Object.keys(p.item)).toEqual(["id", "title", "solves", "steps", "pitfalls", "verify"]);
      expect(p.item.steps.map((s) => s.n)).toEqual(p.item.steps.map((_s, i) => i + 1));
      expect(p.item.steps.length).toBeGreaterThan(0);
      expect(p.item.pitfalls.length).toBeGreaterThan(0);
      expect(p.item.verify.length).toBeGreaterThan(0);
      for (const step of p.item.steps) expect(step.do.trim()).not.toBe("");
      expect(p.markdown.startsWith(`# ${p.item.title}\n`)).toBe(true);
      expect(p.markdown_section.startsWith(`## ${p.item.title}\n`)).toBe(true);
      expect(p.last_verified).toBe(verified);
    }
    expect(c.sops.map((s) => [s.index.slug, s.index.price_usdc, s.index.steps, s.index.pitfalls])).toEqual([
      ["create-x402-endpoint", 0.3, 15, 10],
      ["vps-gdrive-connect", 0.1, 9, 8],
      ["x402-register", 0.3, 13, 10],
      ["youtube-auto-ai", 0.1, 12, 9],
    ]);
    for (const s of c.sops) {
      expect(s.record.steps).toHaveLength(s.index.steps);
      expect(s.record.pitfalls).toHaveLength(s.index.pitfalls);
      expect(s.record.prerequisites.length).toBeGreaterThan(0);
      expect(s.record.files.length).toBeGreaterThan(0);
      for (const f of s.record.files) expect(f).not.toMatch(/`| — /);
      expect(Object.keys(s.record)).toEqual(["slug", "title", "summary", "prerequisites", "steps", "pitfalls", "verify", "files"]);
    }
    expect(c.howto.all_in_option.bundle).toBe("playbook-bundle");
    expect(c.kb.entries).toHaveLength(15);
    expect(new Set(c.kb.entries.map((e) => e.id)).size).toBe(15);
    expect(c.kb.categories.length).toBeGreaterThanOrEqual(4);
    expect(c.kb.categories.reduce((n, cat) => n + cat.count, 0)).toBe(15);
    for (const e of c.kb.entries) expect(KB_CATEGORIES).toContain(e.category);
  });

  it("matches the step counts written in the files themselves", async () => {
    const c = await compileContent(root, { outFile: null });
    for (const s of c.sops) {
      const text = readFileSync(path.join(root, s.source), "utf8");
      const stepsSection = text.split(/^## Steps$/m)[1]?.split(/^## Pitfalls$/m)[0] ?? "";
      // Top-level ordered items start at column 0: "1. ", "2. ", ...
      expect(stepsSection.match(/^\d+\. /gm)?.length).toBe(s.index.steps);
    }
  });
});

describe("fixtures", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), "content-fixture-"));
    writeContentFixture(dir);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  function edit(rel: string, from: string | RegExp, to: string): void {
    const file = path.join(dir, "content", rel);
    const text = readFileSync(file, "utf8");
    if (typeof from === "string" ? !text.includes(from) : !from.test(text))
      throw new Error(`fixture edit did not apply to ${rel}: ${from}`);
    writeFileSync(file, text.replace(from, to));
  }

  /** The problems a compile of the fixture fails with. */
  async function problemsOf(): Promise<ContentProblem[]> {
    try {
      await compileContent(dir, { outFile: null, today: "2026-11-21" });
    } catch (error) {
      if (error instanceof ContentError) return [...error.problems];
      throw error;
    }
    throw new Error("the fixture compiled, but a problem was expected");
  }

  it("takes an added playbook with no other change: one more Markdown file", async () => {
    writeFileSync(path.join(dir, "content/playbooks/extra-one.md"), playbook("extra-one", 14));
    const c = await compileContent(dir, { outFile: null, today: "2026-11-21" });
    expect(c.playbooks.map((p) => p.item.id).at(-1)).toBe("extra-one");
    expect(c.playbooks).toHaveLength(14);
  });

  describe("a good fixture", () => {
    it("compiles steps, pitfalls, verify and renditions exactly as the format says", async () => {
      const outFile = path.join(dir, ".generated/content.json");
      const c = await compileContent(dir, { outFile, today: "2026-11-21" });
      expect(JSON.parse(readFileSync(outFile, "utf8"))).toEqual(c);
      const first = c.playbooks[0];
      expect(first?.preview).toEqual({ id: "ship-x402-endpoint", title: "Title of ship-x402-endpoint", requested_by_owner: false });
      expect(first?.item).toEqual({
        id: "ship-x402-endpoint",
        title: "Title of ship-x402-endpoint",
        solves: "It solves ship-x402-endpoint.",
        steps: [
          { n: 1, do: "Install the `tool` for ship-x402-endpoint because it is needed.", cmd: "npm install tool-ship-x402-endpoint" },
          { n: 2, do: "Think about it; no command here.", cmd: "" },
        ],
        pitfalls: ["Pitfall one of ship-x402-endpoint.", "Pitfall two with `code`."],
        verify: ["Run `tool --version`; expect `1.0.0`."],
      });
      expect(first?.markdown).toContain("More explanation that only the Markdown rendition carries.");
      expect(first?.markdown).toMatch(/^# Title of ship-x402-endpoint\n\n\*\*Solves:\*\* It solves ship-x402-endpoint\.\n/);
      expect(first?.markdown).toContain("\n## Steps\n");
      expect(first?.markdown_section).toContain("\n### Steps\n");
      expect(first?.markdown_section).toContain("   ```bash\n   npm install tool-ship-x402-endpoint\n   ```");
      const sop = c.sops[1];
      expect(sop?.index).toEqual({
        slug: "vps-gdrive-connect",
        title: "SOP vps-gdrive-connect",
        price_usdc: 0.1,
        summary: "What vps-gdrive-connect sets up. For whom.",
        steps: 9,
        pitfalls: 8,
        tags: ["fixture"],
        last_verified: "2026-11-20",
      });
      expect(sop?.record.files).toEqual(["/etc/vps-gdrive-connect.conf", "~/bin/vps-gdrive-connect.sh"]);
      expect(sop?.record.prerequisites).toEqual(["A VPS."]);
      expect(sop?.record.steps[8]).toEqual({ n: 9, do: "Do step 9 of vps-gdrive-connect.", cmd: "echo 9" });
      expect(c.kb.categories).toEqual([
        { name: "x402-protocol", count: 3 },
        { name: "payments", count: 3 },
        { name: "base-chain", count: 3 },
        { name: "agents", count: 3 },
        { name: "operations", count: 3 },
      ]);
      expect(c.kb.entries[0]).toEqual({
        id: "entry-0",
        title: "Question 0?",
        category: "x402-protocol",
        tags: ["fixture"],
        asked_as: [],
        answer: words(160, "w0x"),
        last_verified: "2026-11-20",
      });
    });
  });

  describe("a broken fixture fails the build naming the file, the field and what was expected", () => {
    const cases: { name: string; breakIt: () => void; want: Omit<Partial<ContentProblem>, "expected"> & { expected: RegExp } }[] = [
      {
        name: "a missing frontmatter field",
        breakIt: () => edit("playbooks/test-buyer.md", /^solves: .*\n/m, ""),
        want: { file: "content/playbooks/test-buyer.md", field: "solves", expected: /required field: one sentence/ },
      },
      {
        name: "an unknown frontmatter field",
        breakIt: () => edit("playbooks/core-data.md", "order: 7\n", "order: 7\nauthor: me\n"),
        want: {
          file: "content/playbooks/core-data.md",
          field: "author",
          line: 8,
          expected: /no such field \(allowed: id, title, requested_by_owner, solves, tags, order, last_verified\)/,
        },
      },
      {
        name: "a malformed boolean",
        breakIt: () => edit("playbooks/drive-bridge.md", /requested_by_owner: \w+/, "requested_by_owner: yes please"),
        want: { file: "content/playbooks/drive-bridge.md", field: "requested_by_owner", found: '"yes please"', expected: /true or false/ },
      },
      {
        name: "an id that is not the file name",
        breakIt: () => edit("playbooks/install-adsense.md", "id: install-adsense", "id: install-ads"),
        want: { file: "content/playbooks/install-adsense.md", field: "id", line: 2, expected: /"install-adsense" \(the file name\)/ },
      },
      {
        name: "an impossible date",
        breakIt: () => edit("playbooks/x402-register.md", "last_verified: 2026-11-20", "last_verified: 2026-02-30"),
        want: { file: "content/playbooks/x402-register.md", field: "last_verified", expected: /a real calendar date/ },
      },
      {
        name: "a future date",
        breakIt: () => edit("kb/entry-3.md", "last_verified: 2026-11-20", "last_verified: 2027-01-01"),
        want: { file: "content/kb/entry-3.md", field: "last_verified", expected: /on or before today \(2026-11-21\)/ },
      },
      {
        name: "a missing playbook",
        breakIt: () => unlinkSync(path.join(dir, "content/playbooks/telegram-alerts-secure.md")),
        want: { file: "content/playbooks/telegram-alerts-secure.md", field: "file", expected: /this playbook of the bundle/ },
      },
      {
        name: "an added playbook whose position is taken",
        breakIt: () => writeFileSync(path.join(dir, "content/playbooks/extra-one.md"), playbook("extra-one", 13)),
        want: { file: "content/playbooks/extra-one.md", field: "order", expected: /a position 1-14 no other file uses/ },
      },
      {
        name: "two playbooks in the same position",
        breakIt: () => edit("playbooks/core-data.md", "order: 7", "order: 3"),
        want: { file: "content/playbooks/core-data.md", field: "order", expected: /a position 1-13 no other file uses/ },
      },
      {
        name: "a heading out of the format",
        breakIt: () => edit("playbooks/test-buyer.md", "## Pitfalls", "## Gotchas"),
        want: {
          file: "content/playbooks/test-buyer.md",
          field: "body",
          found: "`## Gotchas`",
          expected: /only the level-2 headings `## Steps`, `## Pitfalls`, `## Verify`/,
        },
      },
      {
        name: "a section missing",
        breakIt: () => edit("playbooks/test-buyer.md", /## Verify\n\n- .*\n/, ""),
        want: { file: "content/playbooks/test-buyer.md", field: "## Verify", expected: /a level-2 heading `## Verify`/ },
      },
      {
        name: "sections out of order",
        breakIt: () => edit("playbooks/core-data.md", /(## Pitfalls\n\n- .*\n- .*\n)\n(## Verify\n\n- .*\n)/, "$2\n$1"),
        want: {
          file: "content/playbooks/core-data.md",
          field: "body",
          expected: /the sections in the order ## Steps, ## Pitfalls, ## Verify/,
        },
      },
      {
        name: "a step list broken by an unindented code block",
        breakIt: () =>
          edit(
            "playbooks/fix-bug-base-rpc.md",
            "   ```bash\n   npm install tool-fix-bug-base-rpc\n   ```",
            "```bash\nnpm install tool-fix-bug-base-rpc\n```",
          ),
        want: {
          file: "content/playbooks/fix-bug-base-rpc.md",
          field: "## Steps",
          found: "a code block outside the list (and 1 more block after it)",
          line: 18,
          expected: /only one ordered list/,
        },
      },
      {
        name: "steps written as bullets",
        breakIt: () => edit("playbooks/core-data.md", /^1\. /m, "- "),
        want: { file: "content/playbooks/core-data.md", field: "## Steps", expected: /ONE ordered list/ },
      },
      {
        name: "a level-1 heading in the body",
        breakIt: () => edit("playbooks/core-data.md", "Intro paragraph", "# Core data\n\nIntro paragraph"),
        want: { file: "content/playbooks/core-data.md", field: "body", found: "# Core data", line: 11, expected: /no level-1 heading/ },
      },
      {
        name: "a level-1 heading in a KB answer",
        breakIt: () => edit("kb/entry-5.md", "\n\nw5x", "\n\n# Answer\n\nw5x"),
        want: { file: "content/kb/entry-5.md", field: "answer", found: "# Answer", line: 9, expected: /no level-1 heading/ },
      },
      {
        name: "an SOP with a step too few",
        breakIt: () => edit("sops/x402-register.md", /13\. Do step 13[\s\S]*?```\n\n/, ""),
        want: { file: "content/sops/x402-register.md", field: "## Steps", found: "12", expected: /exactly 13 steps \(the SOP catalogue/ },
      },
      {
        name: "an SOP with a pitfall too many",
        breakIt: () => edit("sops/youtube-auto-ai.md", "- Pitfall 1.", "- Pitfall 0.\n- Pitfall 1."),
        want: { file: "content/sops/youtube-auto-ai.md", field: "## Pitfalls", found: "10", expected: /exactly 9 pitfalls/ },
      },
      {
        name: "an SOP at the wrong price",
        breakIt: () => edit("sops/create-x402-endpoint.md", "price_usdc: 0.3", "price_usdc: 0.25"),
        want: {
          file: "content/sops/create-x402-endpoint.md",
          field: "price_usdc",
          found: "0.25",
          line: 5,
          expected: /^0\.3 \(the SOP catalogue/,
        },
      },
      {
        name: "a file bullet without the path in inline code",
        breakIt: () => edit("sops/vps-gdrive-connect.md", "- `~/bin/vps-gdrive-connect.sh`", "- ~/bin/vps-gdrive-connect.sh"),
        want: { file: "content/sops/vps-gdrive-connect.md", field: "files[2]", expected: /starts with the file path in inline code/ },
      },
      {
        name: "an SOP without prerequisites",
        breakIt: () => edit("sops/vps-gdrive-connect.md", "## Prerequisites\n\n- A VPS.\n\n", ""),
        want: { file: "content/sops/vps-gdrive-connect.md", field: "## Prerequisites", expected: /a level-2 heading `## Prerequisites`/ },
      },
      {
        name: "a string where the SOP price number goes",
        breakIt: () => edit("sops/youtube-auto-ai.md", "price_usdc: 0.1", 'price_usdc: "0.10 USDC"'),
        want: { file: "content/sops/youtube-auto-ai.md", field: "price_usdc", expected: /the price in USD \(a number/ },
      },
      {
        name: "the bundle at another price",
        breakIt: () => edit("bundle.md", "price_usdc: 0.91", "price_usdc: 2.0"),
        want: { file: "content/bundle.md", field: "price_usdc", found: "2", expected: /the number 0\.91/ },
      },
      {
        name: "an unquoted version the YAML parser reads as a number",
        breakIt: () => edit("bundle.md", 'version: "1.0.0"', "version: 1.0"),
        want: { file: "content/bundle.md", field: "version", expected: /a version string like "1\.0\.0"/ },
      },
      {
        name: "a how-to-buy that does not name the call",
        breakIt: () => edit("bundle.md", "Call POST /api/compute/playbook-bundle with x402.", "Pay us."),
        want: { file: "content/bundle.md", field: "how_to_buy", expected: /naming the exact call `POST \/api\/compute\/playbook-bundle`/ },
      },
      {
        name: "a malformed nested field",
        breakIt: () => edit("howto.md", "bundle: playbook-bundle", "bundle: everything"),
        want: { file: "content/howto.md", field: "all_in_option.bundle", found: '"everything"', expected: /exactly "playbook-bundle"/ },
      },
      {
        name: "invalid YAML",
        breakIt: () => edit("kb/entry-1.md", "title: Question 1?", "title: [Question 1?"),
        want: { file: "content/kb/entry-1.md", field: "frontmatter", expected: /valid YAML/ },
      },
      {
        name: "an unknown KB category",
        breakIt: () => edit("kb/entry-2.md", /^category: .*$/m, "category: misc"),
        want: {
          file: "content/kb/entry-2.md",
          field: "category",
          found: '"misc"',
          expected: /one of x402-protocol, payments, base-chain, agents, operations/,
        },
      },
      {
        name: "a KB answer too short",
        breakIt: () => edit("kb/entry-4.md", words(160, "w4x"), words(20, "w4x")),
        want: { file: "content/kb/entry-4.md", field: "answer", found: "20 words", expected: /an answer of 150-400 words/ },
      },
      {
        name: "a KB entry too many",
        breakIt: () => writeFileSync(path.join(dir, "content/kb/entry-15.md"), kb(15)),
        want: { file: "content/kb", field: "entries", found: "16", expected: /exactly 15 entries/ },
      },
      {
        name: "KB entries in too few categories",
        breakIt: () => {
          for (let i = 0; i < 15; i++) edit(`kb/entry-${i}.md`, /^category: .*$/m, `category: ${i < 8 ? "payments" : "agents"}`);
        },
        want: { file: "content/kb", field: "category", expected: /at least 4 of/ },
      },
      {
        name: "a missing index file",
        breakIt: () => unlinkSync(path.join(dir, "content/howto.md")),
        want: { file: "content/howto.md", field: "file", found: "no such file", expected: /content\/howto\.md/ },
      },
    ];

    for (const c of cases) {
      it(`${c.name}`, async () => {
        c.breakIt();
        const problems = await problemsOf();
        const { expected, ...rest } = c.want;
        const match = problems.find((p) => p.file === rest.file && p.field === rest.field && expected.test(p.expected));
        expect(match, `problems were:\n${problems.map((p) => JSON.stringify(p)).join("\n")}`).toBeDefined();
        expect(match).toMatchObject(rest);
      });
    }

    it.each([
      {
        name: "a YAML error",
        breakIt: () => edit("kb/entry-1.md", "title: Question 1?", "title: Base USDC: the address"),
        want: { field: "frontmatter", expected: "valid YAML between the two `---` lines", line: 3 },
      },
      {
        name: "a file without its opening ---",
        breakIt: () => edit("kb/entry-1.md", /^---\n/, ""),
        want: {
          field: "frontmatter",
          expected: "the file to start with a `---` line, then the YAML frontmatter, then a closing `---` line",
          found: '"id: entry-1"',
          line: 1,
        },
      },
      {
        name: "a file without its closing ---",
        breakIt: () => edit("kb/entry-1.md", "last_verified: 2026-11-20\n---\n", "last_verified: 2026-11-20\n"),
        want: { field: "frontmatter", expected: "a closing `---` line after the YAML frontmatter", found: "none", line: 1 },
      },
    ])("$name is one problem, not one per field the author did write", async ({ breakIt, want }) => {
      breakIt();
      const problems = (await problemsOf()).filter((p) => p.file === "content/kb/entry-1.md");
      expect(problems).toHaveLength(1);
      expect(problems[0]).toMatchObject({ file: "content/kb/entry-1.md", ...want });
    });

    it("lists every problem of every file in one error message", async () => {
      edit("playbooks/core-data.md", /^solves: .*\n/m, "");
      edit("sops/x402-register.md", "price_usdc: 0.3", "price_usdc: 0.2");
      const error = await compileContent(dir, { outFile: null, today: "2026-11-21" }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ContentError);
      expect((error as Error).message).toBe(
        [
          "content: 2 problems (see content/README.md for the format):",
          "  content/playbooks/core-data.md: solves: expected this required field: one sentence: the problem the playbook solves",
          "  content/sops/x402-register.md:5: price_usdc: expected 0.3 (the SOP catalogue); found 0.2",
        ].join("\n"),
      );
    });
  });
});
