/**
 * The search that matches a caller's role and task to the entity-intelligence use cases
 * (compiled from `content/entity-intel/`), with the knowledge base's term handling
 * (stop words, prefix and fuzzy matching) and MiniSearch's BM25+ ranking, the title weighted most.
 */
import MiniSearch from "minisearch";
import type { EntityUseCase } from "../../spec/content-schema.ts";
import { fieldText, fuzzyFor, KB_MAX_FUZZY, prefixFor, processTerm } from "./kb-index.ts";

/** Field weights: the title and roles say most about whom a use case is for. */
export const USE_CASE_BOOST = { title: 3, roles: 3, tags: 2, summary: 1.5, why: 1 } as const;

/** A search over a set of use cases. */
export class UseCaseIndex {
  readonly #index: MiniSearch<EntityUseCase>;
  readonly #byId: ReadonlyMap<string, EntityUseCase>;

  constructor(useCases: readonly EntityUseCase[]) {
    this.#byId = new Map(useCases.map((u) => [u.id, u]));
    this.#index = new MiniSearch<EntityUseCase>({
      fields: Object.keys(USE_CASE_BOOST),
      extractField: (u, field) => fieldText(field === "why" ? u.plan.map((s) => s.why) : u[field as keyof EntityUseCase]),
      processTerm,
      searchOptions: { boost: { ...USE_CASE_BOOST }, combineWith: "OR", prefix: prefixFor, fuzzy: fuzzyFor, maxFuzzy: KB_MAX_FUZZY },
    });
    this.#index.addAll(useCases);
  }

  /** Use cases matching `query`, best first. */
  search(query: string, limit = 4) {
    return this.#index
      .search(query)
      .slice(0, limit)
      .map(({ id, score }) => ({ useCase: this.#byId.get(id) as EntityUseCase, score }));
  }
}
