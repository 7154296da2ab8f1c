/**
 * Request validation from the route table's TypeBox schemas. Validators are compiled once
 * per schema; only the query string is coerced (it arrives as text), never the body.
 */
import type { TObject, TSchema } from "@sinclair/typebox";
import { type TypeCheck, TypeCompiler } from "@sinclair/typebox/compiler";
import type { RouteDef } from "../spec/route.ts";
import { NoInput } from "../spec/schemas.ts";
import { type FieldProblem, InvalidRequestError } from "./errors.ts";

const compiled = new WeakMap<TSchema, TypeCheck<TSchema>>();

/** The compiled validator of `schema` (compiled once). */
export function checkerFor(schema: TSchema): TypeCheck<TSchema> {
  let check = compiled.get(schema);
  if (!check) {
    check = TypeCompiler.Compile(schema);
    compiled.set(schema, check);
  }
  return check;
}

/** The schema at a JSON pointer inside an object schema, for naming what was expected. */
export function schemaAt(root: TSchema, pointer: string): TSchema | undefined {
  let node: TSchema | undefined = root;
  for (const part of pointer.split("/").slice(1)) {
    if (!node) return undefined;
    if (node.properties?.[part]) node = node.properties[part] as TSchema;
    else if (node.items && /^\d+$/.test(part)) node = node.items as TSchema;
    else return undefined;
  }
  return node;
}

/** A short human description of what a schema accepts. */
export function describeSchema(schema: TSchema): string {
  if (typeof schema.description === "string" && schema.type !== "object") {
    const bounds = [
      schema.minimum !== undefined ? `>= ${schema.minimum}` : "",
      schema.maximum !== undefined ? `<= ${schema.maximum}` : "",
    ].filter(Boolean);
    return bounds.length ? `${schema.description} (${bounds.join(", ")})` : schema.description;
  }
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (Array.isArray(schema.anyOf)) return (schema.anyOf as TSchema[]).map(describeSchema).join(" or ");
  if (Array.isArray(schema.enum)) return `one of ${schema.enum.map((v: unknown) => JSON.stringify(v)).join(", ")}`;
  const parts: string[] = [];
  const type = schema.type === "integer" ? "an integer" : schema.type === "object" ? "a JSON object" : `a ${schema.type}`;
  parts.push(type);
  if (schema.minimum !== undefined) parts.push(`>= ${schema.minimum}`);
  if (schema.maximum !== undefined) parts.push(`<= ${schema.maximum}`);
  if (schema.minLength !== undefined) parts.push(`at least ${schema.minLength} characters`);
  if (schema.maxLength !== undefined) parts.push(`at most ${schema.maxLength} characters`);
  if (schema.pattern !== undefined) parts.push(`matching ${schema.pattern}`);
  return parts.join(", ");
}

function echo(value: unknown): unknown {
  if (value === undefined) return undefined;
  const text = JSON.stringify(value);
  return text !== undefined && text.length <= 120 ? value : `${(text ?? "").slice(0, 117)}...`;
}

/** Every problem of `value` against `schema`, one per field, named `${where}.${field}`. */
export function findProblems(schema: TSchema, value: unknown, where: "body" | "query"): FieldProblem[] {
  const check = checkerFor(schema);
  if (check.Check(value)) return [];
  const seen = new Map<string, FieldProblem>();
  for (const error of check.Errors(value)) {
    const field = error.path === "" ? where : `${where}.${error.path.slice(1).replaceAll("/", ".")}`;
    if (seen.has(field)) continue;
    const fieldSchema = schemaAt(schema, error.path);
    const unexpected = fieldSchema === undefined && error.path !== "";
    const problem: FieldProblem = {
      field,
      expected: unexpected
        ? `no such field; allowed: ${Object.keys(schema.properties ?? {}).join(", ") || "none"}`
        : describeSchema(fieldSchema ?? error.schema),
    };
    if (error.value !== undefined && !unexpected) problem.received = echo(error.value);
    if (error.value === undefined) problem.expected = `required: ${problem.expected}`;
    seen.set(field, problem);
  }
  return [...seen.values()];
}

/** Validate a JSON body; throws a 400 naming every bad field. */
export function validateBody<T>(schema: TObject, body: unknown): T {
  const problems = findProblems(schema, body, "body");
  if (problems.length > 0) throw new InvalidRequestError(summarise(problems), problems);
  return body as T;
}

/** Decimal digits with an optional fraction and exponent: the only spelling a numeric query parameter may take. */
const DECIMAL_NUMBER = /^-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?$/;

/** Whether `schema` (or one of its `anyOf` branches) declares `type`. */
function declares(schema: TSchema | undefined, type: string): boolean {
  if (!schema) return false;
  if (schema.type === type) return true;
  return Array.isArray(schema.anyOf) && (schema.anyOf as TSchema[]).some((branch) => declares(branch, type));
}

