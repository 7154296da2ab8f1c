/**
 * Serves the built static files (prerendered pages, icons, hashed assets) from memory. They
 * never change while the process runs, and reading the landing page from disk on every request
 * cost about half of its CPU time. Each file is read once at start, with a strong ETag (a hash
 * of its bytes) so a client revalidating gets a 304 without the body.
 *
 * Paths follow the static server it replaces: `/dir/` serves `dir/index.html`, `/dir` redirects
 * to `/dir/`, `/name` serves `name.html`, and dotfiles are never served.
 */
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import type { NextFunction, Request, Response } from "express";

/** Cache-Control of files whose name carries their content hash (Astro's `/_astro/` bundle): they never change. */
export const IMMUTABLE_CACHE = "public, max-age=31536000, immutable";
/** Cache-Control of everything else: pages change with each deploy, so clients revalidate after five minutes. */
export const PAGE_CACHE = "public, max-age=300";

/** Files above this size stay on disk (none in today's build); memory is kept for small, hot files. */
const MAX_FILE_BYTES = 2 * 1024 * 1024;

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".txt": "text/plain; charset=utf-8",
  ".xml": "application/xml; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".webp": "image/webp",
  ".avif": "image/avif",
  ".gif": "image/gif",
  ".ico": "image/vnd.microsoft.icon",
  ".webmanifest": "application/manifest+json",
  ".woff2": "font/woff2",
  ".woff": "font/woff",
};

/** One file held in memory, with the headers it is always served with. */
export interface MemoryFile {
  body: Buffer;
  etag: string;
  headers: Record<string, string>;
}

/** What a URL path resolves to: a file, or a redirect to the directory's slash form. */
export type Entry = { file: MemoryFile } | { redirect: string };

function walk(dir: string, rel: string, out: Map<string, string>): void {
  for (const name of readdirSync(dir)) {
    if (name.startsWith(".")) continue;
    const full = path.join(dir, name);
    const relPath = `${rel}/${name}`;
    if (statSync(full).isDirectory()) walk(full, relPath, out);
    else out.set(relPath, full);
  }
}

/** Every servable URL path of the files under `root`, read into memory. */
export function loadStaticFiles(root: string): Map<string, Entry> {
  const entries = new Map<string, Entry>();
  if (!existsSync(root)) return entries;
  const files = new Map<string, string>();
  walk(root, "", files);
  for (const [rel, full] of files) {
    if (statSync(full).size > MAX_FILE_BYTES) continue;
    const body = readFileSync(full);
    const etag = `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"`;
    const ext = path.extname(rel).toLowerCase();
    const file: MemoryFile = {
      body,
      etag,
      headers: {
        "Content-Type": TYPES[ext] ?? "application/octet-stream",
        "Content-Length": String(body.length),
        "Cache-Control": rel.startsWith("/_astro/") ? IMMUTABLE_CACHE : PAGE_CACHE,
        ETag: etag,
      },
    };
    entries.set(rel, { file });
    if (rel.endsWith("/index.html")) {
      const dir = rel.slice(0, -"index.html".length);
      entries.set(dir, { file });
      if (dir !== "/") entries.set(dir.slice(0, -1), { redirect: dir });
    } else if (ext === ".html" && !entries.has(rel.slice(0, -5))) {
      entries.set(rel.slice(0, -5), { file });
    }
  }
  return entries;
}

/** Whether an `If-None-Match` header names `etag` (or `*`); weak comparison, as for GET. */
export function matchesEtag(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  if (ifNoneMatch.trim() === "*") return true;
  return ifNoneMatch.split(",").some((tag) => tag.trim().replace(/^W\//, "") === etag);
}

/** Middleware factory: GET and HEAD of the files under `root` (or already loaded from it) from memory; anything else goes on. */
export function staticFromMemory(root: string | ReadonlyMap<string, Entry>) {
  const entries = typeof root === "string" ? loadStaticFiles(root) : root;
  return function staticFromMemoryMiddleware(req: Request, res: Response, next: NextFunction): void {
    const entry = req.method === "GET" || req.method === "HEAD" ? entries.get(req.path) : undefined;
    if (!entry) {
      next();
      return;
    }
    if ("redirect" in entry) {
      const query = req.url.indexOf("?");
      res.writeHead(301, { Location: entry.redirect + (query >= 0 ? req.url.slice(query) : ""), "Content-Length": "0" });
      res.end();
      return;
    }
    const { file } = entry;
    if (matchesEtag(req.headers["if-none-match"], file.etag)) {
      res.writeHead(304, { ETag: file.etag, "Cache-Control": file.headers["Cache-Control"] as string });
      res.end();
      return;
    }
    res.writeHead(200, file.headers);
    res.end(req.method === "HEAD" ? undefined : file.body);
  };
}
