/**
 * Serves free documents whose answer depends only on the build and the configuration
 * (routes marked `cache: "process"`) from memory after their first answer. Astro's per-request
 * render pipeline costs far more than such a document, which agents fetch often.
 */
import { createHash } from "node:crypto";
import type { NextFunction, Request, Response } from "express";
import type { RouteDef } from "../../../spec/route.ts";
import { matchesEtag } from "./static-memory.ts";

interface CachedDocument {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  etag: string;
}

/** Middleware factory: memoise the 200 answers of the cacheable GET routes among `routes`. */
export function documentCache(routes: readonly RouteDef[]) {
  const cacheable = new Set(routes.filter((r) => r.cache === "process" && r.method === "GET" && r.price === null).map((r) => r.path));
  const documents = new Map<string, CachedDocument>();
  return function documentCacheMiddleware(req: Request, res: Response, next: NextFunction): void {
    if ((req.method !== "GET" && req.method !== "HEAD") || !cacheable.has(req.path) || req.url.includes("?")) {
      next();
      return;
    }
    const hit = documents.get(req.path);
    if (hit) {
      if (matchesEtag(req.headers["if-none-match"], hit.etag)) {
        const cacheControl = hit.headers["cache-control"];
        res.writeHead(304, cacheControl ? { etag: hit.etag, "cache-control": cacheControl } : { etag: hit.etag });
        res.end();
        return;
      }
      res.writeHead(hit.status, hit.headers);
      res.end(req.method === "HEAD" ? undefined : hit.body);
      return;
    }
    if (req.method === "HEAD") {
      next();
      return;
    }
    const chunks: Buffer[] = [];
    const write = res.write.bind(res) as (...args: unknown[]) => boolean;
    const end = res.end.bind(res) as (...args: unknown[]) => Response;
    const keep = (chunk: unknown) => {
      if (chunk !== undefined && chunk !== null && typeof chunk !== "function")
        chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string));
    };
    res.write = ((...args: unknown[]) => {
      keep(args[0]);
      return write(...args);
    }) as Response["write"];
    res.end = ((...args: unknown[]) => {
      keep(args[0]);
      const result = end(...args);
      if (res.statusCode === 200) {
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(res.getHeaders())) {
          if (value !== undefined && name !== "x-request-id" && name !== "date") headers[name] = String(value);
        }
        const body = Buffer.concat(chunks);
        // The document is fixed for the life of the process, so its hash is a strong validator.
        const etag = `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"`;
        headers.etag = etag;
        headers["content-length"] = String(body.length);
        documents.set(req.path, { status: 200, headers, body, etag });
      }
      return result;
    }) as Response["end"];
    next();
  };
}
