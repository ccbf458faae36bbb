/**
 * JSON Schema (what OpenAI clients send for tool parameters and `json_schema` response formats)
 * → Gemini's `Schema`, an OpenAPI 3.0 subset. Gemini rejects the whole request on a key it does
 * not know ("Invalid JSON payload received. Unknown name \"additionalProperties\""), so the
 * cleaner keeps only the keys Gemini documents and rewrites the common JSON Schema idioms:
 *
 * - kept: `type format title description nullable enum items properties required anyOf
 *   minItems maxItems minProperties maxProperties minLength maxLength pattern minimum maximum
 *   default example propertyOrdering`;
 * - dropped: everything else, notably `additionalProperties`, `$schema`, `$id`, `$comment`,
 *   `strict`, `examples`, `not`, `if/then/else`, `patternProperties`, `exclusiveMinimum`,
 *   `exclusiveMaximum`, `multipleOf`, `uniqueItems`, `readOnly`, `writeOnly`;
 * - `type: ["string", "null"]` → `type: "string", nullable: true` (several non-null types →
 *   `anyOf`); an `anyOf`/`oneOf` member `{type: "null"}` → `nullable: true`; `oneOf` → `anyOf`;
 *   a one-member `allOf` is inlined (longer ones are dropped);
 * - `const: "x"` → `enum: ["x"]`; `enum` is kept only when every value is a string (Gemini's
 *   enums are string-only) and implies `type: "string"`;
 * - `format` is kept only for the values Gemini acts on (`date-time`, `enum`, `int32`, `int64`,
 *   `float`, `double`);
 * - empty `properties` are dropped (Gemini rejects an OBJECT with an empty property map), and
 *   `required` keeps only names that are among `properties`.
 *
 * A schema the cleaner would change the meaning of — one with `$ref`, or a constraint the
 * `Schema` subset has no room for (`additionalProperties`, `not`, `if`, `multipleOf`,
 * `uniqueItems`, `exclusiveMinimum`…, `CONSTRAINTS` below) — is sent as JSON Schema instead
 * (`parametersJsonSchema` / `responseJsonSchema`, which take the full vocabulary), with only
 * `$schema` removed: see `needsJsonSchema` and `asJsonSchema`.
 */
import { isObject, type JsonObject } from "../../../common/schemas/fields.ts";

const KEPT = new Set([
  "type",
  "format",
  "title",
  "description",
  "nullable",
  "enum",
  "items",
  "properties",
  "required",
  "anyOf",
  "minItems",
  "maxItems",
  "minProperties",
  "maxProperties",
  "minLength",
  "maxLength",
  "pattern",
  "minimum",
  "maximum",
  "default",
  "example",
  "propertyOrdering",
]);
const FORMATS = new Set(["date-time", "enum", "int32", "int64", "float", "double"]);
const MAX_DEPTH = 64;

/** True when the schema (at any depth) uses `$ref`. */
export function hasRef(schema: unknown, depth = 0): boolean {
  if (depth > MAX_DEPTH) return false;
  if (Array.isArray(schema)) return schema.some((s) => hasRef(s, depth + 1));
  if (!isObject(schema)) return false;
  return "$ref" in schema || Object.values(schema).some((v) => hasRef(v, depth + 1));
}

/** Keywords the cleaner would drop although they constrain the value. */
const CONSTRAINTS = new Set([
  "additionalProperties",
  "not",
  "if",
  "then",
  "else",
  "patternProperties",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "multipleOf",
  "uniqueItems",
  "prefixItems",
  "contains",
  "dependentRequired",
  "dependentSchemas",
  "unevaluatedProperties",
  "propertyNames",
]);

function hasConstraint(schema: unknown, depth = 0): boolean {
  if (depth > MAX_DEPTH) return false;
  if (Array.isArray(schema)) return schema.some((s) => hasConstraint(s, depth + 1));
  if (!isObject(schema)) return false;
  return Object.entries(schema).some(([k, v]) => (CONSTRAINTS.has(k) && v !== undefined) || hasConstraint(v, depth + 1));
}

