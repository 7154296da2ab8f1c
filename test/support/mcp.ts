/**
 * Raw JSON-RPC to a site's remote `/mcp`, as a streamable-HTTP client sends it, for tests that
 * need the wire answers (batches, error codes, the x402 payment bindings) rather than an SDK client.
 */

/** A client's declaration that it speaks the `org.x402/payment` extension binding. */
export const CAPABILITY = { "io.modelcontextprotocol/clientCapabilities": { extensions: { "org.x402/payment": {} } } };

/** One JSON-RPC answer (a test narrows `result` to what it reads). */
export type McpAnswer<R = Record<string, unknown>> = {
  jsonrpc: "2.0";
  id: number;
  result?: R;
  error?: { code: number; message: string; data?: unknown };
};

/** POST `body` (a message, a batch, or raw text) to `url`'s `/mcp`; the answers sorted by id. */
export async function mcpRpc<R = Record<string, unknown>>(
  url: string,
  body: unknown,
): Promise<{ status: number; answers: McpAnswer<R>[] }> {
  const res = await fetch(`${url}/mcp`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const parsed = (await res.json()) as McpAnswer<R> | McpAnswer<R>[];
  const answers = (Array.isArray(parsed) ? parsed : [parsed]).sort((a, b) => a.id - b.id);
  return { status: res.status, answers };
}
