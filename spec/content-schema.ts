/**
 * The one schema of the content in `content/`: every frontmatter field an author writes (with
 * its meaning and default), the catalogue the build holds the content to (ids, slugs, prices,
 * step and pitfall counts), and the records the compiler emits and the API
 * serves. `scripts/content/compile.ts` validates against it; `src/content/`
 * reads the compiled document through it; `spec/routes/content.ts` answers with it.
 *
 * No frontmatter field has a default: every field listed here is required and a missing,
 * unknown or malformed one fails the build with the file, the field and what was expected.
 * The only optional part of any file is free prose (a body intro), which defaults to empty.
 */
import { type Static, Type } from "@sinclair/typebox";
import { PlanStep } from "./routes/entity-intel.ts";
import { ClosedObject, Literals } from "./schemas.ts";

// ---------------------------------------------------------------------------------------
// The catalogue: what must exist.
// ---------------------------------------------------------------------------------------

/** The 13 playbook ids of the bundle; each is a file `content/playbooks/<id>.md`. */
export const PLAYBOOK_IDS = [
  "ship-x402-endpoint",
  "verifier-money-rules",
  "test-buyer",
  "x402-register",
  "fix-bug-base-rpc",
  "connect-cdp-account",
  "core-data",
  "drive-bridge",
  "install-adsense",
  "ads-size-setup",
  "nginx-route-recovery",
  "playbook-bundle-mechanism",
  "telegram-alerts-secure",
] as const;

/** Price of `POST /api/compute/playbook-bundle` in USD. */
export const BUNDLE_PRICE_USDC = 0.91 as const;

/** The `bundle_id` of the bundle, fixed by the contract. */
export const BUNDLE_ID = "playbook-bundle";

/** One SOP of the catalogue: its slug, price and the exact step and pitfall counts its file must have. */
export interface SopCatalogueEntry {
  readonly slug: string;
  readonly price_usdc: number;
  readonly steps: number;
  readonly pitfalls: number;
}

/** The SOP catalogue; the routes are generated from it and the build holds each file to it. */
export const SOP_CATALOGUE = [
  { slug: "create-x402-endpoint", price_usdc: 0.3, steps: 15, pitfalls: 10 },
  { slug: "vps-gdrive-connect", price_usdc: 0.1, steps: 9, pitfalls: 8 },
  { slug: "x402-register", price_usdc: 0.3, steps: 13, pitfalls: 10 },
  { slug: "youtube-auto-ai", price_usdc: 0.1, steps: 12, pitfalls: 9 },
] as const satisfies readonly SopCatalogueEntry[];

/**
 * The slots a sponsored placement can fill: one per free page that shows one (the home page,
 * the playbook, how-to and knowledge-base pages, the trust leaderboard). Paid answers have none.
 */
export const AD_PLACEMENTS = ["home", "playbooks", "howto", "kb", "leaderboard"] as const;

/** One placement slot. */
export type AdPlacement = (typeof AD_PLACEMENTS)[number];

/** The most characters a placement's text (the file's body) may have. */
export const AD_TEXT_MAX = 280;

/** One SOP slug. */
export type SopSlug = (typeof SOP_CATALOGUE)[number]["slug"];

/** The knowledge-base categories an entry may belong to, in listing order. */
export const KB_CATEGORIES = ["x402-protocol", "payments", "base-chain", "agents", "operations"] as const;

/** The number of knowledge-base entries. */
export const KB_ENTRIES_TOTAL = 15;

/** The fewest categories the 15 entries must spread across. */
export const KB_MIN_CATEGORIES = 4;

/** Word count bounds of a knowledge-base answer (direct answer, specifics, limits). */
export const KB_ANSWER_WORDS = { min: 150, max: 400 } as const;

/** The fewest entity-intelligence use cases `content/entity-intel/` must hold. */
export const ENTITY_USE_CASES_MIN = 8;

// ---------------------------------------------------------------------------------------
// Field types shared by the frontmatter schemas.
// ---------------------------------------------------------------------------------------

/** A kebab-case id: lower-case letters and digits separated by single hyphens. */
export const KebabId = Type.String({
  pattern: "^[a-z0-9]+(-[a-z0-9]+)*$",
  description: "a kebab-case id (lower-case letters and digits joined by single hyphens) equal to the file name",
});

/** Non-empty one-line text. */
const Text = (description: string) => Type.String({ minLength: 1, pattern: "\\S", description });

/** A calendar date `YYYY-MM-DD` (the compiler also rejects impossible and future dates). */
export const IsoDate = Type.String({
  pattern: "^\\d{4}-\\d{2}-\\d{2}$",
  description: "a date YYYY-MM-DD",
  examples: ["2026-11-20"],
});