/**
 * One query value's text as the type its field declares, when the text spells one exactly;
 * otherwise the text itself, which the schema then refuses naming the field. TypeBox's own
 * conversion is lenient in ways a buyer would not expect (for an integer, "1.5" and "1e1"
 * become 1, "true" becomes 1), so a call could be charged for an answer to another question.
 */
function fromQueryText(schema: TSchema | undefined, text: string): unknown {
  if ((declares(schema, "number") || declares(schema, "integer")) && DECIMAL_NUMBER.test(text)) return Number(text);
  if (declares(schema, "boolean") && (text === "true" || text === "false")) return text === "true";
  return text;
}

/** Validate query parameters, reading their text as the declared types; throws a 400 naming every bad field. */
export function validateQuery<T>(schema: TObject, params: URLSearchParams): T {
  const converted: Record<string, unknown> = {};
  for (const key of new Set(params.keys())) {
    const all = params.getAll(key);
    const field = schema.properties?.[key] as TSchema | undefined;
    converted[key] = all.length === 1 ? fromQueryText(field, all[0] as string) : all;
  }
  const problems = findProblems(schema, converted, "query");
  if (problems.length > 0) throw new InvalidRequestError(summarise(problems), problems);
  return converted as T;
}

function summarise(problems: FieldProblem[]): string {
  const list = problems.map((p) => `${p.field} (${p.expected})`).join("; ");
  return `Invalid request: ${list}.`;
}

/** Check a function's answer against its declared response schema (a mismatch is our bug, not the caller's). */
export function responseProblems(schema: TSchema, value: unknown): string[] {
  const check = checkerFor(schema);
  if (check.Check(value)) return [];
  return [...check.Errors(value)].slice(0, 5).map((e) => `${e.path || "/"}: ${e.message}`);
}

/** How deep a JSON body may nest; deeper ones are refused before parsing (recursion would overflow the stack). */
export const MAX_JSON_DEPTH = 64;

/** The nesting depth of JSON `text` (strings skipped); stops counting past `limit`. */
export function jsonDepth(text: string, limit = MAX_JSON_DEPTH): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92)
        i++; // backslash: skip the escaped character
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 || c === 91) {
      depth++;
      if (depth > max) max = depth;
      if (max > limit) return max;
    } else if (c === 125 || c === 93) depth--;
  }
  return max;
}

export function parseJsonBody(text: string): unknown {
  if (text.trim() === "") return {};
  if (jsonDepth(text) > MAX_JSON_DEPTH) {
    throw new InvalidRequestError(`The request body nests deeper than ${MAX_JSON_DEPTH} levels.`, [
      { field: "body", expected: `a JSON object nested at most ${MAX_JSON_DEPTH} levels deep` },
    ]);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new InvalidRequestError("The request body is not valid JSON; send a JSON object.", [
      { field: "body", expected: "a JSON object" },
    ]);
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    throw new InvalidRequestError("The request body must be a JSON object.", [
      { field: "body", expected: "a JSON object", received: parsed === null ? "null" : Array.isArray(parsed) ? "array" : typeof parsed },
    ]);
  }
  return parsed;
}

/** A request's body, read once, with its JSON parsed once, on first use (`json` throws the 400 of parseJsonBody). */
export interface RequestBody {
  bytes: Uint8Array;
  text: string;
  json(): unknown;
}

export function requestBody(bytes: Uint8Array): RequestBody {
  const text = new TextDecoder().decode(bytes);
  let parsed: { value: unknown } | { error: unknown } | undefined;
  return {
    bytes,
    text,
    json() {
      if (!parsed) {
        try {
          parsed = { value: parseJsonBody(text) };
        } catch (error) {
          parsed = { error };
        }
      }
      if ("error" in parsed) throw parsed.error;
      return parsed.value;
    },
  };
}

/** The validated input of a call: the query, and for a POST its JSON body too; throws a 400 naming every bad field. */
export function inputOf(route: RouteDef, url: URL, body: RequestBody): Record<string, unknown> {
  const query: Record<string, unknown> = route.query ? validateQuery(route.query, url.searchParams) : {};
  if (route.method !== "POST") return query;
  // A POST route that declares no body takes nothing, or an empty object.
  return { ...query, ...validateBody<Record<string, unknown>>(route.body ?? NoInput, body.json()) };
}

/**
 * Checked before charged: a body or query that is present and fails the route's schema is a 400
 * before any 402. No body and `{}` are probes (directories and discovery tools send them) and get the challenge.
 */
export function checkBeforeCharging(route: RouteDef, url: URL, body: RequestBody): void {
  if (route.query && url.search !== "") validateQuery(route.query, url.searchParams);
  const text = body.text.trim();
  if (route.method === "POST" && text !== "" && !/^\{\s*\}$/.test(text)) inputOf(route, url, body);
}
