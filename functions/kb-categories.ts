/** `GET /api/kb/categories`: the knowledge-base categories with their entry counts (free). */
import { listKbCategories } from "../spec/routes/content.ts";
import { catalog } from "../src/content/catalog.ts";
import { defineFunction } from "../src/context.ts";

export default defineFunction(listKbCategories, async () => ({
  categories_total: catalog.kb.categories.length,
  categories: catalog.kb.categories,
}));
