/**
 * How the content compiler reports bad content: it collects every problem of every file
 * (file, field, what was expected, what was found) and fails once with all of them, so an
 * author fixes a file in one pass instead of one build per mistake.
 */

/** One problem in one content file. */
export interface ContentProblem {
  /** The file, relative to the repository root, e.g. `content/sops/x402-register.md`. */
  file: string;
  /** The frontmatter field (`price_usdc`, `all_in_option.note`) or body part (`steps[3].cmd`, `## Pitfalls`). */
  field: string;
  /** What was expected there, in words. */
  expected: string;
  /** What was found, when it helps. */
  found?: string;
  /** 1-based line in the file, when known. */
  line?: number | undefined;
}

/** One problem as a line: `content/x.md:12: steps[3].cmd: expected ...; found ...`. */
export function formatProblem(p: ContentProblem): string {
  const where = p.line ? `${p.file}:${p.line}` : p.file;
  return `${where}: ${p.field}: expected ${p.expected}${p.found !== undefined ? `; found ${p.found}` : ""}`;
}

/** The build failure: every problem of the content, one per line. */
export class ContentError extends Error {
  override name = "ContentError";
  readonly problems: readonly ContentProblem[];
  constructor(problems: readonly ContentProblem[]) {
    const count = problems.length === 1 ? "1 problem" : `${problems.length} problems`;
    super(`content: ${count} (see content/README.md for the format):\n${problems.map((p) => `  ${formatProblem(p)}`).join("\n")}`);
    this.problems = problems;
  }
}

/** A short echo of a found value for a problem message. */
export function echo(value: unknown): string {
  if (value === undefined) return "nothing";
  const text = typeof value === "string" ? JSON.stringify(value) : (JSON.stringify(value) ?? String(value));
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
