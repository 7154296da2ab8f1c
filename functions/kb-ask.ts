/** `POST /api/kb/ask`: the entries ranked for a question and the best one in full when the match is confident. */
import { askKb } from "../spec/routes/content.ts";
import { kbIndex } from "../src/content/kb.ts";
import { defineFunction } from "../src/context.ts";

export default defineFunction(askKb, async (input) => {
  const { matches, best } = kbIndex().ask(input.question);
  return {
    question: input.question,
    matches: matches.map(({ id, title, category }) => ({ id, title, category })),
    best_match: best,
  };
});
