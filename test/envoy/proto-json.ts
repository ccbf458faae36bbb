/**
 * A strict converter from a JSON/YAML-parsed object to an Envoy proto message, following the
 * proto3 JSON mapping as Envoy's config loader applies it, on protobufjs reflection:
 *
 * - fields by proto name (snake_case) or lowerCamelCase JSON name, never both, never unknown;
 * - enums by name or number; 64-bit integers as number or string; bytes as base64;
 * - well-known types in their JSON form (see `well-known.ts`): Duration "1.5s", wrappers as
 *   bare scalars, Struct/Value/ListValue as free JSON, Timestamp, FieldMask;
 * - `Any` as `{ "@type": "type.googleapis.com/<full name>", ...fields }`, the fields checked
 *   recursively against that type; a type not loaded in the Root is an error;
 * - at most one member per oneof; repeated fields as arrays; maps as objects; null = unset;
 * - deprecated fields and enum values rejected unless allowed (Envoy warns; configs stay current);
 * - the cheap protoc-gen-validate rules (see `pgv.ts`).
 *
 * Then `Type.fromObject` → `verify` → `encode` → `decode` → `encode` proves the message is
 * complete and round-trips byte for byte. protobufjs alone is lenient (`fromObject` drops
 * unknown keys and coerces types), which is why the walk above comes first.
 */
import { isDeepStrictEqual } from "node:util";
import protobuf from "protobufjs";
import { fieldPath, indexPath, keyPath, report, type ErrorList } from "./errors.ts";
import { checkCountRules, checkScalarRules, elementRules, fieldRules, isRequired, oneofRequired } from "./pgv.ts";
import { describe, isPlainObject, lowerCamel, type PlainObject } from "./plain.ts";
import { convertMapKey, convertScalar, isScalarKind } from "./scalars.ts";
import { nullIsAValue, wellKnownConverter } from "./well-known.ts";

/** Options for {@link protoFromJson}. */
export interface ProtoJsonOptions {
  /** Accept fields and enum values marked `deprecated = true` (default: report them). */
  readonly allowDeprecated?: boolean;
}

/** The outcome of {@link protoFromJson}: the decoded message, or every error found, each with its path. */
export type ProtoJsonResult =
  { readonly ok: true; readonly message: protobuf.Message; readonly type: protobuf.Type } | { readonly ok: false; readonly errors: readonly string[] };

interface Walk {
  readonly root: protobuf.Root;
  readonly errors: ErrorList;
  readonly allowDeprecated: boolean;
}

const fieldIndexes = new WeakMap<protobuf.Type, ReadonlyMap<string, protobuf.Field>>();

function fieldIndex(type: protobuf.Type): ReadonlyMap<string, protobuf.Field> {
  let index = fieldIndexes.get(type);
  if (index === undefined) {
    const built = new Map<string, protobuf.Field>();
    for (const field of type.fieldsArray) {
      const custom: unknown = field.options?.["json_name"];
      built.set(field.name, field);
      built.set(typeof custom === "string" ? custom : lowerCamel(field.name), field);
    }
    index = built;
    fieldIndexes.set(type, index);
  }
  return index;
}

