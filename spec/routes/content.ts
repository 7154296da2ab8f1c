/**
 * Content routes: the playbook bundle, the how-to SOPs (4.3) and the
 * knowledge base (4.5 and `kb/ask`). Their records are defined once in
 * `spec/content-schema.ts` and served from the compiled content (`src/content/catalog.ts`).
 */
import { Type } from "@sinclair/typebox";
import {
  AD_PLACEMENTS,
  Ad,
  AllInOption,
  BUNDLE_ID,
  BUNDLE_PRICE_USDC,
  KbCategoryCount,
  KbEntry,
  KbEntrySummary,
  PLAYBOOK_IDS,
  PlaybookItem,
  PlaybookPreviewItem,
  SOP_CATALOGUE,
  SopIndexEntry,
  SopRecord,
  type SopSlug,
} from "../content-schema.ts";
import { defineRoute, pascalCase, type RouteDef } from "../route.ts";
import { ClosedObject, FREE_DOCUMENT, FREE_GET, Literals, Nullable } from "../schemas.ts";

/** `GET /api/compute/playbook-bundle`: the free preview. */
export const getPlaybookBundle = defineRoute({
  method: "GET",
  path: "/api/compute/playbook-bundle",
  operationId: "getPlaybookBundlePreview",
  summary: "Playbook bundle: free preview of every playbook",
  description:
    "Free. The bundle's name, version, vendor, summary, price and how to buy, and every playbook as id, title and whether the owner requested it. The steps, pitfalls and checks are sold by POST on the same path.",
  tags: ["playbooks", "free"],
  ...FREE_DOCUMENT,
  response: Type.Object({
    bundle: Type.String({ description: "the bundle's name" }),
    bundle_id: Type.Literal(BUNDLE_ID),
    version: Type.String({ examples: ["1.0.0"] }),
    vendor: Type.String(),
    summary: Type.String(),
    free: Type.Literal(true, { description: "this preview is free" }),
    price_usdc: Type.Literal(BUNDLE_PRICE_USDC, { description: "price of the full bundle (POST) in USD" }),
    how_to_buy: Type.String(),
    items_total: Type.Integer({ minimum: PLAYBOOK_IDS.length, description: "playbooks in the bundle (13 in the spec)" }),
    items: Type.Array(PlaybookPreviewItem),
  }),
});

/** `POST /api/compute/playbook-bundle`: the full playbooks, all or one. */
export const buyPlaybookBundle = defineRoute({
  method: "POST",
  path: "/api/compute/playbook-bundle",
  operationId: "buyPlaybookBundle",
  summary: "Playbook bundle: every playbook (or one topic) with steps, commands, pitfalls and checks",
  description:
    "Paid. Every playbook in full: what it solves, numbered steps each with what to do and the exact command, pitfalls, and checks that prove it worked. topic narrows the answer to one playbook id (an unknown id is a 404 listing the valid ids, not charged); format markdown adds the same content as one Markdown document.",
  tags: ["playbooks"],
  price: BUNDLE_PRICE_USDC,
  signInRereadDays: 30,
  body: ClosedObject({
    topic: Type.Optional(
      Type.String({ minLength: 1, description: `one playbook id (${PLAYBOOK_IDS.join(", ")}, or any added later); omit for all` }),
    ),
    format: Type.Optional(Literals(["json", "markdown"], { description: '"json" (default) or "markdown"' })),
  }),
  response: Type.Object({
    bundle: Type.String(),
    bundle_id: Type.Literal(BUNDLE_ID),
    version: Type.String(),
    items_total: Type.Integer({ minimum: PLAYBOOK_IDS.length, description: "playbooks in the bundle (13 in the spec)" }),
    items_returned: Type.Integer({ minimum: 1, description: "all of them, or 1 when a topic was given" }),
    topic_found: Nullable(Type.Boolean(), {
      description: "true when a topic was given (and found); null when none was given",
    }),
    items: Type.Array(PlaybookItem),
    markdown: Type.Optional(Type.String({ description: "the items as one Markdown document; present when format is markdown" })),
  }),
  errors: ["invalid_request", "not_found"],
  example: { input: { topic: "ship-x402-endpoint", format: "json" } },
});

/** `GET /api/howto`: the free SOP index. */
export const getHowtoIndex = defineRoute({
  method: "GET",
  path: "/api/howto",
  operationId: "getHowtoIndex",
  summary: "How-to SOPs: free index with prices, step and pitfall counts",
  description:
    "Free. The four step-by-step SOPs with title, price, summary, number of steps and pitfalls, tags and the date they were last verified, plus how to buy one and the all-in bundle option.",
  tags: ["how-to", "free"],
  ...FREE_DOCUMENT,
  response: Type.Object({
    service: Type.String(),
    summary: Type.String(),
    free: Type.Literal(true),
    sops_total: Type.Literal(SOP_CATALOGUE.length),
    sops: Type.Array(SopIndexEntry),
    how_to_buy: Type.String(),
    all_in_option: AllInOption,
  }),
});

/** The `sop` parameter: optional, and when given it must name the path's SOP. */
function sopParameter(slug: string) {
  return ClosedObject({
    sop: Type.Optional(Type.Literal(slug, { description: `optional; when given it must be "${slug}", the SOP of this path` })),
  });
}

