import { it } from "vitest";
import { launchBrowser } from "./support/browser.ts";
import { startTestService } from "./support/service.ts";

it("shots", async () => {
  const s = await startTestService();
  const b = await launchBrowser();
  const pages = (process.env.SHOT_PAGES ?? "/,/markets,/entity-intel").split(",");
  const onlyNarrow = process.env.NARROW === "1";
  for (const w of onlyNarrow ? [390] : [1280, 390])
    for (const scheme of (onlyNarrow ? ["light"] : ["light", "dark"]) as ("light" | "dark")[]) {
      const c = await b.newContext({ viewport: { width: w, height: 900 }, colorScheme: scheme });
      for (const p of pages) {
        const pg = await c.newPage();
        await pg.goto(`${s.url}${p}`);
        const over = await pg.evaluate(() => {
          const out: string[] = [];
          for (const e of Array.from(document.querySelectorAll("body *"))) {
            const r = e.getBoundingClientRect();
            let clipped = false;
            for (let a = e.parentElement; a; a = a.parentElement) {
              const o = getComputedStyle(a).overflowX;
              if (o === "auto" || o === "hidden" || o === "scroll") clipped = true;
            }
            if (!clipped && r.right > document.documentElement.clientWidth + 1)
              out.push(`${e.tagName}.${e.className} ${Math.round(r.right)}`);
          }
          return [document.documentElement.scrollWidth, document.documentElement.clientWidth, out.slice(0, 8)];
        });
        console.log(w, scheme, p, JSON.stringify(over));
        await pg.screenshot({ path: `/tmp/shot-${p.replaceAll("/", "_") || "_"}-${w}-${scheme}.png`, fullPage: process.env.FULL === "1" });
        await pg.close();
      }
      await c.close();
    }
  if (s.secondaryUrl) {
    const c = await b.newContext({ viewport: { width: 390, height: 900 } });
    const pg = await c.newPage();
    await pg.goto(s.secondaryUrl);
    await pg.screenshot({ path: "/tmp/shot-secondary.png", fullPage: true });
    console.log(
      "secondary",
      await pg
        .locator("main")
        .textContent()
        .then((t) => t?.slice(0, 600)),
    );
  }
  await b.close();
  await s.close();
}, 120000);
