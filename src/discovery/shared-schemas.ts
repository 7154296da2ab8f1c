/**
 * Moves the JSON Schemas an OpenAPI document repeats into `components.schemas`, each written
 * once and referenced with `$ref` wherever it occurred: the how-to record of eight operations,
 * the conformance report of two, an address of dozens. The document means exactly what it
 * meant (only identical subschemas are shared) and is a fraction of the size agents and
 * directories must download. No library found does this for a generated document: schema
 * bundlers (json-schema-ref-parser, Redocly's bundle) resolve or inline existing `$ref`s, they
 * do not find repeats.
 */

import { pascalCase } from "../../spec/route.ts";

type Json = Record<string, unknown>;

/** A shared schema must be at least this long (in JSON characters) to be worth a `$ref`. */
const MIN_LENGTH = 60;

/**
 * The subschemas directly under a schema (each value of `properties`, `items`, each of `anyOf`…),
 * each with the name it is shared under: its property's, `<name>Item` for an array's items, else
 * its parent's `name`.
 */
function subschemas(schema: Json, name: string): [Json, string][] {
  const out: [Json, string][] = [];
  const add = (v: unknown, as: string) => {
    if (v && typeof v === "object" && !Array.isArray(v)) out.push([v as Json, as]);
  };
  for (const [prop, v] of Object.entries((schema.properties ?? {}) as Json)) add(v, pascalCase(prop));
  add(schema.items, `${name}Item`);
  for (const key of ["patternProperties", "$defs"] as const) {
    const map = schema[key];
    if (map && typeof map === "object") for (const v of Object.values(map as Json)) add(v, name);
  }
  for (const key of ["anyOf", "oneOf", "allOf", "prefixItems"] as const) {
    const list = schema[key];
    if (Array.isArray(list)) for (const v of list) add(v, name);
  }
  for (const key of ["additionalProperties", "not", "contains"] as const) add(schema[key], name);
  return out;
}

/** Every schema root of the document's operations: parameters, request bodies and response bodies. */
function operationSchemaSlots(doc: Json): { holder: Json; key: string; name: string }[] {
  const slots: { holder: Json; key: string; name: string }[] = [];
  const content = (c: unknown, name: string) => {
    for (const media of Object.values((c ?? {}) as Record<string, Json>))
      if (media.schema) slots.push({ holder: media, key: "schema", name });
  };
  for (const item of Object.values((doc.paths ?? {}) as Record<string, Record<string, Json>>)) {
    for (const op of Object.values(item)) {
      const pascal = pascalCase(String(op.operationId ?? "Operation"));
      for (const p of (op.parameters ?? []) as Json[])
        if (p.schema) slots.push({ holder: p, key: "schema", name: `${pascal}${String(p.name)}` });
      content((op.requestBody as Json | undefined)?.content, `${pascal}Request`);
      for (const response of Object.values((op.responses ?? {}) as Record<string, Json>)) content(response.content, `${pascal}Response`);
    }
  }
  return slots;
}

/**
 * Share every subschema of the document's operations that occurs more than once, largest
 * saving first, as `components.schemas.<Name>`: the name `named` gives it, else the property or
 * operation it was first found under. Returns the same document, changed in place.
 */
export function shareRepeatedSchemas<T extends Json>(doc: T, named: Record<string, object> = {}): T {
  // A schema used under many names (an address is a payer, a token, a recipient…) keeps its own.
  const names = new Map(Object.entries(named).map(([name, schema]) => [JSON.stringify(schema), name]));
  const components = (doc.components ?? {}) as Json;
  const shared = (components.schemas ?? {}) as Record<string, Json>;
  components.schemas = shared;

  for (;;) {
    // Each schema node's JSON text, how often it occurs, and a name from its first place.
    const seen = new Map<string, { count: number; name: string; node: Json }>();
    const visit = (node: Json, name: string, isRoot = false) => {
      const text = JSON.stringify(node);
      if (!isRoot && !("$ref" in node) && text.length >= MIN_LENGTH) {
        const entry = seen.get(text);
        if (entry) entry.count++;
        else seen.set(text, { count: 1, name: names.get(text) ?? name, node });
      }
      for (const [sub, subName] of subschemas(node, name)) visit(sub, subName);
    };
    for (const slot of operationSchemaSlots(doc)) visit(slot.holder[slot.key] as Json, slot.name);
    for (const [name, schema] of Object.entries(shared)) visit(schema, name, true);

    // The repeats worth sharing, largest saving first; one round shares those that do not hold
    // one another (a repeat inside a shared one is found again, once, in the next round).
    const picked = new Map<string, string>();
    const candidates = [...seen]
      .filter(([, e]) => e.count >= 2)
      .sort(([a, x], [b, y]) => b.length * (y.count - 1) - a.length * (x.count - 1) || (a < b ? -1 : 1));
    for (const [text, entry] of candidates) {
      if ([...picked.keys()].some((p) => p.includes(text) || text.includes(p))) continue;
      let name = entry.name;
      for (let n = 2; name in shared || [...picked.values()].includes(name); n++) name = `${entry.name}${n}`;
      picked.set(text, name);
      shared[name] = structuredClone(entry.node);
    }
    if (picked.size === 0) break;
    const replace = (holder: Json, key: string | number) => {
      const value = (holder as Record<string | number, unknown>)[key];
      if (!value || typeof value !== "object") return;
      const name = picked.get(JSON.stringify(value));
      if (name) {
        (holder as Record<string | number, unknown>)[key] = { $ref: `#/components/schemas/${name}` };
        return;
      }
      for (const k of Object.keys(value as Json)) replace(value as Json, Array.isArray(value) ? Number(k) : k);
    };
    for (const slot of operationSchemaSlots(doc)) replace(slot.holder, slot.key);
    for (const key of Object.keys(shared)) {
      const own = shared[key] as Json;
      for (const k of Object.keys(own)) replace(own, k);
    }
    // The new component itself may contain further copies of smaller repeats: they are found next round.
  }
  return doc;
}