/** Whether the schema must go as JSON Schema (`*JsonSchema`): the `Schema` subset would lose `$ref` or a constraint. */
export function needsJsonSchema(schema: unknown): boolean {
  return hasRef(schema) || hasConstraint(schema);
}

/** A JSON Schema as Gemini's `*JsonSchema` fields take it: unchanged but for `$schema`. */
export function asJsonSchema(schema: JsonObject): JsonObject {
  const { $schema: _dropped, ...rest } = schema;
  return rest;
}

/** JSON Schema → Gemini `Schema` (see the module comment for every rule). */
export function toGeminiSchema(schema: unknown, depth = 0): JsonObject {
  if (!isObject(schema) || depth > MAX_DEPTH) return {};
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(schema)) if (KEPT.has(key) && key !== "anyOf") out[key] = value;
  applyType(out, schema.type);
  if (typeof schema.const === "string") out.enum = [schema.const];
  if (out.enum !== undefined) {
    if (Array.isArray(out.enum) && out.enum.every((v) => typeof v === "string")) out.type ??= "string";
    else delete out.enum;
  }
  if (typeof out.format !== "string" || !FORMATS.has(out.format)) delete out.format;
  const alternatives = [...list(schema.anyOf), ...list(schema.oneOf)];
  if (alternatives.length > 0) applyAlternatives(out, alternatives, depth);
  const allOf = list(schema.allOf);
  if (allOf.length === 1) mergeMissing(out, toGeminiSchema(allOf[0], depth + 1));
  if (isObject(schema.properties)) {
    const properties: JsonObject = {};
    for (const [name, sub] of Object.entries(schema.properties)) properties[name] = toGeminiSchema(sub, depth + 1);
    if (Object.keys(properties).length > 0) out.properties = properties;
    else delete out.properties;
  }
  if (out.properties === undefined) delete out.required;
  else if (Array.isArray(out.required)) {
    const names = out.properties as JsonObject;
    out.required = out.required.filter((n): n is string => typeof n === "string" && n in names);
  }
  if (schema.items !== undefined) {
    if (isObject(schema.items)) out.items = toGeminiSchema(schema.items, depth + 1);
    else delete out.items;
  }
  return out;
}

/**
 * Tool parameters for a function declaration: `{parameters}` as a cleaned `Schema`, or
 * `{parametersJsonSchema}` when the cleaner would lose `$ref` or a constraint, or nothing for a parameterless function
 * (an OBJECT schema without properties, which Gemini rejects).
 */
export function toGeminiParameters(schema: JsonObject | undefined): JsonObject {
  if (schema === undefined) return {};
  const cleaned = toGeminiSchema(schema);
  if (!hasRef(schema) && cleaned.type === "object" && cleaned.properties === undefined) return {};
  if (needsJsonSchema(schema)) return { parametersJsonSchema: asJsonSchema(schema) };
  return { parameters: cleaned };
}

function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function applyType(out: JsonObject, type: unknown): void {
  if (!Array.isArray(type)) return;
  const types = type.filter((t): t is string => typeof t === "string");
  const concrete = types.filter((t) => t !== "null");
  if (types.includes("null")) out.nullable = true;
  if (concrete.length === 1) out.type = concrete[0];
  else {
    delete out.type;
    if (concrete.length > 1) out.anyOf = concrete.map((t) => ({ type: t }));
  }
}

function applyAlternatives(out: JsonObject, alternatives: unknown[], depth: number): void {
  const isNull = (s: unknown): boolean => isObject(s) && s.type === "null";
  if (alternatives.some(isNull)) out.nullable = true;
  const rest = alternatives.filter((s) => !isNull(s)).map((s) => toGeminiSchema(s, depth + 1));
  const [only] = rest;
  if (rest.length === 1 && only !== undefined) mergeMissing(out, only);
  else if (rest.length > 1) out.anyOf = rest;
}

/** Copies the keys of `inner` that `out` does not set (the outer schema wins). */
function mergeMissing(out: JsonObject, inner: JsonObject): void {
  for (const [key, value] of Object.entries(inner)) if (!(key in out)) out[key] = value;
}