function typeName(type: protobuf.ReflectionObject): string {
  return type.fullName.replace(/^\./, "");
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_v, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

function suggestion(key: string, type: protobuf.Type): string {
  const near = type.fieldsArray.map((f) => f.name).filter((name) => editDistance(name, key) <= 2 || editDistance(lowerCamel(name), key) <= 2);
  return near.length > 0 ? ` (did you mean ${near.map((n) => `"${n}"`).join(" or ")}?)` : "";
}

function isDeprecated(options: Record<string, unknown> | undefined): boolean {
  return options?.["deprecated"] === true;
}

function convertEnum(type: protobuf.Enum, json: unknown, path: string, walk: Walk, rules: PlainObject | undefined): number | undefined {
  if (json === null && type.fullName === ".google.protobuf.NullValue") return 0;
  let number: number | undefined;
  if (typeof json === "string") {
    number = type.values[json];
    if (number === undefined) {
      return void report(walk.errors, path, `unknown enum value ${JSON.stringify(json)} (expected one of ${Object.keys(type.values).join(", ")})`);
    }
    if (!walk.allowDeprecated && isDeprecated(type.valuesOptions?.[json])) {
      report(walk.errors, path, `enum value ${json} of ${typeName(type)} is deprecated`);
    }
  } else if (typeof json === "number" && Number.isInteger(json) && Math.abs(json) < 2 ** 31) {
    number = json;
  } else {
    return void report(walk.errors, path, `expected an enum name of ${typeName(type)} (or its number), got ${describe(json)}`);
  }
  checkScalarRules("enum", number, rules, path, walk.errors, Object.values(type.values));
  return number;
}

function convertAny(json: unknown, path: string, walk: Walk): PlainObject | undefined {
  if (!isPlainObject(json)) return void report(walk.errors, path, `expected Any (an object with "@type"), got ${describe(json)}`);
  const url = json["@type"];
  const urlPath = fieldPath(path, "@type");
  if (typeof url !== "string") {
    return void report(walk.errors, urlPath, `an Any needs "@type": "type.googleapis.com/<full message name>", got ${describe(url)}`);
  }
  const name = url.slice(url.lastIndexOf("/") + 1);
  const found = url.includes("/") && name !== "" ? walk.root.lookup(name, [protobuf.Type]) : null;
  if (!(found instanceof protobuf.Type)) {
    return void report(walk.errors, urlPath, `unknown Any type URL ${JSON.stringify(url)}: no message ${JSON.stringify(name)} is loaded`);
  }
  const rest = Object.fromEntries(Object.entries(json).filter(([key]) => key !== "@type"));
  const before = walk.errors.length;
  let object: PlainObject | undefined;
  if (wellKnownConverter(found) !== undefined || found.fullName === ".google.protobuf.Any") {
    // Types with a special JSON form are wrapped: { "@type": ..., "value": <special form> }.
    for (const key of Object.keys(rest).filter((k) => k !== "value")) {
      report(walk.errors, fieldPath(path, key), `unknown field: an Any holding ${typeName(found)} has only "@type" and "value"`);
    }
    // No "value" means the type's default (an empty message), as in protobuf's own parser.
    object = "value" in rest ? convertMessage(found, rest["value"], fieldPath(path, "value"), walk, undefined) : {};
  } else {
    object = convertMessage(found, rest, path, walk, undefined);
  }
  if (object === undefined || walk.errors.length > before) return undefined;
  const anyType = walk.root.lookupType("google.protobuf.Any");
  const urlField = "type_url" in anyType.fields ? "type_url" : "typeUrl";
  return { [urlField]: url, value: found.encode(found.fromObject(object)).finish() };
}

function convertSingle(field: protobuf.Field, json: unknown, path: string, walk: Walk, rules: PlainObject | undefined): unknown {
  const resolved = field.resolvedType;
  if (resolved instanceof protobuf.Enum) return convertEnum(resolved, json, path, walk, rules);
  if (resolved instanceof protobuf.Type) return convertMessage(resolved, json, path, walk, rules);
  if (!isScalarKind(field.type)) throw new Error(`${field.fullName}: unresolved type ${field.type}`);
  const value = convertScalar(field.type, json, path, walk.errors);
  if (value !== undefined) checkScalarRules(field.type, value, rules, path, walk.errors);
  return value;
}

function convertField(field: protobuf.Field, json: unknown, path: string, walk: Walk): unknown {
  const rules = fieldRules(field);
  const nullable = nullIsAValue(field.resolvedType);
  if (field instanceof protobuf.MapField) {
    if (!isPlainObject(json)) return void report(walk.errors, path, `expected an object (map<${field.keyType}, ${field.type}>), got ${describe(json)}`);
    if (!isScalarKind(field.keyType)) throw new Error(`${field.fullName}: bad map key type ${field.keyType}`);
    const out: PlainObject = {};
    for (const [rawKey, value] of Object.entries(json)) {
      const entryPath = keyPath(path, rawKey);
      const key = convertMapKey(field.keyType, rawKey, entryPath, walk.errors);
      if (value === null && !nullable) report(walk.errors, entryPath, "map values cannot be null");
      else if (key !== undefined) out[key] = convertSingle(field, value, entryPath, walk, elementRules(rules, "map"));
    }
    checkCountRules("map", Object.keys(json).length, rules, path, walk.errors);
    return Object.keys(out).length === 0 ? undefined : out; // an empty map is no map in proto3
  }
  if (field.repeated) {
    if (!Array.isArray(json)) return void report(walk.errors, path, `expected an array (repeated ${field.type}), got ${describe(json)}`);
    const items = (json as unknown[]).map((item, i) => {
      if (item === null && !nullable) return void report(walk.errors, indexPath(path, i), "repeated elements cannot be null");
      return convertSingle(field, item, indexPath(path, i), walk, elementRules(rules, "repeated"));
    });
    checkCountRules("repeated", items.length, rules, path, walk.errors);
    return items.length === 0 ? undefined : items; // an empty list is no list in proto3
  }
  return convertSingle(field, json, path, walk, rules);
}

/** PGV on fields the JSON left out: `required`, and scalar rules applied to the zero value. */
function checkAbsentField(field: protobuf.Field, path: string, walk: Walk): void {
  const rules = fieldRules(field);
  // Rules on a oneof member (even `required`) only apply when that member is the one set.
  if (rules === undefined || field.partOf !== null) return;
  const where = fieldPath(path, field.name);
  if (isRequired(rules)) return void report(walk.errors, where, "is required (validate.rules)");
  if (field instanceof protobuf.MapField) return checkCountRules("map", 0, rules, where, walk.errors);
  if (field.repeated) return checkCountRules("repeated", 0, rules, where, walk.errors);
  if (field.resolvedType instanceof protobuf.Type) return;
  if (field.resolvedType instanceof protobuf.Enum) return checkScalarRules("enum", 0, rules, where, walk.errors, Object.values(field.resolvedType.values));
  if (!isScalarKind(field.type)) return;
  const zero = field.type === "string" ? "" : field.type === "bool" ? false : field.type === "bytes" ? new Uint8Array() : 0;
  checkScalarRules(field.type, zero, rules, where, walk.errors);
}

function convertMessage(type: protobuf.Type, json: unknown, path: string, walk: Walk, rules: PlainObject | undefined): PlainObject | undefined {
  const special = wellKnownConverter(type);
  if (special !== undefined) return special(json, path, walk.errors, type, rules);
  if (type.fullName === ".google.protobuf.Any") return convertAny(json, path, walk);
  if (!isPlainObject(json)) return void report(walk.errors, path, `expected an object (${typeName(type)}), got ${describe(json)}`);
  const out: PlainObject = {};
  const givenAs = new Map<string, string>();
  for (const [key, value] of Object.entries(json)) {
    const where = fieldPath(path, key);
    const field = fieldIndex(type).get(key);
    if (field === undefined) {
      report(walk.errors, where, `unknown field ${JSON.stringify(key)} in ${typeName(type)}${suggestion(key, type)}`);
      continue;
    }
    const earlier = givenAs.get(field.name);
    if (earlier !== undefined) {
      report(walk.errors, where, `field ${field.name} given twice (as ${JSON.stringify(earlier)} and ${JSON.stringify(key)})`);
      continue;
    }
    if (!walk.allowDeprecated && isDeprecated(field.options)) report(walk.errors, where, `field ${field.name} of ${typeName(type)} is deprecated`);
    if (value === null && !(nullIsAValue(field.resolvedType) && !field.repeated)) continue; // proto3 JSON: null means "not set"
    givenAs.set(field.name, key);
    const converted = convertField(field, value, where, walk);
    if (converted !== undefined) out[field.name] = converted;
  }
  for (const oneof of type.oneofsArray) {
    const members = oneof.oneof.filter((name) => givenAs.has(name)).map((name) => givenAs.get(name) ?? name);
    if (members.length > 1) report(walk.errors, path, `oneof ${oneof.name} takes at most one of its fields, got ${members.join(", ")}`);
    if (members.length === 0 && oneofRequired(oneof)) {
      report(walk.errors, path, `oneof ${oneof.name} requires one of ${oneof.oneof.join(", ")} (validate.required)`);
    }
  }
  for (const field of type.fieldsArray) if (!givenAs.has(field.name)) checkAbsentField(field, path, walk);
  return out;
}

const CANONICAL: protobuf.IConversionOptions = { longs: String, enums: Number, bytes: String, defaults: false };

function canonical(value: unknown): unknown {
  if (value instanceof Uint8Array) return Buffer.from(value).toString("base64");
  if (Array.isArray(value)) return (value as unknown[]).map(canonical);
  if (isPlainObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, canonical(v)]));
  return value;
}

