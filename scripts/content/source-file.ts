/**
 * Reading one content file: its YAML frontmatter (gray-matter), checked field by field
 * against its schema in `spec/content-schema.ts`, and its Markdown body parsed with unified +
 * remark-parse, with line numbers that point into the file an author edits.
 */
import { readFileSync } from "node:fs";
import type { Static, TObject, TSchema } from "@sinclair/typebox";
import matter from "gray-matter";
import { CORE_SCHEMA, load } from "js-yaml";
import type { Root } from "mdast";
import remarkParse from "remark-parse";
import { unified } from "unified";
import { checkerFor, schemaAt } from "../../src/validate.ts";
import { type ContentProblem, echo } from "./problems.ts";

/** One parsed content file. */
export interface SourceFile {
  /** Path relative to the repository root, as problems name it. */
  rel: string;
  /** The raw frontmatter values (dates as the author wrote them). */
  data: Record<string, unknown>;
  /** The Markdown after the frontmatter. */
  body: string;
  /** The body's syntax tree (positions relative to `body`). */
  tree: Root;
  /** Lines before the body, to turn body positions into file lines. */
  bodyLineOffset: number;
  /** Frontmatter keys and the file line they are on. */
  keyLines: Map<string, number>;
  /**
   * Whether a frontmatter block was found and parsed. When it was not, that one problem is
   * reported and the fields are not checked: each would be "missing" although the author wrote
   * it, burying the one real mistake under a line per field.
   */
  frontmatterRead: boolean;
  problems: ContentProblem[];
}

const parser = unified().use(remarkParse);

/**
 * YAML's core schema, without the timestamps gray-matter's default schema adds: those turn an
 * unquoted `2026-11-20` into a Date and silently roll an impossible day such as `2026-02-30` over
 * into March; as text, the schema and the date check judge the date as the author wrote it.
 */
const engines = { yaml: (text: string) => load(text, { schema: CORE_SCHEMA }) as object };

/** Read and parse `abs`; a missing `---` fence or a YAML error becomes one problem (the file then has empty data). */
export function readSourceFile(abs: string, rel: string, problems: ContentProblem[]): SourceFile {
  const text = readFileSync(abs, "utf8").replace(/\r\n?/g, "\n");
  let data: Record<string, unknown> = {};
  let body = text;
  let rawMatter = "";
  let frontmatterRead = true;
  // gray-matter reads a file without its opening `---` (or without its closing one) as all body
  // (or all frontmatter); either way every field would then be reported missing or malformed.
  const opened = /^\uFEFF?---(?!-)/.test(text);
  if (!opened || !text.slice(3).includes("\n---")) {
    frontmatterRead = false;
    problems.push({
      file: rel,
      field: "frontmatter",
      expected: opened
        ? "a closing `---` line after the YAML frontmatter"
        : "the file to start with a `---` line, then the YAML frontmatter, then a closing `---` line",
      found: opened ? "none" : echo(text.split("\n", 1)[0]),
      line: 1,
    });
  }
  if (frontmatterRead) {
    try {
      // An options object turns off gray-matter's cache, which would hand back the same object for equal texts.
      const parsed = matter(text, { engines });
      data = parsed.data as Record<string, unknown>;
      body = parsed.content;
      rawMatter = parsed.matter;
    } catch (error) {
      frontmatterRead = false;
      const mark = (error as { mark?: { line?: number } }).mark;
      problems.push({
        file: rel,
        field: "frontmatter",
        expected: "valid YAML between the two `---` lines",
        found: (error as Error).message.split("\n")[0],
        ...(mark?.line !== undefined ? { line: mark.line + 1 } : {}),
      });
    }
  }
  const bodyLineOffset = text.slice(0, text.length - body.length).split("\n").length - 1;
  const keyLines = new Map<string, number>();
  rawMatter.split("\n").forEach((line, i) => {
    const key = /^([A-Za-z0-9_-]+)\s*:/.exec(line)?.[1];
    // rawMatter starts right after the opening `---`, so its line i is file line i + 1.
    if (key && !keyLines.has(key)) keyLines.set(key, i + 1);
  });
  return { rel, data, body, tree: parser.parse(body) as Root, bodyLineOffset, keyLines, frontmatterRead, problems };
}

/** The file line of `node` (a node of the body), if it has a position. */
export function fileLine(file: SourceFile, node: { position?: { start: { line: number } } } | undefined): number | undefined {
  const bodyLine = node?.position?.start.line;
  return bodyLine === undefined ? undefined : bodyLine + file.bodyLineOffset;
}

/** What a field schema expects, in words (every content field schema carries a description). */
function expectedOf(schema: TSchema): string {
  if (typeof schema.description === "string") return schema.description;
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  return schema.type === "object" ? "a mapping" : `a ${schema.type}`;
}

/**
 * Check `file`'s frontmatter against `schema`: every missing, unknown or malformed field is a
 * problem naming the field and what was expected. Returns the typed data when it is valid.
 */
export function checkFrontmatter<S extends TObject>(file: SourceFile, schema: S): Static<S> | undefined {
  if (!file.frontmatterRead) return undefined;
  const check = checkerFor(schema);
  if (check.Check(file.data)) return file.data as Static<S>;
  const seen = new Set<string>();
  const allowed = (at: string) => Object.keys((schemaAt(schema, at) ?? schema).properties ?? {}).join(", ");
  for (const error of check.Errors(file.data)) {
    const field = error.path.slice(1).replaceAll("/", ".") || "frontmatter";
    if (seen.has(field)) continue;
    seen.add(field);
    const fieldSchema = schemaAt(schema, error.path);
    const line = file.keyLines.get(error.path.split("/")[1] ?? "");
    const parent = error.path.split("/").slice(0, -1).join("/");
    if (fieldSchema === undefined) {
      file.problems.push({ file: file.rel, field, expected: `no such field (allowed: ${allowed(parent)})`, line });
      continue;
    }
    const value = error.value;
    file.problems.push({
      file: file.rel,
      field,
      expected: value === undefined ? `this required field: ${expectedOf(fieldSchema)}` : expectedOf(fieldSchema),
      ...(value === undefined ? {} : { found: echo(value) }),
      line,
    });
  }
  return undefined;
}
