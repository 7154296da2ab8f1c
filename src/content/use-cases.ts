/**
 * The search that matches a caller's role and task to the entity-intelligence use cases
 * (compiled from `content/entity-intel/`), with the knowledge base's term handling
 * (stop words, prefix and fuzzy matching) and BM25+ ranking, the title weighted most.
 */
import MiniSearch from "minisearch";
import type { EntityUseCase } from "../../spec/content-schema.ts";
import { processTerm } from "./kb-index.ts";

/** Field weights: the title and roles say most about whom a use case is for. */
export const USE_CASE_BOOST = { title: 3, roles: 3, tags: 2, summary: 1.5, why: 1 } as const;

/** A ranked match. */
export interface UseCaseHit {
  useCase: EntityUseCase;
  score: number;
}

/** A search over a set of use cases. */
export class UseCaseIndex {
  readonly #search: MiniSearch<EntityUseCase>;
  readonly #byId: Map<string, EntityUseCase>;

  constructor(useCases: readonly EntityUseCase[]) {
    this.#byId = new Map(useCases.map((u) => [u.id, u]));
    this.#search = new MiniSearch<EntityUseCase>({
      fields: ["title", "roles", "tags", "summary", "why"],
      extractField: (u, field) => {
        if (field === "why") return u.plan.map((s) => s.why).join(" ");
        if (field === "id") return u.id;
        const value = u[field as keyof EntityUseCase];
        return Array.isArray(value) ? value.join(" ") : String(value ?? "");
      },
      processTerm,
      searchOptions: {
        boost: { ...USE_CASE_BOOST },
        combineWith: "OR",
        prefix: (term) => term.length >= 3,
        fuzzy: (term) => (term.length >= 5 ? 0.2 : false),
      },
    });
    this.#search.addAll(useCases);
  }

  /** Use cases matching `query`, best first. */
  search(query: string, limit = 4): UseCaseHit[] {
    return this.#search
      .search(query)
      .slice(0, limit)
      .map((r) => ({ useCase: this.#byId.get(String(r.id)) as EntityUseCase, score: r.score }));
  }
}
