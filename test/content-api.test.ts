/**
 * The content routes through the real service: free routes answer exactly the compiled
 * records; each paid route quotes its exact price and, paid by a real x402 buyer on the
 * devnet, answers exactly the compiled records; a wrong topic, slug or `sop` fails and is
 * never charged.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { decodePaymentResponseHeader } from "@x402/core/http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CompiledContent, PLAYBOOK_IDS } from "../spec/content-schema.ts";
import type { RunningService } from "../src/server/service.ts";
import { contractOf } from "./support/price-contract.ts";
import { buyerAccount, challengeOf, payingFetch, startTestService, usdcBalance } from "./support/service.ts";

const root = path.resolve(import.meta.dirname, "..");
// What the build compiled and the service bundled (the global setup builds before any test).
const compiled = JSON.parse(readFileSync(path.join(root, ".generated/content.json"), "utf8")) as CompiledContent;

let service: RunningService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(() => service.close());

const json = { "content-type": "application/json" };
const buyer = buyerAccount(5);
const post = (body: unknown): RequestInit => ({ method: "POST", headers: json, body: JSON.stringify(body) });

async function getJson(pathname: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${service.url}${pathname}`);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** A paid call by `buyer` with the USDC it moved; `settled` tells whether a settlement receipt came back. */
async function buy(pathname: string, init: RequestInit = { method: "POST" }) {
  const before = await usdcBalance(buyer.address);
  const res = await payingFetch(buyer)(`${service.url}${pathname}`, init);
  const body = (await res.json()) as Record<string, unknown>;
  const receipt = res.headers.get("payment-response");
  const paid = before - (await usdcBalance(buyer.address));
  return { status: res.status, body, paid, settled: receipt ? decodePaymentResponseHeader(receipt).success : false };
}

