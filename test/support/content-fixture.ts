/**
 * Test support: a small, complete and valid content tree (13 playbooks, 4 SOPs with the
 * catalogue's counts, 15 KB entries, 8 entity use cases) written into a folder, for compiler tests that break it
 * one way at a time. Fixture text only: never real content.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { KB_CATEGORIES, PLAYBOOK_IDS, SOP_CATALOGUE } from "../../spec/content-schema.ts";

/** `n` distinct words starting with `seed`. */
export const words = (n: number, seed: string) => Array.from({ length: n }, (_v, i) => `${seed}${i}`).join(" ");

/** A valid playbook file. */
export function playbook(id: string, order: number): string {
  return `---
id: ${id}
title: Title of ${id}
requested_by_owner: ${order % 2 === 0}
solves: It solves ${id}.
tags: [fixture, ${id}]
order: ${order}
last_verified: 2026-11-20
---

Intro paragraph for ${id}.

## Steps

1. Install the \`tool\` for ${id}
   because it is needed.

   \`\`\`bash
   npm install tool-${id}
   \`\`\`

   More explanation that only the Markdown rendition carries.

2. Think about it; no command here.

## Pitfalls

- Pitfall one of ${id}.
- Pitfall two with \`code\`.

## Verify

- Run \`tool --version\`; expect \`1.0.0\`.
`;
}

/** A valid SOP file. */
export function sop(slug: string, order: number, price: number, steps: number, pitfalls: number): string {
  // Content under "10. " starts at column 4, under "1. " at column 3.
  const step = (n: number) => {
    const pad = " ".repeat(`${n}. `.length);
    return `${n}. Do step ${n} of ${slug}.\n\n${pad}\`\`\`sh\n${pad}echo ${n}\n${pad}\`\`\`\n`;
  };
  const stepList = Array.from({ length: steps }, (_v, i) => step(i + 1)).join("\n");
  const pitfallList = Array.from({ length: pitfalls }, (_v, i) => `- Pitfall ${i + 1}.`).join("\n");
  return `---
slug: ${slug}
title: SOP ${slug}
summary: What ${slug} sets up. For whom.
price_usdc: ${price}
tags: [fixture]
last_verified: 2026-11-20
order: ${order}
---

## Prerequisites

- A VPS.

## Steps

${stepList}
## Pitfalls

${pitfallList}

## Verify

- It works.

## Files

- \`/etc/${slug}.conf\` — the config
- \`~/bin/${slug}.sh\`
`;
}

/** A valid KB entry file. */
export function kb(i: number): string {
  const category = KB_CATEGORIES[i % KB_CATEGORIES.length];
  return `---
id: entry-${i}
title: Question ${i}?
category: ${category}
tags: [fixture]
last_verified: 2026-11-20
---

${words(160, `w${i}x`)}
`;
}

/** A valid entity-intelligence use case file. */
export function entityUseCase(id: string, order: number): string {
  return `---
id: ${id}
title: Use case ${id}
summary: What ${id} finds out.
roles: [fixture analyst]
tags: [fixture]
order: ${order}
last_verified: 2026-11-20
---

Intro of ${id}.

## Plan

1. \`exchange-flow\`: See the flows of ${id}.

   \`\`\`json
   { "token": "USDC", "blocks": 1800 }
   \`\`\`

2. \`trace\`: Follow the money.

   \`\`\`json
   { "from": "0x4200000000000000000000000000000000000006", "max_hops": 3 }
   \`\`\`
`;
}

/** Write the whole fixture tree into `dir/content`. */
export function writeContentFixture(dir: string): void {
  mkdirSync(path.join(dir, "content/playbooks"), { recursive: true });
  mkdirSync(path.join(dir, "content/sops"), { recursive: true });
  mkdirSync(path.join(dir, "content/kb"), { recursive: true });
  const w = (rel: string, text: string) => writeFileSync(path.join(dir, "content", rel), text);
  w(
    "bundle.md",
    `---
bundle: Fixture Playbooks
bundle_id: playbook-bundle
version: "1.0.0"
vendor: Fixture Vendor
summary: Fixture summary.
price_usdc: 0.91
how_to_buy: Call POST /api/compute/playbook-bundle with x402.
---
`,
  );
  w(
    "howto.md",
    `---
service: Fixture SOPs
summary: Fixture SOP summary.
how_to_buy: Call GET /api/howto/<slug> or POST /api/howto/<slug>.
all_in_option:
  bundle: playbook-bundle
  note: Or POST /api/compute/playbook-bundle for all 13 at 0.91.
---
`,
  );
  PLAYBOOK_IDS.forEach((id, i) => {
    w(`playbooks/${id}.md`, playbook(id, i + 1));
  });
  SOP_CATALOGUE.forEach((s, i) => {
    w(`sops/${s.slug}.md`, sop(s.slug, i + 1, s.price_usdc, s.steps, s.pitfalls));
  });
  for (let i = 0; i < 15; i++) w(`kb/entry-${i}.md`, kb(i));
  mkdirSync(path.join(dir, "content/entity-intel"), { recursive: true });
  for (let i = 1; i <= 8; i++) w(`entity-intel/use-case-${i}.md`, entityUseCase(`use-case-${i}`, i));
}
