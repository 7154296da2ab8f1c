// Astro renders the free pages (prerendered at build time) and hosts the one `/api/*`
// endpoint; Express serves it through @astrojs/node in middleware mode (src/server/app.ts).
import node from "@astrojs/node";
import { defineConfig } from "astro/config";

export default defineConfig({
  output: "static",
  adapter: node({ mode: "middleware" }),
  trailingSlash: "ignore",
  build: { format: "directory" },
  devToolbar: { enabled: false },
  security: { checkOrigin: false },
  vite: { logLevel: "warn" },
});