describe("the playbook bundle", () => {
  it("GET is a free preview: the bundle metadata and the 13 preview items, exactly", async () => {
    const { status, body } = await getJson("/api/compute/playbook-bundle");
    expect(status).toBe(200);
    const b = compiled.bundle;
    expect(body).toEqual({
      bundle: b.bundle,
      bundle_id: "playbook-bundle",
      version: "1.0.0",
      vendor: b.vendor,
      summary: b.summary,
      free: true,
      price_usdc: 0.91,
      how_to_buy: b.how_to_buy,
      items_total: 13,
      items: compiled.playbooks.map((p) => ({ id: p.item.id, title: p.item.title, requested_by_owner: p.preview.requested_by_owner })),
    });
    expect((body.items as { id: string }[]).map((i) => i.id).sort()).toEqual([...PLAYBOOK_IDS].sort());
  });

  it("POST is quoted at exactly 910000 atomic USDC (0.91)", async () => {
    const challenge = await challengeOf(`${service.url}/api/compute/playbook-bundle`, post({}));
    expect(challenge.accepts[0]?.amount).toBe("910000");
  });

  it("POST paid with no body answers all 13 full items as JSON and settles 0.91 USDC", async () => {
    const { status, body, paid, settled } = await buy("/api/compute/playbook-bundle");
    expect(status).toBe(200);
    expect(settled).toBe(true);
    expect(paid).toBe(910_000n);
    expect(body).toEqual({
      bundle: compiled.bundle.bundle,
      bundle_id: "playbook-bundle",
      version: "1.0.0",
      items_total: 13,
      items_returned: 13,
      topic_found: null,
      items: compiled.playbooks.map((p) => p.item),
    });
    const items = body.items as { id: string; steps: { n: number; do: string; cmd: string }[] }[];
    expect(items.map((i) => i.id).sort()).toEqual([...PLAYBOOK_IDS].sort());
    for (const item of items) expect(item.steps.map((s) => s.n)).toEqual(item.steps.map((_s, i) => i + 1));
  });

  it("POST with a topic and format markdown answers that one playbook and one Markdown document", async () => {
    const one = compiled.playbooks.find((p) => p.item.id === "verifier-money-rules");
    if (!one) throw new Error("verifier-money-rules is not compiled");
    const { status, body, paid } = await buy("/api/compute/playbook-bundle", post({ topic: "verifier-money-rules", format: "markdown" }));
    expect(status).toBe(200);
    expect(paid).toBe(910_000n);
    expect(body).toMatchObject({ items_total: 13, items_returned: 1, topic_found: true, items: [one.item] });
    const markdown = body.markdown as string;
    expect(markdown.startsWith(`# ${compiled.bundle.bundle} 1.0.0\n`)).toBe(true);
    expect(markdown).toContain("This document holds 1 of 13 playbooks.");
    expect(markdown).toContain(one.markdown_section);
    expect(markdown.match(/^## /gm)).toHaveLength(1);
    for (const step of one.item.steps) {
      expect(markdown).toContain(step.do.slice(0, 40));
      if (step.cmd) expect(markdown).toContain(step.cmd.split("\n")[0]);
    }
  });

  it("POST with format markdown and no topic holds all 13 playbooks in bundle order", async () => {
    const { status, body } = await buy("/api/compute/playbook-bundle", post({ format: "markdown" }));
    expect(status).toBe(200);
    const markdown = body.markdown as string;
    const titles = [...markdown.matchAll(/^## (.+)$/gm)].map((m) => m[1]);
    expect(titles).toEqual(compiled.playbooks.map((p) => p.item.title));
    expect(markdown).toContain("This document holds all 13 playbooks.");
  });

  it("POST with format json has no markdown field", async () => {
    const { body } = await buy("/api/compute/playbook-bundle", post({ topic: "core-data", format: "json" }));
    expect(body.markdown).toBeUndefined();
    expect(body.items_returned).toBe(1);
    expect(body.topic_found).toBe(true);
  });

  it("an unknown topic is a 404 listing the valid ids, and the buyer is not charged", async () => {
    const { status, body, paid, settled } = await buy("/api/compute/playbook-bundle", post({ topic: "no-such-playbook" }));
    expect(status).toBe(404);
    expect(paid).toBe(0n);
    expect(settled).toBe(false);
    expect(body).toEqual({
      error: {
        code: "not_found",
        message: 'No playbook "no-such-playbook" in the bundle; topic must be one of the listed ids. You were not charged.',
        details: { field: "topic", topic: "no-such-playbook", valid_topics: compiled.playbooks.map((p) => p.item.id) },
        docs: "/errors#not_found",
      },
    });
  });

  it("a bad format is a 400 naming body.format, not charged", async () => {
    const { status, body, paid } = await buy("/api/compute/playbook-bundle", post({ format: "pdf" }));
    expect(status).toBe(400);
    expect(paid).toBe(0n);
    const fields = (body.error as { details: { fields: { field: string; expected: string }[] } }).details.fields;
    expect(fields).toEqual([{ field: "body.format", expected: '"json" (default) or "markdown"', received: "pdf" }]);
  });
});

describe("the how-to SOPs", () => {
  it("GET /api/howto is the free index document with each SOP's price and exact counts", async () => {
    const { status, body } = await getJson("/api/howto");
    expect(status).toBe(200);
    expect(body).toEqual({
      service: compiled.howto.service,
      summary: compiled.howto.summary,
      free: true,
      sops_total: 4,
      sops: compiled.sops.map((s) => s.index),
      how_to_buy: compiled.howto.how_to_buy,
      all_in_option: compiled.howto.all_in_option,
    });
    expect(
      (body.sops as { slug: string; price_usdc: number; steps: number; pitfalls: number }[]).map((s) => [
        s.slug,
        s.price_usdc,
        s.steps,
        s.pitfalls,
      ]),
    ).toEqual([
      ["create-x402-endpoint", 0.3, 15, 10],
      ["vps-gdrive-connect", 0.1, 9, 8],
      ["x402-register", 0.3, 13, 10],
      ["youtube-auto-ai", 0.1, 12, 9],
    ]);
  });

  // Prices from the price contract (test/support/price-contract.ts) and counts written out here,
  // not SOP_CATALOGUE, which the routes, their prices and the build's checks are made from.
  describe.each([
    ["create-x402-endpoint", 15, 10],
    ["vps-gdrive-connect", 9, 8],
    ["x402-register", 13, 10],
    ["youtube-auto-ai", 12, 9],
  ] as const)("%s", (slug, steps, pitfalls) => {
    const atomic = contractOf("GET", `/api/howto/${slug}`).atomic as string;
    const atomicPost = contractOf("POST", `/api/howto/${slug}`).atomic as string;
    const record = () => {
      const sop = compiled.sops.find((s) => s.index.slug === slug);
      if (!sop) throw new Error(`${slug} is not compiled`);
      return sop.record;
    };

    it(`GET and POST are quoted at exactly ${atomic} atomic USDC`, async () => {
      expect((await challengeOf(`${service.url}/api/howto/${slug}`)).accepts[0]?.amount).toBe(atomic);
      expect((await challengeOf(`${service.url}/api/howto/${slug}`, post({ sop: slug }))).accepts[0]?.amount).toBe(atomicPost);
    });

    it(`GET paid answers the compiled record with ${steps} steps and ${pitfalls} pitfalls`, async () => {
      const { status, body, paid } = await buy(`/api/howto/${slug}`, { method: "GET" });
      expect(status).toBe(200);
      expect(paid).toBe(BigInt(atomic));
      expect(body).toEqual(record());
      expect(Object.keys(body)).toEqual(["slug", "title", "summary", "prerequisites", "steps", "pitfalls", "verify", "files"]);
      expect(body.steps).toHaveLength(steps);
      expect(body.pitfalls).toHaveLength(pitfalls);
    });

    it("POST with the matching sop and GET with ?sop= answer the same record", async () => {
      const viaPost = await buy(`/api/howto/${slug}`, post({ sop: slug }));
      expect(viaPost.status).toBe(200);
      expect(viaPost.body).toEqual(record());
      const viaQuery = await buy(`/api/howto/${slug}?sop=${slug}`, { method: "GET" });
      expect(viaQuery.status).toBe(200);
      expect(viaQuery.body).toEqual(record());
    });
  });

  it("a sop that disagrees with the path is a 400 naming the field, not charged", async () => {
    const viaBody = await buy("/api/howto/x402-register", post({ sop: "youtube-auto-ai" }));
    expect(viaBody.status).toBe(400);
    expect(viaBody.paid).toBe(0n);
    expect((viaBody.body.error as { details: unknown }).details).toEqual({
      fields: [
        {
          field: "body.sop",
          expected: 'optional; when given it must be "x402-register", the SOP of this path',
          received: "youtube-auto-ai",
        },
      ],
    });
    const viaQuery = await buy("/api/howto/vps-gdrive-connect?sop=x402-register", { method: "GET" });
    expect(viaQuery.status).toBe(400);
    expect(viaQuery.paid).toBe(0n);
    expect((viaQuery.body.error as { details: { fields: { field: string }[] } }).details.fields[0]?.field).toBe("query.sop");
  });

  it("an unknown slug is a 404 and asks for no payment", async () => {
    const res = await fetch(`${service.url}/api/howto/no-such-sop`);
    expect(res.status).toBe(404);
    expect(res.headers.get("payment-required")).toBeNull();
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("not_found");
  });
});

describe("the knowledge base", () => {
  it("GET /api/kb lists all 15 entries as id, title and category", async () => {
    const { status, body } = await getJson("/api/kb");
    expect(status).toBe(200);
    expect(body).toEqual({ entries_total: 15, entries: compiled.kb.entries.map(({ id, title, category }) => ({ id, title, category })) });
  });

  it("GET /api/kb/categories lists the categories with counts summing to 15", async () => {
    const { status, body } = await getJson("/api/kb/categories");
    expect(status).toBe(200);
    expect(body).toEqual({ categories_total: compiled.kb.categories.length, categories: compiled.kb.categories });
    const counts = new Map<string, number>();
    for (const e of compiled.kb.entries) counts.set(e.category, (counts.get(e.category) ?? 0) + 1);
    expect(body.categories).toEqual([...counts].map(([name, count]) => ({ name, count })));
    expect((body.categories as { count: number }[]).reduce((n, c) => n + c.count, 0)).toBe(15);
  });

  it("GET /api/kb/search needs q: missing, empty or blank is a 400 naming query.q", async () => {
    for (const query of ["", "?q=", "?q=%20%20"]) {
      const { status, body } = await getJson(`/api/kb/search${query}`);
      expect(status).toBe(400);
      const fields = (body.error as { details: { fields: { field: string }[] } }).details.fields;
      expect(fields.map((f) => f.field)).toEqual(["query.q"]);
    }
  });

  it("GET /api/kb/search lists only id, title and category of matching entries", async () => {
    const first = compiled.kb.entries[0];
    if (!first) throw new Error("no KB entries");
    const { status, body } = await getJson(`/api/kb/search?q=${encodeURIComponent(first.title)}`);
    expect(status).toBe(200);
    expect(body.query).toBe(first.title);
    const matches = body.matches as Record<string, unknown>[];
    expect(matches[0]).toEqual({ id: first.id, title: first.title, category: first.category });
    for (const m of matches) expect(Object.keys(m)).toEqual(["id", "title", "category"]);
  });

  it("a search that matches nothing is an empty list", async () => {
    const { status, body } = await getJson("/api/kb/search?q=zzqxv");
    expect(status).toBe(200);
    expect(body).toEqual({ query: "zzqxv", matches: [] });
  });

  it("POST /api/kb/ask is quoted at exactly 30000 atomic USDC (0.03)", async () => {
    const challenge = await challengeOf(`${service.url}/api/kb/ask`, post({ question: "what?" }));
    expect(challenge.accepts[0]?.amount).toBe("30000");
  });

  it("POST /api/kb/ask paid answers the ranked matches and the best entry in full", async () => {
    const first = compiled.kb.entries[0];
    if (!first) throw new Error("no KB entries");
    const { status, body, paid } = await buy("/api/kb/ask", post({ question: first.title }));
    expect(status).toBe(200);
    expect(paid).toBe(30_000n);
    expect(body.question).toBe(first.title);
    expect((body.matches as { id: string }[])[0]).toEqual({ id: first.id, title: first.title, category: first.category });
    expect((body.matches as unknown[]).length).toBeLessThanOrEqual(5);
    expect(body.best_match).toEqual(first);
    expect(body.note).toBeNull();
  });

  it("POST /api/kb/ask ranks a real question worded unlike any title and answers the right entry", async () => {
    const question = "my log query over a million blocks keeps timing out on the public RPC";
    const { status, body } = await buy("/api/kb/ask", post({ question }));
    expect(status).toBe(200);
    expect((body.matches as { id: string }[])[0]?.id).toBe("base-getlogs-range-limits");
    expect(body.best_match).toEqual(compiled.kb.entries.find((e) => e.id === "base-getlogs-range-limits"));
  });

  it("POST /api/kb/ask with a question that matches nothing answers no matches and best_match null", async () => {
    const { status, body } = await buy("/api/kb/ask", post({ question: "zzqxv wqpzt" }));
    expect(status).toBe(200);
    expect(body).toEqual({
      question: "zzqxv wqpzt",
      matches: [],
      best_match: null,
      note: "No entry of the knowledge base answers this. Its 15 entries cover x402 payments, USDC and Base, and running paid agents: GET /api/kb lists them.",
    });
  });

  it("POST /api/kb/ask with a question no entry answers says so and names the closest entries", async () => {
    const question = "how do I stake ETH with Lido";
    const { status, body, paid } = await buy("/api/kb/ask", post({ question }));
    expect(status).toBe(200);
    expect(paid).toBe(30_000n);
    expect(body.best_match).toBeNull();
    const closest = (body.matches as { id: string; title: string }[]).slice(0, 3);
    expect(closest.map((m) => m.id)).toEqual(["who-pays-gas-x402", "base-getlogs-range-limits", "base-block-time-finality"]);
    expect(body.note).toBe(
      `No entry clearly answers this question. The closest are ${closest.map((m) => `“${m.title}” (${m.id})`).join(", ")}; ask again in the words of the one you mean.`,
    );
  });

  it("POST /api/kb/ask with a question under 3 characters is a 400, not charged", async () => {
    const { status, body, paid } = await buy("/api/kb/ask", post({ question: "hi" }));
    expect(status).toBe(400);
    expect(paid).toBe(0n);
    expect((body.error as { details: { fields: { field: string }[] } }).details.fields[0]?.field).toBe("body.question");
  });
});
