/**
 * The search that matches a caller's role and task to the entity-intelligence use cases
 * (compiled from `content/entity-intel/`), with the knowledge base's term handling
 * (stop words, prefix and fuzzy matching) and BM25+ ranking, the title weighted most.
 */
import type { EntityUseCase } from "../../spec/content-schema.ts";
import { Bm25Index } from "./bm25-index.ts";
import { fuzzyFor, prefixFor, processTerm } from "./kb-index.ts";

/** Field weights: the title and roles say most about whom a use case is for. */
export const USE_CASE_BOOST = { title: 3, roles: 3, tags: 2, summary: 1.5, why: 1 } as const;

/** A ranked match. */
export interface UseCaseHit {
  useCase: EntityUseCase;
  score: number;
}

/** A search over a set of use cases. */
export class UseCaseIndex {
  readonly #index: Bm25Index<EntityUseCase, keyof typeof USE_CASE_BOOST>;
  readonly #useCases: readonly EntityUseCase[];

  constructor(useCases: readonly EntityUseCase[]) {
    this.#useCases = useCases;
    this.#index = new Bm25Index(useCases, {
      boost: USE_CASE_BOOST,
      extract: (u, field) => {
        if (field === "why") return u.plan.map((s) => s.why).join(" ");
        const value = u[field];
        return Array.isArray(value) ? value.join(" ") : value;
      },
      processTerm,
      prefix: prefixFor,
      fuzzy: fuzzyFor,
    });
  }

  /** Use cases matching `query`, best first. */
  search(query: string, limit = 4): UseCaseHit[] {
    return this.#index.search(query, limit).map(({ doc, score }) => ({ useCase: this.#useCases[doc] as EntityUseCase, score }));
  }
}
