/**
 * The home page counts the playbooks the bundle holds: an author adds a playbook with one more
 * file (content/README.md), and every page that names the bundle's size must follow, the home
 * page as well as /playbooks. The compiled catalogue gets a 14th playbook here, as the next build
 * of such a file would give it.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { RunningService } from "../src/server/service.ts";
import { startTestService } from "./support/service.ts";

vi.mock("../src/content/catalog.ts", async (importOriginal) => {
  const original = await importOriginal<typeof import("../src/content/catalog.ts")>();
  const first = original.catalog.playbooks[0];
  if (!first) throw new Error("no playbook compiled");
  const added = {
    ...first,
    order: original.catalog.playbooks.length + 1,
    preview: { ...first.preview, id: "extra-one", title: "An added playbook" },
    item: { ...first.item, id: "extra-one", title: "An added playbook" },
  };
  return { ...original, catalog: { ...original.catalog, playbooks: [...original.catalog.playbooks, added] } };
});

let service: RunningService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(() => service.close());

describe("the home page with a 14th playbook added", () => {
  it("says the bundle holds 14 playbooks, as /playbooks does", async () => {
    const playbooks = await (await fetch(`${service.url}/playbooks`)).text();
    expect(playbooks).toContain("All 14 playbooks for");
    const home = await (await fetch(`${service.url}/`)).text();
    expect(home).toContain("a bundle of 14 playbooks");
    expect(home).toContain("the 14 playbooks and how to buy them");
    expect(home).not.toContain("13 playbooks");
  });
});
