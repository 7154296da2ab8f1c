/** A JSON object read from outside (a request, an upstream's answer): its fields not yet checked. */
export type JsonObject = Record<string, unknown>;

/** Whether `value` is a JSON object: not null, not an array. */
export const isObject = (value: unknown): value is JsonObject => typeof value === "object" && value !== null && !Array.isArray(value);

/** `text` parsed as JSON, or undefined when it is not JSON. */
export function parseJsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
