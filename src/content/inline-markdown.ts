/**
 * Inline Markdown (a summary, a prerequisite) to safe HTML for the free pages: code spans,
 * emphasis, strong and links; everything else is escaped text. Parsed with remark-parse at
 * build time, so the pages ship no Markdown parser and no client JavaScript.
 */
import type { PhrasingContent, RootContent } from "mdast";
import remarkParse from "remark-parse";
import { unified } from "unified";

const parser = unified().use(remarkParse);

/** Escape text for HTML (or SVG) content and attributes. */
export function escapeHtml(text: string): string {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;").replaceAll('"', "&quot;");
}

function phrasing(nodes: readonly (PhrasingContent | RootContent)[]): string {
  return nodes
    .map((node) => {
      switch (node.type) {
        case "inlineCode":
          return `<code>${escapeHtml(node.value)}</code>`;
        case "emphasis":
          return `<em>${phrasing(node.children)}</em>`;
        case "strong":
          return `<strong>${phrasing(node.children)}</strong>`;
        case "break":
          return "<br />";
        case "link":
          // Only web links become anchors; anything else stays as its text.
          return /^https?:\/\//.test(node.url)
            ? `<a href="${escapeHtml(node.url)}">${phrasing(node.children)}</a>`
            : phrasing(node.children);
        default:
          // Text, and any other node with a value, as escaped text; a paragraph or other parent as its children.
          return "value" in node && typeof node.value === "string"
            ? escapeHtml(node.value)
            : "children" in node
              ? phrasing(node.children)
              : "";
      }
    })
    .join("");
}

/** The HTML of one line or paragraph of inline Markdown (paragraphs joined by a space). */
export function inlineMarkdownHtml(markdown: string): string {
  return phrasing(parser.parse(markdown).children).trim();
}

/** The HTML of a short Markdown text: one `<p>` per paragraph, inline Markdown as in `inlineMarkdownHtml`. */
export function paragraphsHtml(markdown: string): string {
  return parser
    .parse(markdown)
    .children.filter((node) => node.type === "paragraph")
    .map((node) => `<p>${phrasing([node])}</p>`)
    .join("\n");
}