/** A list of tags: short lower-case keywords, at least one. */
export const Tags = Type.Array(Text("a tag"), { minItems: 1, description: "a list of at least one tag (short keywords)" });

// ---------------------------------------------------------------------------------------
// Frontmatter of each kind of file (what authors write).
// ---------------------------------------------------------------------------------------

/** `content/bundle.md`: the bundle's metadata. Body: an optional short intro (default: none). */
export const BundleFrontmatter = ClosedObject({
  bundle: Text('the bundle\'s display name, e.g. "x402 Builder Playbooks"'),
  bundle_id: Type.Literal(BUNDLE_ID, { description: `exactly "${BUNDLE_ID}"` }),
  version: Type.String({ pattern: "^\\d+\\.\\d+\\.\\d+$", description: 'a version string like "1.0.0" (quoted in YAML)' }),
  vendor: Text("the vendor's name"),
  summary: Text("2-3 sentences on what the bundle gives a buyer"),
  price_usdc: Type.Literal(BUNDLE_PRICE_USDC, { description: `the number ${BUNDLE_PRICE_USDC}` }),
  how_to_buy: Type.String({
    pattern: "POST /api/compute/playbook-bundle",
    description: "one paragraph naming the exact call `POST /api/compute/playbook-bundle`",
  }),
});

/** `content/playbooks/<id>.md`: one playbook. Body: optional intro, then `## Steps`, `## Pitfalls`, `## Verify`. */
export const PlaybookFrontmatter = ClosedObject({
  /** The playbook id, equal to the file name. Required. The `PLAYBOOK_IDS` of the spec must all exist; more may be added. */
  id: KebabId,
  title: Text("the playbook's title"),
  /** Whether the owner asked for this playbook (shown in the free preview). Required. */
  requested_by_owner: Type.Boolean({ description: "true or false: whether the owner asked for this playbook" }),
  solves: Text("one sentence: the problem the playbook solves"),
  tags: Tags,
  /** Listing position in the bundle, 1 to the number of playbooks, each used once. Required. */
  order: Type.Integer({ minimum: 1, description: "an integer from 1: the position in the bundle" }),
  /** The day the steps were last run and found to work. Required. */
  last_verified: IsoDate,
});

/** The bundle pointer inside the SOP index's `all_in_option`. */
export const AllInOption = ClosedObject(
  {
    bundle: Type.Literal(BUNDLE_ID, { description: `exactly "${BUNDLE_ID}"` }),
    note: Type.String({
      pattern: "POST /api/compute/playbook-bundle",
      description: "a sentence naming `POST /api/compute/playbook-bundle` (all 13 playbooks at 0.91)",
    }),
  },
  { description: "the all-in alternative to buying SOPs one by one" },
);

/** `content/howto.md`: the SOP index metadata (frontmatter only). */
export const HowtoFrontmatter = ClosedObject({
  service: Text("the SOP service's name"),
  summary: Text("2-3 sentences on what the SOPs are"),
  /** One paragraph naming the exact calls `GET|POST /api/howto/<slug>` and that each is paid at its SOP's price. Required. */
  how_to_buy: Type.String({
    pattern: "/api/howto/",
    description: "one paragraph naming the calls `GET /api/howto/<slug>` / `POST /api/howto/<slug>`",
  }),
  all_in_option: AllInOption,
});

/** `content/sops/<slug>.md`: one SOP. Body: `## Prerequisites`, `## Steps`, `## Pitfalls`, `## Verify`, `## Files`. */
export const SopFrontmatter = ClosedObject({
  /** The slug, equal to the file name and one of `SOP_CATALOGUE`. Required. */
  slug: KebabId,
  title: Text("the SOP's title"),
  /** 2-3 sentences: what it sets up and for whom (free: shown in the index). Required. */
  summary: Text("2-3 sentences on what the SOP sets up"),
  /** Price in USD, equal to the catalogue's price for the slug. Required. */
  price_usdc: Type.Number({ exclusiveMinimum: 0, description: "the price in USD (a number, e.g. 0.3)" }),
  tags: Tags,
  /** The day the steps were last run and found to work. Required. */
  last_verified: IsoDate,
  /** Listing position, 1-4, each used once. Required. */
  order: Type.Integer({ minimum: 1, maximum: SOP_CATALOGUE.length, description: `an integer 1-${SOP_CATALOGUE.length}` }),
});

/** `content/kb/<id>.md`: one knowledge-base entry. Body: the answer in Markdown. */
export const KbFrontmatter = ClosedObject({
  id: KebabId,
  title: Text("the entry's title: a question or a topic"),
  category: Literals(KB_CATEGORIES, { description: `one of ${KB_CATEGORIES.join(", ")}` }),
  /** Keywords (searched by `kb/ask` and `kb/search`). Required, at least one. */
  tags: Tags,
  /**
   * The question as buyers word it, where their words differ from the title's (searched as
   * much as the title). Optional.
   */
  asked_as: Type.Optional(Type.Array(Text("a question as a buyer asks it"), { description: "a list of questions as buyers word them" })),
  /** The day the answer was last checked. Required. */
  last_verified: IsoDate,
});

