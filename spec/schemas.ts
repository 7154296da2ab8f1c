/** Shared TypeBox schemas used by several routes. */
import {
  type ObjectOptions,
  type SchemaOptions,
  type TLiteral,
  type TObject,
  type TProperties,
  type TSchema,
  Type,
} from "@sinclair/typebox";
import { base } from "../src/networks/base.ts";

/** A 20-byte EVM address, any case. */
export const Address = Type.String({
  pattern: "^0x[0-9a-fA-F]{40}$",
  description: "EVM address: 0x followed by 40 hex digits",
  examples: [base.usdc.address],
});

/** A 32-byte transaction hash. */
export const TxHash = Type.String({
  pattern: "^0x[0-9a-fA-F]{64}$",
  description: "transaction hash: 0x followed by 64 hex digits",
  examples: ["0x8c1f6b2ad1d43e9f5d0c7a3b2e4f6a8c9d0e1f2a3b4c5d6e7f8091a2b3c4d5e6"],
});

/**
 * An object that refuses every property it does not list: a request with an unknown field is a
 * 400 naming it, a content file with a misspelt key fails the build, and a compiled record holds
 * exactly the fields the API promises.
 */
export function ClosedObject<T extends TProperties>(properties: T, options: ObjectOptions = {}): TObject<T> {
  return Type.Object(properties, { additionalProperties: false, ...options });
}

/** `schema`, or null. */
export function Nullable<T extends TSchema>(schema: T, options?: SchemaOptions) {
  return Type.Union([schema, Type.Null()], options);
}

/** One of the strings `values`: a union of their literals. */
export function Literals<const T extends readonly string[]>(values: T, options?: SchemaOptions) {
  return Type.Union(values.map((value) => Type.Literal(value)) as TLiteral<T[number]>[], options);
}

/** A request with no parameters. */
export const NoInput = ClosedObject({});

/** A free GET with no parameters. */
export const FREE_GET = { price: null, query: NoInput } as const;

/** A free GET whose answer depends only on the build and the configuration: no parameters, no errors of its own, held per process. */
export const FREE_DOCUMENT = { ...FREE_GET, cache: "process" } as const;
