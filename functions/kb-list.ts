/** `GET /api/kb`: every knowledge-base entry's id, title and category (free). */
import { listKb } from "../spec/routes/content.ts";
import { catalog } from "../src/content/catalog.ts";
import { defineFunction } from "../src/context.ts";

export default defineFunction(listKb, async () => ({
  entries_total: catalog.kb.entries.length,
  entries: catalog.kb.entries.map(({ id, title, category }) => ({ id, title, category })),
}));