function roundTrip(type: protobuf.Type, object: PlainObject): ProtoJsonResult {
  const message = type.fromObject(object);
  const fail = (why: string): ProtoJsonResult => ({ ok: false, errors: [`(root): ${typeName(type)} ${why}`] });
  const invalid = type.verify(message);
  if (invalid !== null) return fail(`fails protobufjs verify: ${invalid}`);
  if (!isDeepStrictEqual(canonical(type.toObject(message, CANONICAL)), canonical(object))) {
    return fail("lost or changed values in Type.fromObject");
  }
  const bytes = type.encode(message).finish();
  const decoded = type.decode(bytes);
  if (!Buffer.from(type.encode(decoded).finish()).equals(Buffer.from(bytes))) return fail("does not round-trip through encode/decode");
  return { ok: true, message: decoded, type };
}

/**
 * Converts `json` (a YAML/JSON-parsed value) into the message `typeName` (e.g.
 * `envoy.config.bootstrap.v3.Bootstrap`) of `root`, strictly: every problem is reported with
 * its path, e.g. `static_resources.clusters[0].connect_timeout: invalid Duration …`.
 */
export function protoFromJson(root: protobuf.Root, typeName: string, json: unknown, options: ProtoJsonOptions = {}): ProtoJsonResult {
  const type = root.lookup(typeName, [protobuf.Type]);
  if (!(type instanceof protobuf.Type)) return { ok: false, errors: [`(root): no message type ${typeName} is loaded`] };
  const walk: Walk = { root, errors: [], allowDeprecated: options.allowDeprecated ?? false };
  const object = convertMessage(type, json, "", walk, undefined);
  if (walk.errors.length > 0 || object === undefined) return { ok: false, errors: walk.errors };
  return roundTrip(type, object);
}

/**
 * The message as plain data for inspection, in protobufjs's `toObject` form (not proto3 JSON):
 * snake_case names, enums as names, 64-bit integers and bytes as strings, defaults omitted,
 * every `Any` expanded to `{ "@type": …, …fields }`; well-known types stay messages
 * (Duration `{ seconds, nanos }`, wrappers `{ value }`, Struct `{ fields: { k: { stringValue } } }`).
 */
export function toPlainObject(type: protobuf.Type, message: protobuf.Message): PlainObject {
  return type.toObject(message, { json: true, enums: String, longs: String, bytes: String, defaults: false });
}