const UTC_TIME = "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}Z$";

/**
 * `content/ads/<id>.md`: one sponsored placement, shown in its slot from `starts_at` until
 * `expires_at` (decided at request time, so none needs a rebuild to start or end). Body: the
 * placement's plain text, at most 280 characters. The folder is optional: none, no placements.
 */
export const AdFrontmatter = ClosedObject({
  /** Who pays for the placement (for a house ad: us). Required. */
  sponsor: Text("the sponsor's name"),
  title: Type.String({ minLength: 1, maxLength: 80, pattern: "\\S", description: "the link text, 1-80 characters" }),
  /**
   * Where the placement links: an https URL, or a path on this service (`/playbooks`) for a house
   * ad, which keeps the page's own https origin. http:, javascript:, data: and `//host` are refused. Required.
   */
  url: Type.String({
    pattern: "^(https://[A-Za-z0-9.-]+\\.[A-Za-z]{2,}(:\\d+)?([/?#]\\S*)?|/(?!/)\\S*)$",
    description: "an https:// URL, or a path on this service starting with a single /",
  }),
  placement: Literals(AD_PLACEMENTS, { description: `one of the slots ${AD_PLACEMENTS.join(", ")}` }),
  /** When it starts showing, UTC. Required. */
  starts_at: Type.String({ pattern: UTC_TIME, description: "a UTC time YYYY-MM-DDTHH:MM:SSZ" }),
  /** When it stops showing, UTC, after `starts_at`. Required. */
  expires_at: Type.String({ pattern: UTC_TIME, description: "a UTC time YYYY-MM-DDTHH:MM:SSZ" }),
});
/**
 * `content/entity-intel/<id>.md`: one entity-intelligence use case. Body: an optional intro,
 * then `## Plan`: an ordered list whose items start with the route in backticks and why
 * (`` `exchange-flow`: ... ``) and hold the example request body as a ```json block.
 */
export const EntityUseCaseFrontmatter = ClosedObject({
  id: KebabId,
  title: Text("the use case's title"),
  summary: Text("one or two sentences: the question the plan answers and for whom"),
  /** Who asks it (matched against a caller's `role`). Required, at least one. */
  roles: Type.Array(Text("a role"), { minItems: 1, description: "who asks this, e.g. exchange treasury team (at least one)" }),
  /** Keywords (matched against `role` and `task`). Required, at least one. */
  tags: Tags,
  /** Listing position, from 1, each used once. Required. */
  order: Type.Integer({ minimum: 1, description: "an integer from 1: the position in the listing" }),
  /** The day the plan was last checked against the routes. Required. */
  last_verified: IsoDate,
});

// ---------------------------------------------------------------------------------------
// Records the compiler emits and the API serves.
// ---------------------------------------------------------------------------------------

/** One step of a playbook or SOP. */
export const Step = ClosedObject({
  n: Type.Integer({ minimum: 1, description: "step number, from 1" }),
  do: Type.String({ description: "what to do and why (Markdown text: `code` stays in backticks)" }),
  cmd: Type.String({ description: "the exact command(s) or file content; empty when the step has none" }),
});
export type Step = Static<typeof Step>;

/** Preview item of the bundle (free). */
export const PlaybookPreviewItem = ClosedObject({
  id: Type.String({ description: "playbook id: the `topic` to buy it alone" }),
  title: Type.String(),
  requested_by_owner: Type.Boolean(),
});

/** Full item of the bundle (paid). */
export const PlaybookItem = ClosedObject({
  id: Type.String(),
  title: Type.String(),
  solves: Type.String({ description: "the problem it solves" }),
  steps: Type.Array(Step),
  pitfalls: Type.Array(Type.String(), { description: "what goes wrong and how to avoid it" }),
  verify: Type.Array(Type.String(), { description: "checks that prove it worked" }),
});

/** The bundle's metadata as compiled from `content/bundle.md`: its frontmatter and its body. */
export const BundleMeta = Type.Composite(
  [
    BundleFrontmatter,
    /** The body of `bundle.md` (Markdown), "" when there is none. */
    Type.Object({ intro: Type.String() }),
  ],
  { additionalProperties: false },
);
export type BundleMeta = Static<typeof BundleMeta>;

/** SOP record (paid). */
export const SopRecord = ClosedObject({
  slug: Type.String(),
  title: Type.String(),
  summary: Type.String(),
  prerequisites: Type.Array(Type.String()),
  steps: Type.Array(Step),
  pitfalls: Type.Array(Type.String()),
  verify: Type.Array(Type.String()),
  files: Type.Array(Type.String(), { description: "paths of the files the SOP creates or edits" }),
});

