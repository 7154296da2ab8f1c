/**
 * The content compiler, run by `npm run build` before the Astro build (and alone with
 * `npx node scripts/content/compile.ts` to check content): every file under `content/` is
 * parsed, validated against `spec/content-schema.ts` and the catalogue (13 playbooks, 4 SOPs
 * with their prices and step/pitfall counts, 15 KB entries), and compiled into the records
 * the API serves plus a Markdown rendition of each playbook and SOP. The result goes to
 * `.generated/content.json`: server-only, bundled into `dist/server` by `src/content/catalog.ts`,
 * never copied to `dist/client`. Any problem fails the build with file, field and expectation.
 */
import { existsSync, mkdirSync, readdirSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import { Value } from "@sinclair/typebox/value";
import {
  AD_TEXT_MAX,
  type Ad,
  AdFrontmatter,
  BundleFrontmatter,
  type BundleMeta,
  CompiledContent,
  type CompiledPlaybook,
  type CompiledSop,
  ENTITY_USE_CASES_MIN,
  type EntityUseCase,
  EntityUseCaseFrontmatter,
  HowtoFrontmatter,
  KB_ANSWER_WORDS,
  KB_CATEGORIES,
  KB_ENTRIES_TOTAL,
  KB_MIN_CATEGORIES,
  type KbCategoryCount,
  type KbEntry,
  KbFrontmatter,
  KebabId,
  PLAYBOOK_IDS,
  PlaybookFrontmatter,
  SOP_CATALOGUE,
  SopFrontmatter,
} from "../../spec/content-schema.ts";
import { entityPaidRoutes, entityUseCases } from "../../spec/routes/entity-intel.ts";
import { blockText, bulletsOf, filesOf, refuseTitleHeading, shiftHeadings, splitSections, stepsOf, wordCount } from "./body.ts";
import { ContentError, type ContentProblem } from "./problems.ts";
import { checkFrontmatter, readSourceFile, type SourceFile } from "./source-file.ts";

/** Options of `compileContent`. */
export interface CompileOptions {
  /** Where to write the compiled JSON; default `<root>/.generated/content.json`; `null` writes nothing (tests). */
  outFile?: string | null;
  /** Today as `YYYY-MM-DD` (a `last_verified` after it is refused); default: the current UTC date. */
  today?: string;
}

/** Where the compiled content goes by default, relative to the repository root. */
export const COMPILED_CONTENT_FILE = ".generated/content.json";

const PLAYBOOK_SECTIONS = ["Steps", "Pitfalls", "Verify"] as const;
const SOP_SECTIONS = ["Prerequisites", "Steps", "Pitfalls", "Verify", "Files"] as const;

interface Context {
  root: string;
  contentDir: string;
  today: string;
  problems: ContentProblem[];
}

function rel(ctx: Context, abs: string): string {
  return path.relative(ctx.root, abs).split(path.sep).join("/");
}

/** The `.md` files of a content folder, sorted; a missing folder is a problem. */
function markdownFiles(ctx: Context, folder: string): string[] {
  const dir = path.join(ctx.contentDir, folder);
  if (!existsSync(dir)) {
    ctx.problems.push({
      file: rel(ctx, dir),
      field: "folder",
      expected: `the folder content/${folder}/ with one .md file per entry`,
      found: "no such folder",
    });
    return [];
  }
  return readdirSync(dir)
    .filter((name) => name.endsWith(".md"))
    .sort()
    .map((name) => path.join(dir, name));
}

/** Every `.md` file of a content folder compiled by `compile`: the records it made, and the names of all the files. */
function compileFolder<T>(ctx: Context, folder: string, compile: (file: SourceFile) => T | undefined): { compiled: T[]; names: string[] } {
  const compiled: T[] = [];
  const names: string[] = [];
  for (const abs of markdownFiles(ctx, folder)) {
    names.push(path.basename(abs, ".md"));
    const record = compile(readSourceFile(abs, rel(ctx, abs), ctx.problems));
    if (record !== undefined) compiled.push(record);
  }
  return { compiled, names };
}

/** Read one required single file (`bundle.md`, `howto.md`), or record that it is missing. */
function singleFile(ctx: Context, name: string, what: string): SourceFile | undefined {
  const abs = path.join(ctx.contentDir, name);
  if (!existsSync(abs)) {
    ctx.problems.push({ file: rel(ctx, abs), field: "file", expected: what, found: "no such file" });
    return undefined;
  }
  return readSourceFile(abs, rel(ctx, abs), ctx.problems);
}

/** `last_verified` must be a real calendar day, not after today. */
function checkDate(ctx: Context, file: SourceFile, value: string): void {
  const parsed = new Date(`${value}T00:00:00Z`);
  const at = { line: file.keyLines.get("last_verified") };
  if (Number.isNaN(parsed.getTime()) || parsed.toISOString().slice(0, 10) !== value) {
    ctx.problems.push({ file: file.rel, field: "last_verified", expected: "a real calendar date YYYY-MM-DD", found: value, ...at });
  } else if (value > ctx.today) {
    ctx.problems.push({
      file: file.rel,
      field: "last_verified",
      expected: `a date on or before today (${ctx.today})`,
      found: value,
      ...at,
    });
  }
}

/** The id or slug must equal the file name. */
function checkFileName(file: SourceFile, field: "id" | "slug", value: string): void {
  const expected = path.basename(file.rel, ".md");
  if (value !== expected) {
    file.problems.push({
      file: file.rel,
      field,
      expected: `"${expected}" (the file name)`,
      found: JSON.stringify(value),
      line: file.keyLines.get(field),
    });
  }
}

/** Refuse an empty list where at least one entry is required. */
function nonEmpty(file: SourceFile, field: string, list: unknown[] | undefined): void {
  if (list && list.length === 0) file.problems.push({ file: file.rel, field, expected: "at least one entry", found: "none" });
}

function compileBundle(ctx: Context): BundleMeta | undefined {
  const file = singleFile(ctx, "bundle.md", "content/bundle.md with the bundle's frontmatter");
  if (!file) return undefined;
  const data = checkFrontmatter(file, BundleFrontmatter);
  return data ? { ...data, intro: file.body.trim() } : undefined;
}

function compileHowto(ctx: Context) {
  const file = singleFile(ctx, "howto.md", "content/howto.md with the SOP index's frontmatter");
  if (!file) return undefined;
  return checkFrontmatter(file, HowtoFrontmatter);
}

function compilePlaybook(ctx: Context, file: SourceFile): CompiledPlaybook | undefined {
  const data = checkFrontmatter(file, PlaybookFrontmatter);
  const sections = splitSections(file, PLAYBOOK_SECTIONS);
  const steps = stepsOf(file, sections);
  const pitfalls = bulletsOf(file, sections, "Pitfalls", "pitfalls");
  const verify = bulletsOf(file, sections, "Verify", "verify");
  nonEmpty(file, "## Steps", steps);
  nonEmpty(file, "## Pitfalls", pitfalls);
  nonEmpty(file, "## Verify", verify);
  if (!data) return undefined;
  checkFileName(file, "id", data.id);
  checkDate(ctx, file, data.last_verified);
  if (!steps || !pitfalls || !verify) return undefined;
  const verified = `_Last verified: ${data.last_verified}._`;
  return {
    preview: { id: data.id, title: data.title, requested_by_owner: data.requested_by_owner },
    item: { id: data.id, title: data.title, solves: data.solves, steps, pitfalls, verify },
    tags: data.tags,
    order: data.order,
    last_verified: data.last_verified,
    source: file.rel,
    markdown: `# ${data.title}\n\n**Solves:** ${data.solves}\n\n${verified}\n\n${file.body.trim()}\n`,
    markdown_section: `## ${data.title}\n\n**Solves:** ${data.solves}\n\n${verified}\n\n${shiftHeadings(file, 1)}\n`,
  };
}

function compilePlaybooks(ctx: Context): CompiledPlaybook[] {
  const { compiled, names } = compileFolder(ctx, "playbooks", (file) => compilePlaybook(ctx, file));
  // The spec's playbooks must all be there; an author adds another with one more file.
  checkPresent(ctx, "playbooks", names, PLAYBOOK_IDS, "this playbook of the bundle");
  return inOrder(ctx, compiled, Math.max(names.length, PLAYBOOK_IDS.length));
}

/** Each of `ids` must have its file `<folder>/<id>.md` among the `found` ones. */
function checkPresent(ctx: Context, folder: string, found: readonly string[], ids: readonly string[], expected: string): void {
  for (const id of ids) {
    if (!found.includes(id))
      ctx.problems.push({ file: `${rel(ctx, ctx.contentDir)}/${folder}/${id}.md`, field: "file", expected, found: "no such file" });
  }
}

/** The records sorted by `order`, each value 1..total used exactly once. */
function inOrder<T extends { source: string; order: number }>(ctx: Context, records: T[], total: number): T[] {
  for (const [order, sharing] of Map.groupBy(records, (r) => r.order)) {
    const files = sharing.map((r) => r.source);
    if (files.length > 1) {
      for (const file of files)
        ctx.problems.push({
          file,
          field: "order",
          expected: `a position 1-${total} no other file uses`,
          found: `${order}, also used by ${files.filter((f) => f !== file).join(", ")}`,
        });
    }
  }
  return records.sort((a, b) => a.order - b.order);
}

function compileSop(ctx: Context, file: SourceFile): CompiledSop | undefined {
  const data = checkFrontmatter(file, SopFrontmatter);
  const sections = splitSections(file, SOP_SECTIONS);
  const prerequisites = bulletsOf(file, sections, "Prerequisites", "prerequisites");
  const steps = stepsOf(file, sections);
  const pitfalls = bulletsOf(file, sections, "Pitfalls", "pitfalls");
  const verify = bulletsOf(file, sections, "Verify", "verify");
  const files = filesOf(file, sections);
  nonEmpty(file, "## Prerequisites", prerequisites);
  nonEmpty(file, "## Verify", verify);
  nonEmpty(file, "## Files", files);
  const slug = path.basename(file.rel, ".md");
  const entry = SOP_CATALOGUE.find((s) => s.slug === slug);
  if (!entry) {
    ctx.problems.push({
      file: file.rel,
      field: "file name",
      expected: `one of the SOP slugs: ${SOP_CATALOGUE.map((s) => s.slug).join(", ")}`,
      found: slug,
    });
  } else {
    for (const [section, list, count] of [
      ["Steps", steps, entry.steps],
      ["Pitfalls", pitfalls, entry.pitfalls],
    ] as const) {
      if (list && list.length !== count) {
        const expected = `exactly ${count} ${section.toLowerCase()} (the SOP catalogue)`;
        ctx.problems.push({ file: file.rel, field: `## ${section}`, expected, found: `${list.length}` });
      }
    }
    if (data && data.price_usdc !== entry.price_usdc) {
      ctx.problems.push({
        file: file.rel,
        field: "price_usdc",
        expected: `${entry.price_usdc} (the SOP catalogue)`,
        found: `${data.price_usdc}`,
        line: file.keyLines.get("price_usdc"),
      });
    }
  }
  if (!data) return undefined;
  checkFileName(file, "slug", data.slug);
  checkDate(ctx, file, data.last_verified);
  if (!prerequisites || !steps || !pitfalls || !verify || !files) return undefined;
  return {
    index: {
      slug: data.slug,
      title: data.title,
      price_usdc: data.price_usdc,
      summary: data.summary,
      steps: steps.length,
      pitfalls: pitfalls.length,
      tags: data.tags,
      last_verified: data.last_verified,
    },
    record: { slug: data.slug, title: data.title, summary: data.summary, prerequisites, steps, pitfalls, verify, files },
    order: data.order,
    source: file.rel,
    markdown: `# ${data.title}\n\n${data.summary}\n\n_Last verified: ${data.last_verified}._\n\n${file.body.trim()}\n`,
  };
}

function compileSops(ctx: Context): CompiledSop[] {
  const { compiled, names } = compileFolder(ctx, "sops", (file) => compileSop(ctx, file));
  checkPresent(
    ctx,
    "sops",
    names,
    SOP_CATALOGUE.map((s) => s.slug),
    "this SOP of the catalogue",
  );
  return inOrder(ctx, compiled, SOP_CATALOGUE.length);
}

function compileKbEntry(ctx: Context, file: SourceFile): KbEntry | undefined {
  const data = checkFrontmatter(file, KbFrontmatter);
  const answer = file.body.trim();
  for (const node of file.tree.children) refuseTitleHeading(file, node, "answer");
  const words = wordCount(answer);
  if (words < KB_ANSWER_WORDS.min || words > KB_ANSWER_WORDS.max) {
    ctx.problems.push({
      file: file.rel,
      field: "answer",
      expected: `an answer of ${KB_ANSWER_WORDS.min}-${KB_ANSWER_WORDS.max} words`,
      found: `${words} words`,
    });
  }
  if (!data) return undefined;
  checkFileName(file, "id", data.id);
  checkDate(ctx, file, data.last_verified);
  return {
    id: data.id,
    title: data.title,
    category: data.category,
    tags: data.tags,
    asked_as: data.asked_as ?? [],
    answer,
    last_verified: data.last_verified,
  };
}

function compileKb(ctx: Context): { entries: KbEntry[]; categories: KbCategoryCount[] } {
  const { compiled: entries, names: files } = compileFolder(ctx, "kb", (file) => compileKbEntry(ctx, file));
  const kbDir = `${rel(ctx, ctx.contentDir)}/kb`;
  if (files.length !== KB_ENTRIES_TOTAL) {
    ctx.problems.push({
      file: kbDir,
      field: "entries",
      expected: `exactly ${KB_ENTRIES_TOTAL} entries`,
      found: `${files.length}`,
    });
  }
  const categories = KB_CATEGORIES.map((name) => ({ name, count: entries.filter((e) => e.category === name).length })).filter(
    (c) => c.count > 0,
  );
  if (files.length > 0 && entries.length === files.length && categories.length < KB_MIN_CATEGORIES) {
    ctx.problems.push({
      file: kbDir,
      field: "category",
      expected: `entries spread across at least ${KB_MIN_CATEGORIES} of ${KB_CATEGORIES.join(", ")}`,
      found: categories.map((c) => `${c.name} (${c.count})`).join(", "),
    });
  }
  const rank = (category: string) => (KB_CATEGORIES as readonly string[]).indexOf(category);
  entries.sort((a, b) => rank(a.category) - rank(b.category) || a.id.localeCompare(b.id));
  return { entries, categories };
}

/** A `YYYY-MM-DDTHH:MM:SSZ` that names a real instant, as epoch milliseconds; undefined otherwise. */
function realInstant(value: string): number | undefined {
  const ms = Date.parse(value);
  return Number.isNaN(ms) || new Date(ms).toISOString().replace(".000Z", "Z") !== value ? undefined : ms;
}

function compileAd(file: SourceFile): Ad | undefined {
  const data = checkFrontmatter(file, AdFrontmatter);
  const id = path.basename(file.rel, ".md");
  if (!Value.Check(KebabId, id)) {
    file.problems.push({ file: file.rel, field: "file name", expected: "a kebab-case id (the placement's id)", found: id });
  }
  // Plain text: line breaks in the file are only wrapping.
  const text = file.body.trim().replace(/\s+/g, " ");
  const bodyLine = file.bodyLineOffset + 1 + (file.body.match(/^\s*\n/)?.[0].split("\n").length ?? 1) - 1;
  if (text === "")
    file.problems.push({
      file: file.rel,
      field: "text",
      expected: "the placement's text after the frontmatter",
      found: "none",
      line: bodyLine,
    });
  else if (text.length > AD_TEXT_MAX) {
    file.problems.push({
      file: file.rel,
      field: "text",
      expected: `at most ${AD_TEXT_MAX} characters`,
      found: `${text.length}`,
      line: bodyLine,
    });
  }
  if (!data) return undefined;
  const starts = realInstant(data.starts_at);
  const expires = realInstant(data.expires_at);
  for (const [field, ms] of [
    ["starts_at", starts],
    ["expires_at", expires],
  ] as const) {
    if (ms === undefined)
      file.problems.push({
        file: file.rel,
        field,
        expected: "a real UTC time YYYY-MM-DDTHH:MM:SSZ",
        found: data[field],
        line: file.keyLines.get(field),
      });
  }
  if (starts !== undefined && expires !== undefined && expires <= starts) {
    file.problems.push({
      file: file.rel,
      field: "expires_at",
      expected: `a time after starts_at (${data.starts_at})`,
      found: data.expires_at,
      line: file.keyLines.get("expires_at"),
    });
  }
  if (text === "" || text.length > AD_TEXT_MAX) return undefined;
  return {
    id,
    sponsor: data.sponsor,
    title: data.title,
    text,
    url: data.url,
    placement: data.placement,
    starts_at: data.starts_at,
    expires_at: data.expires_at,
  };
}

/** `content/ads/`: optional; one slot shows one placement at a time, so windows in a slot may not overlap. */
function compileAds(ctx: Context): Ad[] {
  const dir = path.join(ctx.contentDir, "ads");
  if (!existsSync(dir)) return [];
  const { compiled: ads } = compileFolder(ctx, "ads", (file) => {
    const ad = compileAd(file);
    return ad && { ad, file: file.rel };
  });
  ads.sort((a, b) => a.ad.placement.localeCompare(b.ad.placement) || a.ad.starts_at.localeCompare(b.ad.starts_at));
  for (let i = 1; i < ads.length; i++) {
    const [prev, cur] = [ads[i - 1], ads[i]] as [(typeof ads)[number], (typeof ads)[number]];
    if (prev.ad.placement === cur.ad.placement && cur.ad.starts_at < prev.ad.expires_at) {
      ctx.problems.push({
        file: cur.file,
        field: "starts_at",
        expected: `a start at or after ${prev.ad.expires_at}, when ${prev.file} leaves the ${cur.ad.placement} slot (one placement per slot at a time)`,
        found: cur.ad.starts_at,
      });
    }
  }
  return ads.map((a) => a.ad);
}

// The routes a plan may name, by the short name an author writes (`exchange-flow`).
const PLAN_ROUTES = new Map(entityPaidRoutes.filter((r) => r !== entityUseCases).map((r) => [r.path.split("/").pop() as string, r]));

function compileEntityUseCase(ctx: Context, file: SourceFile): EntityUseCase | undefined {
  const data = checkFrontmatter(file, EntityUseCaseFrontmatter);
  const sections = splitSections(file, ["Plan"]);
  const steps = stepsOf(file, sections, "Plan");
  nonEmpty(file, "## Plan", steps);
  const plan: EntityUseCase["plan"] = [];
  for (const step of steps ?? []) {
    const field = `plan[step=${step.n}]`;
    const head = /^`([a-z-]+)`\s*:\s*(\S[\s\S]*)$/.exec(step.do);
    const route = head ? PLAN_ROUTES.get(head[1] as string) : undefined;
    if (!head || !route) {
      file.problems.push({
        file: file.rel,
        field,
        expected: `the step to start with a route in backticks and a colon, one of ${[...PLAN_ROUTES.keys()].map((k) => `\`${k}\``).join(", ")}, then why`,
        found: JSON.stringify(step.do.slice(0, 60)),
      });
      continue;
    }
    let body: unknown;
    try {
      body = JSON.parse(step.cmd);
    } catch {
      file.problems.push({
        file: file.rel,
        field: `${field}.example_body`,
        expected: "a ```json block holding the request body",
        found: step.cmd ? "text that is not JSON" : "no code block",
      });
      continue;
    }
    if (!route.body || !Value.Check(route.body, body) || body === null || typeof body !== "object" || Array.isArray(body)) {
      const first = route.body ? [...Value.Errors(route.body, body)][0] : undefined;
      file.problems.push({
        file: file.rel,
        field: `${field}.example_body`,
        expected: `a valid body of POST ${route.path}`,
        found: first ? `${first.path || "/"}: ${first.message}` : JSON.stringify(body),
      });
      continue;
    }
    plan.push({ step: step.n, route: route.path, why: (head[2] as string).trim(), example_body: body as Record<string, unknown> });
  }
  if (!data) return undefined;
  checkFileName(file, "id", data.id);
  checkDate(ctx, file, data.last_verified);
  const intro = sections.intro
    .map((node) => blockText(file, node))
    .join("\n\n")
    .trim();
  return { ...data, intro, plan, source: file.rel };
}

