/**
 * The structured parts of a Markdown body: sections by exact level-2 heading, steps from an
 * ordered list (first paragraph = `do`, first code block = `cmd`), bullets from a bullet list.
 * Text is cut from the author's source, so inline Markdown (`code`, links) stays as written.
 */
import type { Code, Heading, List, ListItem, Node, RootContent } from "mdast";
import { select, selectAll } from "unist-util-select";
import type { Step } from "../../spec/content-schema.ts";
import { fileLine, type SourceFile } from "./source-file.ts";

/** The source text of `node`, continuation lines de-indented to the node's own column. */
export function blockText(file: SourceFile, node: Node): string {
  const start = node.position?.start;
  const end = node.position?.end;
  if (start?.offset === undefined || end?.offset === undefined) return "";
  const indent = start.column - 1;
  const lines = file.body.slice(start.offset, end.offset).split("\n");
  return lines.map((line, i) => (i === 0 ? line : line.replace(new RegExp(`^ {0,${indent}}`), ""))).join("\n");
}

/** A paragraph as one line of Markdown (a soft line break is a space in Markdown anyway). */
function paragraphText(file: SourceFile, node: Node): string {
  return blockText(file, node)
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "")
    .join(" ");
}

/** The Markdown text of a list item: its paragraphs as lines, other blocks as written. */
function itemText(file: SourceFile, item: ListItem): string {
  return item.children
    .filter((child) => !isComment(child))
    .map((child) => (child.type === "paragraph" ? paragraphText(file, child) : blockText(file, child)))
    .join("\n\n")
    .trim();
}

function isComment(node: Node): boolean {
  return node.type === "html" && /^<!--[\s\S]*-->$/.test(((node as { value?: string }).value ?? "").trim());
}

/** The text of a heading as written, e.g. `Steps` for `## Steps`. */
function headingText(file: SourceFile, heading: Heading): string {
  const first = heading.children[0]?.position?.start.offset;
  const last = heading.children.at(-1)?.position?.end.offset;
  return first !== undefined && last !== undefined ? file.body.slice(first, last).trim() : "";
}

/** Refuse a level-1 heading of the body (the title comes from the frontmatter); true when `node` is one. */
export function refuseTitleHeading(file: SourceFile, node: RootContent, field: string): boolean {
  if (node.type !== "heading" || node.depth !== 1) return false;
  const expected = "no level-1 heading (the title comes from the frontmatter `title`)";
  file.problems.push({
    file: file.rel,
    field,
    expected,
    found: `# ${headingText(file, node)}`,
    line: fileLine(file, node),
  });
  return true;
}

/** The body split at its level-2 headings: the intro before the first, then each section's nodes. */
export interface Sections {
  intro: RootContent[];
  byName: Map<string, RootContent[]>;
}

/**
 * Split the body at level-2 headings and check them: exactly `expected`, each once, in that
 * order, and no level-1 heading (the title comes from the frontmatter).
 */
export function splitSections(file: SourceFile, expected: readonly string[]): Sections {
  const sections: Sections = { intro: [], byName: new Map() };
  const seen: string[] = [];
  let current: RootContent[] = sections.intro;
  for (const node of file.tree.children) {
    if (refuseTitleHeading(file, node, "body")) continue;
    if (node.type !== "heading" || node.depth !== 2) {
      if (!isComment(node)) current.push(node);
      continue;
    }
    const name = headingText(file, node);
    if (!expected.includes(name)) {
      file.problems.push({
        file: file.rel,
        field: "body",
        expected: `only the level-2 headings ${expected.map((h) => `\`## ${h}\``).join(", ")} (in that order)`,
        found: `\`## ${name}\``,
        line: fileLine(file, node),
      });
      current = [];
      continue;
    }
    if (sections.byName.has(name)) {
      file.problems.push({
        file: file.rel,
        field: `## ${name}`,
        expected: "this heading once",
        found: "it again",
        line: fileLine(file, node),
      });
      current = [];
      continue;
    }
    seen.push(name);
    current = [];
    sections.byName.set(name, current);
  }
  const missing = expected.filter((h) => !sections.byName.has(h));
  for (const name of missing) {
    file.problems.push({
      file: file.rel,
      field: `## ${name}`,
      expected: `a level-2 heading \`## ${name}\` with its list`,
      found: "no such heading",
    });
  }
  const inOrder = expected.filter((h) => seen.includes(h));
  if (missing.length === 0 && seen.join("\n") !== inOrder.join("\n")) {
    file.problems.push({
      file: file.rel,
      field: "body",
      expected: `the sections in the order ${expected.map((h) => `## ${h}`).join(", ")}`,
      found: seen.map((h) => `## ${h}`).join(", "),
    });
  }
  return sections;
}

