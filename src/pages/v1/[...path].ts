/**
 * The Astro endpoint for `/v1/*`, the secondary site's API: like `/api/*`, every request goes to
 * the dispatcher, which answers only the routes of the site the request came to (a `/v1/` path
 * on the primary site is a 404).
 */
export { ALL } from "../api/[...path].ts";
