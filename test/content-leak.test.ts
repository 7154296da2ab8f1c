/**
 * Paid content never leaks: the text of every paid step (`do` and `cmd` of each playbook and
 * SOP step), every paid pitfall and check, and every KB answer is absent from every file in
 * `dist/client` and from every free response (free routes, searches, discovery documents,
 * pages, 402 challenges). The scan proves it can fail: the same needles are found in the
 * compiled content the server reads, where they must be, and in an escaped copy planted in a haystack.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { decodePaymentRequiredHeader } from "@x402/core/http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CompiledContent } from "../spec/content-schema.ts";
import { contentRoutes } from "../spec/routes/content.ts";
import type { RunningService } from "../src/server/service.ts";
import { startTestService } from "./support/service.ts";

const root = path.resolve(import.meta.dirname, "..");
const compiled = JSON.parse(readFileSync(path.join(root, ".generated/content.json"), "utf8")) as CompiledContent;

/** Shorter strings (`npm test`, `sudo nginx -t`) can appear legitimately in free text, so only these are scanned. */
const MIN_NEEDLE = 24;

/** Whitespace-insensitive, entity-decoded text, so reflowed or HTML-escaped copies still match. */
function normalise(text: string): string {
  return text
    .replaceAll("&lt;", "<")
    .replaceAll("&gt;", ">")
    .replaceAll("&quot;", '"')
    .replaceAll("&#39;", "'")
    .replaceAll("&#x27;", "'")
    .replaceAll("&amp;", "&")
    .replace(/\s+/g, " ")
    .trim();
}

interface Needle {
  what: string;
  text: string;
}

function paidNeedles(): Needle[] {
  const needles: Needle[] = [];
  const add = (what: string, text: string) => {
    const t = normalise(text);
    if (t.length >= MIN_NEEDLE) needles.push({ what, text: t });
  };
  for (const p of compiled.playbooks) {
    for (const s of p.item.steps) {
      add(`playbook ${p.item.id} step ${s.n} do`, s.do);
      add(`playbook ${p.item.id} step ${s.n} cmd`, s.cmd);
    }
    for (const [i, t] of p.item.pitfalls.entries()) add(`playbook ${p.item.id} pitfall ${i + 1}`, t);
    for (const [i, t] of p.item.verify.entries()) add(`playbook ${p.item.id} verify ${i + 1}`, t);
  }
  for (const s of compiled.sops) {
    for (const step of s.record.steps) {
      add(`SOP ${s.index.slug} step ${step.n} do`, step.do);
      add(`SOP ${s.index.slug} step ${step.n} cmd`, step.cmd);
    }
    for (const [i, t] of s.record.pitfalls.entries()) add(`SOP ${s.index.slug} pitfall ${i + 1}`, t);
    for (const [i, t] of s.record.verify.entries()) add(`SOP ${s.index.slug} verify ${i + 1}`, t);
  }
  for (const e of compiled.kb.entries) {
    add(`KB ${e.id} answer`, e.answer);
    // Each paragraph too: a partial leak of an answer is still a leak.
    for (const [i, para] of e.answer.split(/\n\s*\n/).entries()) add(`KB ${e.id} answer paragraph ${i + 1}`, para);
  }
  return needles;
}

const needles = paidNeedles();

/** The needles found in `haystack`. */
function leaksIn(haystack: string): string[] {
  const text = normalise(haystack);
  return needles.filter((n) => text.includes(n.text)).map((n) => n.what);
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? filesUnder(full) : [full];
  });
}

/** Every string inside a JSON value, one per line (JSON escapes would hide multi-line text). */
function jsonStrings(value: unknown): string {
  if (typeof value === "string") return value;
  if (Array.isArray(value)) return value.map(jsonStrings).join("\n");
  if (value && typeof value === "object") return Object.values(value).map(jsonStrings).join("\n");
  return "";
}