function compileEntityUseCases(ctx: Context): EntityUseCase[] {
  const { compiled, names } = compileFolder(ctx, "entity-intel", (file) => compileEntityUseCase(ctx, file));
  if (existsSync(path.join(ctx.contentDir, "entity-intel")) && names.length < ENTITY_USE_CASES_MIN) {
    ctx.problems.push({
      file: `${rel(ctx, ctx.contentDir)}/entity-intel`,
      field: "use cases",
      expected: `at least ${ENTITY_USE_CASES_MIN} use cases`,
      found: `${names.length}`,
    });
  }
  return inOrder(ctx, compiled, names.length);
}

/** Compile `content/` under `root`; throws a `ContentError` listing every problem. */
export async function compileContent(root: string, options: CompileOptions = {}): Promise<CompiledContent> {
  const ctx: Context = {
    root,
    contentDir: path.join(root, "content"),
    today: options.today ?? new Date().toISOString().slice(0, 10),
    problems: [],
  };
  const bundle = compileBundle(ctx);
  const playbooks = compilePlaybooks(ctx);
  const howto = compileHowto(ctx);
  const sops = compileSops(ctx);
  const kb = compileKb(ctx);
  const ads = compileAds(ctx);
  const entityUseCases = compileEntityUseCases(ctx);
  if (ctx.problems.length > 0 || !bundle || !howto) throw new ContentError(ctx.problems);

  const compiled: CompiledContent = {
    "x-generated": "Generated by scripts/content/compile.ts from content/; do not edit. Server-only: holds paid content.",
    bundle,
    playbooks,
    howto,
    sops,
    kb,
    ads,
    entity_use_cases: entityUseCases,
  };
  // A compiler bug, not an author's mistake: the output must match what the API promises.
  if (!Value.Check(CompiledContent, compiled)) {
    const first = [...Value.Errors(CompiledContent, compiled)][0];
    throw new Error(`content compiler produced an invalid document at ${first?.path}: ${first?.message}`);
  }

  const outFile = options.outFile === undefined ? path.join(root, COMPILED_CONTENT_FILE) : options.outFile;
  if (outFile) {
    mkdirSync(path.dirname(outFile), { recursive: true });
    const temp = `${outFile}.${process.pid}.tmp`;
    writeFileSync(temp, `${JSON.stringify(compiled, null, 2)}\n`);
    renameSync(temp, outFile);
  }
  return compiled;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const started = Date.now();
  compileContent(process.cwd())
    .then((c) => {
      const steps = c.playbooks.reduce((sum, p) => sum + p.item.steps.length, 0);
      console.log(
        `content: ${c.playbooks.length} playbooks (${steps} steps), ${c.sops.length} SOPs, ${c.kb.entries.length} KB entries in ${Date.now() - started} ms -> ${COMPILED_CONTENT_FILE}`,
      );
    })
    .catch((error: unknown) => {
      console.error(error instanceof Error ? error.message : error);
      process.exit(1);
    });
}
