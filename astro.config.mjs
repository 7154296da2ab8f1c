// Astro renders the free pages (per request, or at build time where a page says `prerender = true`)
// and hosts the API endpoints; Express serves it through @astrojs/node in middleware mode (src/server/app.ts).
import path from "node:path";
import { fileURLToPath } from "node:url";
import node from "@astrojs/node";
import { defineConfig } from "astro/config";

const root = path.dirname(fileURLToPath(import.meta.url));
/** The service's own modules: the server bundle imports them from source instead of holding a copy. */
const SERVICE_DIRS = ["src", "functions", "spec"].map((dir) => path.join(root, dir) + path.sep);
/** Astro's own files under src/ (pages, components, layouts) are compiled into the bundle. */
const ASTRO_DIRS = ["src/pages", "src/components", "src/layouts"].map((dir) => path.join(root, dir) + path.sep);

/**
 * One module graph: in the server build, every TypeScript module of src/, functions/ and spec/
 * (except Astro's pages, components and layouts) stays external, so the endpoint, the payment
 * gate and the functions load one copy of each module, the one the server itself loads; and a
 * function edited after the build is what the next request runs, with no rebuild.
 */
function serviceModulesFromSource() {
  return {
    name: "service-modules-from-source",
    apply: "build",
    enforce: "pre",
    async resolveId(source, importer, options) {
      if (this.environment?.config?.consumer !== "server" && !options?.ssr) return null;
      if (!importer || !/\.ts$/.test(source) || !(source.startsWith(".") || source.startsWith("/"))) return null;
      const file = path.resolve(path.dirname(importer.split("?")[0]), source);
      if (!SERVICE_DIRS.some((dir) => file.startsWith(dir)) || ASTRO_DIRS.some((dir) => file.startsWith(dir))) return null;
      return { id: file, external: "absolute" };
    },
  };
}

export default defineConfig({
  output: "server",
  adapter: node({ mode: "middleware" }),
  trailingSlash: "ignore",
  build: { format: "directory" },
  devToolbar: { enabled: false },
  security: { checkOrigin: false },
  vite: { logLevel: "warn", plugins: [serviceModulesFromSource()] },
});