/** The one list of a section, checked: exactly one list of the right kind and nothing else. */
function theList(file: SourceFile, section: string, nodes: RootContent[] | undefined, ordered: boolean): List | undefined {
  if (!nodes) return undefined;
  const kind = ordered ? "ordered list (`1.`, `2.`, ...)" : "bullet list (`-`)";
  const lists = nodes.filter((n): n is List => n.type === "list");
  const others = nodes.filter((n) => n.type !== "list");
  if (lists.length === 0) {
    file.problems.push({ file: file.rel, field: `## ${section}`, expected: `one ${kind}`, found: "no list" });
    return undefined;
  }
  let ok = true;
  const [firstOther] = others;
  if (firstOther) {
    ok = false;
    const rest = others.length - 1;
    const more = rest > 0 ? ` (and ${rest} more block${rest > 1 ? "s" : ""} after it)` : "";
    file.problems.push({
      file: file.rel,
      field: `## ${section}`,
      expected: `only one ${kind} under the heading (indent code blocks and extra paragraphs under their list item: under \`1. \` by 3 spaces, under \`10. \` by 4)`,
      found: `a ${firstOther.type === "code" ? "code block" : firstOther.type} outside the list${more}`,
      line: fileLine(file, firstOther),
    });
  }
  if (lists.length > 1) {
    ok = false;
    file.problems.push({
      file: file.rel,
      field: `## ${section}`,
      expected: `ONE ${kind}`,
      found: `${lists.length} lists (the list is broken where the second one starts: an item's content must be indented under it)`,
      line: fileLine(file, lists[1]),
    });
  }
  const list = lists[0] as List;
  if (Boolean(list.ordered) !== ordered) {
    file.problems.push({
      file: file.rel,
      field: `## ${section}`,
      expected: `a ${kind}`,
      found: ordered ? "a bullet list" : "an ordered list",
      line: fileLine(file, list),
    });
    return undefined;
  }
  if (ordered && list.start !== null && list.start !== undefined && list.start !== 1) {
    file.problems.push({
      file: file.rel,
      field: `## ${section}`,
      expected: "the ordered list to start at 1",
      found: `it starts at ${list.start}`,
      line: fileLine(file, list),
    });
  }
  return ok ? list : undefined;
}

/** The steps of a `## Steps` section (undefined when the section is missing or malformed: already reported): item = step, first paragraph = `do`, first code block = `cmd` ("" when none). */
export function stepsOf(file: SourceFile, sections: Sections, section = "Steps"): Step[] | undefined {
  const list = theList(file, section, sections.byName.get(section), true);
  if (!list) return undefined;
  return list.children.map((item, i) => {
    const n = i + 1;
    const first = item.children.find((child) => !isComment(child));
    let doText = "";
    if (first?.type !== "paragraph") {
      file.problems.push({
        file: file.rel,
        field: `steps[n=${n}].do`,
        expected: "the step's first block to be a paragraph saying what to do and why",
        found: first ? `a ${first.type}` : "an empty item",
        line: fileLine(file, item),
      });
    } else {
      doText = paragraphText(file, first);
    }
    // The first code block anywhere inside the item, in document order.
    const code = select("code", item) as Code | undefined;
    return { n, do: doText, cmd: code ? code.value : "" };
  });
}

/** The bullets of a bullet-list section, each as Markdown text. */
export function bulletsOf(file: SourceFile, sections: Sections, section: string, field: string): string[] | undefined {
  const list = theList(file, section, sections.byName.get(section), false);
  if (!list) return undefined;
  return list.children.map((item, i) => {
    const text = itemText(file, item);
    if (text === "")
      file.problems.push({
        file: file.rel,
        field: `${field}[${i + 1}]`,
        expected: "a non-empty bullet",
        found: "an empty one",
        line: fileLine(file, item),
      });
    return text;
  });
}

/** The `## Files` bullets: the path in inline code that starts each bullet. */
export function filesOf(file: SourceFile, sections: Sections, section = "Files"): string[] | undefined {
  const list = theList(file, section, sections.byName.get(section), false);
  if (!list) return undefined;
  const paths: string[] = [];
  list.children.forEach((item, i) => {
    const paragraph = item.children[0];
    const code = paragraph?.type === "paragraph" ? paragraph.children[0] : undefined;
    if (code?.type !== "inlineCode" || code.value.trim() === "") {
      file.problems.push({
        file: file.rel,
        field: `files[${i + 1}]`,
        expected: "a bullet that starts with the file path in inline code, e.g. - `/etc/rclone/rclone.conf` — what it is",
        found: JSON.stringify(itemText(file, item).slice(0, 60)),
        line: fileLine(file, item),
      });
      return;
    }
    paths.push(code.value.trim());
  });
  return paths;
}

/** The body with every heading moved `by` levels down (capped at 6), everything else exactly as written. */
export function shiftHeadings(file: SourceFile, by: number): string {
  let text = file.body;
  // Every heading at any depth of nesting, last first, so each replacement keeps the earlier offsets.
  for (const heading of (selectAll("heading", file.tree) as Heading[]).reverse()) {
    const start = heading.position?.start.offset;
    const end = heading.position?.end.offset;
    if (start === undefined || end === undefined) continue;
    const inner = headingText(file, heading);
    text = `${text.slice(0, start)}${"#".repeat(Math.min(6, heading.depth + by))} ${inner}${text.slice(end)}`;
  }
  return text.trim();
}

/** Words of a Markdown text (tokens with a letter or digit), for the answer-length rule. */
export function wordCount(markdown: string): number {
  return markdown.split(/\s+/).filter((w) => /[\p{L}\p{N}]/u.test(w)).length;
}