describe("the paid-content leak scan", () => {
  it("has needles from every paid playbook, SOP and KB entry", () => {
    const count = (prefix: string) => needles.filter((n) => n.what.startsWith(prefix)).length;
    for (const p of compiled.playbooks) expect(count(`playbook ${p.item.id} step`), p.item.id).toBeGreaterThan(0);
    for (const s of compiled.sops) expect(count(`SOP ${s.index.slug} step`), s.index.slug).toBeGreaterThanOrEqual(s.index.steps);
    for (const e of compiled.kb.entries) expect(count(`KB ${e.id} answer`), e.id).toBeGreaterThan(1);
  });

  it("finds a planted, HTML-escaped and reflowed copy of a paid step (it can fail)", () => {
    const step = compiled.sops[0]?.record.steps.find((s) => s.do.length >= MIN_NEEDLE) ?? compiled.playbooks[0]?.item.steps[0];
    if (!step) throw new Error("no step to plant");
    const planted = `<p>${step.do.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(" ", "\n  ")}</p>`;
    expect(leaksIn(`<html><body>${planted}</body></html>`).length).toBeGreaterThan(0);
  });

  it("finds the paid text in .generated/content.json, where the server reads it (the needles are the real compiled text)", () => {
    // The server bundle keeps the service's modules external: the catalog reads the compiled file from disk.
    const found = new Set(leaksIn(jsonStrings(JSON.parse(readFileSync(path.join(root, ".generated/content.json"), "utf8")))));
    expect(needles.filter((n) => !found.has(n.what)).map((n) => n.what)).toEqual([]);
  });

  it("finds none of it in any file of dist/client", () => {
    const leaks = filesUnder(path.join(root, "dist/client")).flatMap((file) =>
      leaksIn(readFileSync(file, "utf8")).map((what) => `${path.relative(root, file)}: ${what}`),
    );
    expect(leaks).toEqual([]);
  });

  describe("free responses", () => {
    let service: RunningService;
    beforeAll(async () => {
      service = await startTestService();
    });
    afterAll(() => service.close());

    /** The status of `pathname` and the paid text found in its body and challenge. */
    async function scan(pathname: string, init?: RequestInit): Promise<{ status: number; leaks: string[] }> {
      const res = await fetch(`${service.url}${pathname}`, init);
      const raw = await res.text();
      const header = res.headers.get("payment-required");
      let decoded = "";
      try {
        decoded = jsonStrings(JSON.parse(raw));
      } catch {}
      const challenge = header ? jsonStrings(decodePaymentRequiredHeader(header)) : "";
      return {
        status: res.status,
        leaks: [...leaksIn(raw), ...leaksIn(decoded), ...leaksIn(challenge)].map((what) => `${init?.method ?? "GET"} ${pathname}: ${what}`),
      };
    }

    /**
     * A search for an answer's own words: its first words reversed (so that the echoed query is
     * not a copy of the answer), cut at a word to the 200 characters `q` may have, so that the
     * search answers 200 rather than a 400 that could not leak anything. A word that is a whole
     * paid paragraph by itself (an address in backticks) is left out: reversing cannot hide it,
     * and the echo of the test's own query is not a leak.
     */
    function shuffledQuery(answer: string): string {
      const words: string[] = [];
      for (const word of answer.trim().split(/\s+/).slice(0, 30)) {
        if (leaksIn(word).length > 0) continue;
        if ([...words, word].join(" ").length > 200) break;
        words.push(word);
      }
      return words.reverse().join(" ");
    }

    it("finds none of it in the free routes, searches, discovery documents, pages and 402 challenges", async () => {
      const paths = [
        "/",
        "/playbooks",
        "/howto",
        ...compiled.sops.map((s) => `/howto/${s.index.slug}`),
        "/kb",
        "/openapi.json",
        "/.well-known/x402",
        ...contentRoutes.filter((r) => r.price === null && r.path !== "/api/kb/search").map((r) => r.path),
        // Searching for each entry's own words must list the entry, never quote its answer.
        ...compiled.kb.entries.map((e) => `/api/kb/search?q=${encodeURIComponent(e.title)}`),
        // ... and for its answer's own words, shuffled so that the echoed query is not a copy of the answer.
        ...compiled.kb.entries.map((e) => `/api/kb/search?q=${encodeURIComponent(shuffledQuery(e.answer))}`),
      ];
      // The queries themselves carry no paid text, so whatever is found below came from the service.
      expect(compiled.kb.entries.flatMap((e) => leaksIn(shuffledQuery(e.answer)))).toEqual([]);
      const leaks: string[] = [];
      // A scanned surface that failed (404, 400, 500) holds no paid text and would pass unseen:
      // each free one must answer 200, each paid one its 402 challenge.
      const wrongStatus: string[] = [];
      for (const p of paths) {
        const { status, leaks: found } = await scan(p);
        if (status !== 200) wrongStatus.push(`GET ${p}: ${status}, expected 200`);
        leaks.push(...found);
      }
      for (const route of contentRoutes.filter((r) => r.price !== null)) {
        const { status, leaks: found } = await scan(route.path, {
          method: route.method,
          ...(route.method === "POST" ? { headers: { "content-type": "application/json" }, body: "{}" } : {}),
        });
        if (status !== 402) wrongStatus.push(`${route.method} ${route.path}: ${status}, expected 402`);
        leaks.push(...found);
      }
      expect(wrongStatus).toEqual([]);
      expect(leaks).toEqual([]);
    });
  });
});
