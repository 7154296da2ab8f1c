/**
 * Free documents whose answer depends only on the build and the configuration (routes marked
 * `cache: "process"`, e.g. /api/pricing and /api/kb), answered from memory for the life of the
 * process. Each is made once, by the route's own answer through the dispatcher (`render`), and
 * carries a strong ETag of its bytes (`etag`); a request whose validators match gets a 304
 * (`fresh`). The site's handler answers them before the Express chain (src/server/app.ts).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import createEtag from "etag";
import fresh from "fresh";
import type { RouteDef } from "../../../spec/route.ts";

/** An answer held in memory. */
export interface HeldAnswer {
  readonly body: Buffer;
  readonly etag: string;
  /** Every header of its 200, those every answer carries (`DocumentCacheOptions.headers`) included. */
  readonly headers: Readonly<Record<string, string>>;
  /** The metrics `route` label: the document's path. */
  readonly route: string;
}

/** Options of `documentCache`. */
export interface DocumentCacheOptions {
  /** The site's routes: its free `cache: "process"` GETs are held. */
  routes: readonly RouteDef[];
  /** The answer of GET `path`, as the API endpoint would give it. */
  render: (path: string) => Promise<Response>;
  /**
   * Headers every answer sent carries besides its own (the CORS headers of a GET): folded into a
   * held answer's headers once when it is made, and added to each 304.
   */
  headers?: Readonly<Record<string, string>>;
}

/** Create the memory answers of a site. */
export function documentCache({ routes, render, headers: common = {} }: DocumentCacheOptions) {
  const documents = new Set(routes.filter((r) => r.cache === "process" && r.method === "GET" && r.price === null).map((r) => r.path));
  const held = new Map<string, HeldAnswer>();
  const making = new Map<string, Promise<HeldAnswer | undefined>>();

  const make = async (path: string): Promise<HeldAnswer | undefined> => {
    const response = await render(path);
    const body = Buffer.from(await response.arrayBuffer());
    if (response.status !== 200) return undefined;
    const etag = createEtag(body);
    const headers: Record<string, string> = { ...common, ...Object.fromEntries(response.headers) };
    headers.etag = etag;
    headers["content-length"] = String(body.length);
    const answer = { body, etag, headers, route: path };
    held.set(path, answer);
    return answer;
  };

  return {
    /** Whether GET `url` names a held document (a URL with a query string never does). */
    holds: (url: string | undefined): url is string => url !== undefined && documents.has(url),
    /** The held answer of `url` if it was made already. */
    lookup: (url: string): HeldAnswer | undefined => held.get(url),
    /** The held answer of `url`, made now if it was not; undefined when its answer is not a 200. */
    make(url: string): Promise<HeldAnswer | undefined> {
      let pending = making.get(url);
      if (!pending) {
        pending = make(url).finally(() => making.delete(url));
        making.set(url, pending);
      }
      return pending;
    },
    /** Answer `req` with `hit`: 304 when its validators match, else 200 (no body for HEAD), with `requestId` as `X-Request-Id`. */
    send(req: IncomingMessage, res: ServerResponse, hit: HeldAnswer, requestId?: string): void {
      // One object passed to writeHead: headers set one by one beforehand (setHeader) take Node's slower merging path.
      const id = requestId === undefined ? undefined : { "X-Request-Id": requestId };
      if (fresh(req.headers, { etag: hit.etag })) {
        res.writeHead(304, { ...id, ...common, etag: hit.etag });
        res.end();
        return;
      }
      res.writeHead(200, { ...id, ...hit.headers });
      res.end(req.method === "HEAD" ? undefined : hit.body);
    },
  };
}
