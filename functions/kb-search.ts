/** `GET /api/kb/search?q=`: matching knowledge-base entries, best first (free: ids, titles, categories only). */
import { searchKb } from "../spec/routes/content.ts";
import { kbIndex } from "../src/content/kb.ts";
import { defineFunction } from "../src/context.ts";

export default defineFunction(searchKb, async (input) => ({
  query: input.q,
  matches: kbIndex()
    .search(input.q)
    .map(({ id, title, category }) => ({ id, title, category })),
}));
