/**
 * A compact description of a route's answer for the Bazaar discovery extension: an example
 * built from the response schema (its `examples`, constants and first alternatives) and an
 * outline of the schema (top-level fields and their JSON types). The full schemas are in
 * `/openapi.json`; these stay small because the whole challenge travels in the base64
 * `PAYMENT-REQUIRED` header, which proxies cap (nginx's default buffer is 4 KB).
 */
import type { TSchema } from "@sinclair/typebox";

/** How deep the example goes: objects and arrays nested inside a top-level field are shown empty. */
const EXAMPLE_DEPTH = 1;

type JsonSchema = Record<string, unknown>;

const variants = (schema: JsonSchema): JsonSchema[] | undefined =>
  (schema.anyOf as JsonSchema[] | undefined) ?? (schema.oneOf as JsonSchema[] | undefined);

const isNull = (schema: JsonSchema) => schema.type === "null";

/** The JSON types a schema admits, outermost level only. */
function typesOf(schema: JsonSchema): string[] {
  const alternatives = variants(schema);
  if (alternatives) return [...new Set(alternatives.flatMap(typesOf))];
  if (Array.isArray(schema.type)) return schema.type as string[];
  if (typeof schema.type === "string") return [schema.type];
  if (schema.const !== undefined) return [schema.const === null ? "null" : typeof schema.const];
  return [];
}

/** An example value of `schema`: its first example, its constant, else a minimal value of its type. */
function sample(schema: JsonSchema, depth: number, examples = true): unknown {
  if (examples && Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if (schema.const !== undefined) return schema.const;
  if (schema.default !== undefined) return schema.default;
  const alternatives = variants(schema);
  if (alternatives) return sample(alternatives.find((v) => !isNull(v)) ?? (alternatives[0] as JsonSchema), depth, examples);
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  switch (typesOf(schema)[0]) {
    case "object": {
      if (depth >= EXAMPLE_DEPTH) return {};
      const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
      const required = new Set((schema.required as string[] | undefined) ?? []);
      return Object.fromEntries(
        Object.entries(properties)
          .filter(([name]) => required.has(name))
          .map(([name, property]) => [name, sample(property, depth + 1, examples)]),
      );
    }
    case "array":
      return depth >= EXAMPLE_DEPTH || !schema.items ? [] : [sample(schema.items as JsonSchema, depth + 1, examples)];
    case "string":
      return "";
    case "integer":
    case "number":
      return typeof schema.minimum === "number" ? schema.minimum : 0;
    case "boolean":
      return false;
    default:
      return null;
  }
}

/**
 * A compact example answer of `response`: its required top-level fields, nested objects and arrays
 * shown empty; without the schema's `examples` (bare values of each type) when `examples` is false.
 */
export function compactExample(response: TSchema, examples = true): Record<string, unknown> {
  const example = sample(JSON.parse(JSON.stringify(response)) as JsonSchema, 0, examples);
  if (typeof example !== "object" || example === null || Array.isArray(example)) {
    throw new Error("compactExample: a route's response must be a JSON object");
  }
  return example as Record<string, unknown>;
}

/** The outline of an object schema: each top-level field with its JSON type(s); the example shows which are always there. */
export function outlineSchema(response: TSchema): JsonSchema {
  const schema = JSON.parse(JSON.stringify(response)) as JsonSchema;
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  return {
    properties: Object.fromEntries(
      Object.entries(properties).map(([name, property]) => {
        const types = typesOf(property);
        return [name, types.length === 1 ? { type: types[0] } : types.length > 1 ? { type: types } : {}];
      }),
    ),
  };
}

/** Annotations that only explain: `/openapi.json` keeps them, the challenge leaves them out. */
const ANNOTATIONS = new Set(["description", "examples", "title", "$id", "default"]);

/** A union of constants of one type (TypeBox's literal unions) as the shorter `{type, enum}`. */
export function enumOf(alternatives: JsonSchema[]): JsonSchema | undefined {
  const type = alternatives[0]?.type;
  const constants = alternatives.every((a) => Object.keys(a).length === 2 && a.const !== undefined && a.type === type);
  return constants && typeof type === "string" ? { type, enum: alternatives.map((a) => a.const) } : undefined;
}

function strip(schema: JsonSchema): JsonSchema {
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (ANNOTATIONS.has(key)) continue;
    if ((key === "properties" || key === "patternProperties") && typeof value === "object" && value !== null) {
      out[key] = Object.fromEntries(Object.entries(value as Record<string, JsonSchema>).map(([name, sub]) => [name, strip(sub)]));
    } else if ((key === "anyOf" || key === "oneOf" || key === "allOf") && Array.isArray(value)) {
      const alternatives = (value as JsonSchema[]).map(strip);
      const enumType = key !== "allOf" ? enumOf(alternatives) : undefined;
      if (enumType) Object.assign(out, enumType);
      else out[key] = alternatives;
    } else if ((key === "items" || key === "not" || key === "additionalProperties") && typeof value === "object" && value !== null) {
      out[key] = strip(value as JsonSchema);
    } else out[key] = value;
  }
  return out;
}

/** `schema` as plain JSON Schema without its annotations: every constraint, none of the prose. */
export function withoutAnnotations(schema: TSchema): JsonSchema {
  return strip(JSON.parse(JSON.stringify(schema)) as JsonSchema);
}