/** SOP index entry (free). */
export const SopIndexEntry = ClosedObject({
  slug: Type.String(),
  title: Type.String(),
  price_usdc: Type.Number(),
  summary: Type.String(),
  steps: Type.Integer({ description: "number of steps" }),
  pitfalls: Type.Integer({ description: "number of pitfalls" }),
  tags: Type.Array(Type.String()),
  last_verified: IsoDate,
});

/** Knowledge-base entry as listed (free). */
export const KbEntrySummary = ClosedObject({ id: Type.String(), title: Type.String(), category: Type.String() });
export type KbEntrySummary = Static<typeof KbEntrySummary>;

/** Full knowledge-base entry (paid through `kb/ask`'s `best_match`). */
export const KbEntry = ClosedObject({
  id: Type.String(),
  title: Type.String(),
  category: Type.String(),
  tags: Type.Array(Type.String()),
  /** The question as buyers word it (empty when the title says it in their words). */
  asked_as: Type.Array(Type.String()),
  answer: Type.String({ description: "the answer in Markdown" }),
  last_verified: IsoDate,
});
export type KbEntry = Static<typeof KbEntry>;

/** A category with its number of entries. */
export const KbCategoryCount = ClosedObject({
  name: Type.String({ description: "category name" }),
  count: Type.Integer({ minimum: 1, description: "entries in it" }),
});
export type KbCategoryCount = Static<typeof KbCategoryCount>;

/** A compiled playbook: what the API serves and the Markdown renditions. */
export const CompiledPlaybook = ClosedObject({
  preview: PlaybookPreviewItem,
  item: PlaybookItem,
  tags: Type.Array(Type.String()),
  order: Type.Integer(),
  last_verified: IsoDate,
  /** Source file, relative to the repository root. */
  source: Type.String(),
  /** Standalone Markdown document (title as `#`). */
  markdown: Type.String(),
  /** The same one level down (title as `##`), for the one-document bundle. */
  markdown_section: Type.String(),
});
export type CompiledPlaybook = Static<typeof CompiledPlaybook>;

/** A compiled SOP. */
export const CompiledSop = ClosedObject({
  index: SopIndexEntry,
  record: SopRecord,
  order: Type.Integer(),
  source: Type.String(),
  /** Standalone Markdown document (title as `#`). */
  markdown: Type.String(),
});
export type CompiledSop = Static<typeof CompiledSop>;

/** A compiled entity-intelligence use case: its frontmatter, its body's intro and plan, its file. */
export const EntityUseCase = Type.Composite(
  [
    EntityUseCaseFrontmatter,
    Type.Object({
      /** The body's intro (Markdown), "" when there is none. */
      intro: Type.String(),
      plan: Type.Array(PlanStep),
      source: Type.String(),
    }),
  ],
  { additionalProperties: false },
);
export type EntityUseCase = Static<typeof EntityUseCase>;

/** One sponsored placement as `GET /api/ads` serves it and the pages show it. */
export const Ad = ClosedObject({
  id: Type.String({ description: "the placement's file name under content/ads/" }),
  sponsor: Type.String(),
  title: Type.String(),
  text: Type.String({ maxLength: AD_TEXT_MAX, description: "plain text, at most 280 characters" }),
  url: Type.String({ description: 'an https URL; pages link it with rel="sponsored noopener"' }),
  placement: Literals(AD_PLACEMENTS),
  starts_at: Type.String({ description: "ISO 8601 UTC" }),
  expires_at: Type.String({ description: "ISO 8601 UTC; gone from GET /api/ads and the pages from this instant" }),
});
export type Ad = Static<typeof Ad>;

/** The whole compiled content (`.generated/content.json`, server-only). */
export const CompiledContent = ClosedObject({
  "x-generated": Type.String(),
  bundle: BundleMeta,
  /** In bundle order. */
  playbooks: Type.Array(CompiledPlaybook),
  /** The SOP index metadata, as written in `content/howto.md`. */
  howto: HowtoFrontmatter,
  /** In index order. */
  sops: Type.Array(CompiledSop),
  kb: ClosedObject({
    /** In category order, then title. */
    entries: Type.Array(KbEntry),
    /** Non-empty categories in `KB_CATEGORIES` order. */
    categories: Type.Array(KbCategoryCount),
  }),
  /** Every placement, expired ones included (which are active is decided per request), by slot, then start. */
  ads: Type.Array(Ad),
  /** In listing order. */
  entity_use_cases: Type.Array(EntityUseCase),
});
export type CompiledContent = Static<typeof CompiledContent>;
