/**
 * `POST /api/entity-intel/use-cases`: a role and/or task matched to a curated use case, answered
 * with its ordered plan across the entity routes.
 */
import { entityUseCases } from "../spec/routes/entity-intel.ts";
import { explained } from "../src/analytics/methodology.ts";
import { catalog } from "../src/content/catalog.ts";
import { UseCaseIndex } from "../src/content/use-cases.ts";
import { defineFunction } from "../src/context.ts";
import { InvalidRequestError, NotFoundError } from "../src/errors.ts";

/** The index of the compiled use cases (a handful: built when the module loads). */
const useCaseIndex = new UseCaseIndex(catalog.entity_use_cases);

export default defineFunction(entityUseCases, async (input, ctx) => {
  const role = input.role?.trim() || null;
  const task = input.task?.trim() || null;
  if (!role && !task) {
    throw new InvalidRequestError("Invalid request: give body.role, body.task or both.", [
      { field: "body.role", expected: "who you are, e.g. exchange treasury team (or give body.task)" },
      { field: "body.task", expected: "what you want to find out (or give body.role)" },
    ]);
  }
  const hits = useCaseIndex.search([role, task].filter(Boolean).join(" "));
  const [best, ...rest] = hits;
  if (!best) {
    const useCases = catalog.entity_use_cases.map((u) => ({ id: u.id, title: u.title, roles: u.roles }));
    throw new NotFoundError("No use case matches this role or task; the use cases and the roles they serve are listed in details.", {
      use_cases: useCases,
    });
  }
  ctx.log.debug("use case matched", { id: best.useCase.id, score: best.score });
  return {
    query: { role, task },
    matched: { id: best.useCase.id, title: best.useCase.title },
    summary: best.useCase.summary,
    plan: best.useCase.plan,
    alternatives: rest.slice(0, 3).map((h) => ({ id: h.useCase.id, title: h.useCase.title })),
    ...explained("entity-intel/use-cases"),
  };
});