/** The GET and POST routes of one SOP. */
function howtoRoutesOf(slug: SopSlug, price: number): { get: RouteDef; post: RouteDef } {
  const path = `/api/howto/${slug}`;
  const common = {
    path,
    summary: `How-to SOP ${slug}: full steps, commands, pitfalls, checks and files`,
    description: `Paid. The SOP ${slug} in full: prerequisites, numbered steps each with what to do and the exact command, pitfalls, checks that prove it worked, and the files it creates. GET and POST answer the same record.`,
    tags: ["how-to"],
    price,
    signInRereadDays: 30,
    response: SopRecord,
    errors: ["invalid_request"],
  } as const;
  return {
    get: defineRoute({
      ...common,
      method: "GET",
      operationId: `getHowto${pascalCase(slug)}`,
      query: sopParameter(slug),
    }),
    post: defineRoute({
      ...common,
      method: "POST",
      operationId: `postHowto${pascalCase(slug)}`,
      body: sopParameter(slug),
      example: { input: { sop: slug } },
    }),
  };
}

/** `GET` and `POST /api/howto/<slug>` for each SOP of the catalogue, priced per SOP. */
export const howtoRoutes = Object.fromEntries(SOP_CATALOGUE.map((s) => [s.slug, howtoRoutesOf(s.slug, s.price_usdc)])) as Record<
  SopSlug,
  { get: RouteDef; post: RouteDef }
>;

/** `GET /api/kb`: every entry's id, title and category. */
export const listKb = defineRoute({
  method: "GET",
  path: "/api/kb",
  operationId: "listKbEntries",
  summary: "Knowledge base: all entries (id, title, category)",
  description: "Free. The 15 knowledge-base entries by category. The answers are sold through POST /api/kb/ask.",
  tags: ["knowledge-base", "free"],
  ...FREE_DOCUMENT,
  response: Type.Object({
    entries_total: Type.Integer(),
    entries: Type.Array(KbEntrySummary),
  }),
});

/** `GET /api/kb/categories`. */
export const listKbCategories = defineRoute({
  method: "GET",
  path: "/api/kb/categories",
  operationId: "listKbCategories",
  summary: "Knowledge base: categories with entry counts",
  description: "Free. Each knowledge-base category that has entries, with how many.",
  tags: ["knowledge-base", "free"],
  ...FREE_DOCUMENT,
  response: Type.Object({
    categories_total: Type.Integer(),
    categories: Type.Array(KbCategoryCount),
  }),
});

/** `GET /api/kb/search?q=`. */
export const searchKb = defineRoute({
  method: "GET",
  path: "/api/kb/search",
  operationId: "searchKb",
  summary: "Knowledge base: search titles, tags and answers",
  description:
    "Free. Entries matching q (words, prefixes and small typos) over titles, tags and answers, most relevant first, at most 10. Lists id, title and category; the answers are sold through POST /api/kb/ask.",
  tags: ["knowledge-base", "free"],
  price: null,
  query: ClosedObject({
    q: Type.String({ minLength: 1, maxLength: 200, pattern: "\\S", description: "the search words (1-200 characters, not blank)" }),
  }),
  response: Type.Object({
    query: Type.String(),
    matches: Type.Array(KbEntrySummary, { description: "matching entries, most relevant first (at most 10)" }),
  }),
  errors: ["invalid_request"],
});

/** `POST /api/kb/ask`: the best answer to a question. */
export const askKb = defineRoute({
  method: "POST",
  path: "/api/kb/ask",
  operationId: "askKb",
  summary: "Knowledge base: answer a question from the curated entries",
  description:
    "Paid. Ranks the 15 curated entries on x402, payments, Base and operating agents against the question (BM25 with prefix and typo matching, title weighted most) and returns the full entry that answers the question, with the ranked list either way. When no entry clearly answers it, best_match is null and note says so and names the closest entries.",
  tags: ["knowledge-base"],
  price: 0.03,
  body: ClosedObject({
    question: Type.String({ minLength: 3, maxLength: 500, pattern: "\\S", description: "the question (3-500 characters)" }),
  }),
  response: Type.Object({
    question: Type.String(),
    matches: Type.Array(KbEntrySummary, { description: "the most relevant entries, best first (at most 5)" }),
    best_match: Nullable(KbEntry, {
      description: "the entry that answers the question, in full (with its answer); null when no entry clearly answers it",
    }),
    note: Nullable(Type.String(), {
      description: "when best_match is null: says that no entry clearly answers the question and names the closest entries; null otherwise",
    }),
  }),
  errors: ["invalid_request"],
  example: { input: { question: "How many decimals does USDC use in an x402 amount?" } },
});

/** `GET /api/ads`: the sponsored placements active now. */
export const listAds = defineRoute({
  method: "GET",
  path: "/api/ads",
  operationId: "listActiveAds",
  summary: "Sponsored placements active now",
  description: `Free. The sponsored placements showing at this moment, one per slot at most (slots: ${AD_PLACEMENTS.join(", ")}; one per free page), each with its sponsor, title, text (at most 280 characters), link and the window it shows in. Whether a placement is active is decided per request: one past its expires_at is gone without a rebuild. Paid answers never carry placements.`,
  tags: ["free"],
  ...FREE_GET,
  response: Type.Array(Ad),
  example: {
    output: [
      {
        id: "playbook-bundle",
        sponsor: "x402 chain data & playbooks (house ad)",
        title: "All 13 x402 builder playbooks for 0.91 USDC",
        text: "Steps with the exact commands, pitfalls and checks for shipping, pricing and listing a paid x402 endpoint on Base.",
        url: "/playbooks",
        placement: "home",
        starts_at: "2026-01-01T00:00:00Z",
        expires_at: "2027-12-31T23:59:59Z",
      },
    ],
  },
});

/** The content routes, in listing order. */
export const contentRoutes: readonly RouteDef[] = [
  getPlaybookBundle,
  buyPlaybookBundle,
  getHowtoIndex,
  ...SOP_CATALOGUE.flatMap((s) => [howtoRoutes[s.slug].get, howtoRoutes[s.slug].post]),
  listKb,
  listKbCategories,
  searchKb,
  askKb,
  listAds,
];
