/** `POST /api/kb/ask`: the entry that answers a question, in full, with the ranked list; when none clearly does, a note saying so with the closest entries. */
import { askKb } from "../spec/routes/content.ts";
import { kbIndex, noAnswerNote } from "../src/content/kb.ts";
import { defineFunction } from "../src/context.ts";

export default defineFunction(askKb, async (input) => {
  const { matches, best } = kbIndex().ask(input.question);
  return {
    question: input.question,
    matches: matches.map(({ id, title, category }) => ({ id, title, category })),
    best_match: best,
    note: best ? null : noAnswerNote(matches),
  };
});
