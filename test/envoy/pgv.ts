/**
 * The cheap subset of protoc-gen-validate rules (`(validate.rules)` / `(validate.required)`),
 * which Envoy runs on every config it loads (`MessageUtil::validate`). Implemented: message
 * `required`; oneof `required`; numeric `const/lt/lte/gt/gte/in/not_in`; string
 * `const/len/min_len/max_len/prefix/suffix`; bool `const`; enum `defined_only/const/in/not_in`;
 * repeated `min_items/max_items/items`; map `min_pairs/max_pairs/values`; duration
 * `required/lt/lte/gt/gte`; `ignore_empty`. Not implemented (so never reported): regex
 * `pattern`, `well_known_regex`, addresses, `unique`, timestamp and Any rules.
 */
import type protobuf from "protobufjs";
import { report, type ErrorList } from "./errors.ts";
import { isPlainObject, type PlainObject } from "./plain.ts";

/** A scalar's converted value as it goes into `fromObject`. */
export type CheckedScalar = number | string | boolean | Uint8Array;

function mergeDeep(into: PlainObject, from: PlainObject): PlainObject {
  for (const [key, value] of Object.entries(from)) {
    const existing = into[key];
    into[key] = isPlainObject(existing) && isPlainObject(value) ? mergeDeep({ ...existing }, value) : value;
  }
  return into;
}

function parsedOption(owner: protobuf.ReflectionObject, name: string): unknown {
  let found: unknown;
  for (const entry of (owner.parsedOptions ?? []) as unknown[]) {
    if (!isPlainObject(entry) || !(name in entry)) continue;
    const value = entry[name];
    found = isPlainObject(found) && isPlainObject(value) ? mergeDeep({ ...found }, value) : value;
  }
  return found;
}

/** The field's `(validate.rules)`, merged when given as several options; undefined if none. */
export function fieldRules(field: protobuf.Field): PlainObject | undefined {
  const rules = parsedOption(field, "(validate.rules)");
  return isPlainObject(rules) ? rules : undefined;
}

/** True when the oneof carries `option (validate.required) = true`. */
export function oneofRequired(oneof: protobuf.OneOf): boolean {
  return parsedOption(oneof, "(validate.required)") === true;
}

/** Rules for one kind (`uint32`, `string`, `repeated`…) inside a field's rules. */
export function rulesFor(rules: PlainObject | undefined, kind: string): PlainObject | undefined {
  const sub = rules?.[kind];
  return isPlainObject(sub) ? sub : undefined;
}

/** Rules for each element of a repeated field, or each value of a map. */
export function elementRules(rules: PlainObject | undefined, container: "repeated" | "map"): PlainObject | undefined {
  const sub = rulesFor(rules, container)?.[container === "repeated" ? "items" : "values"];
  return isPlainObject(sub) ? sub : undefined;
}

/** `(validate.rules).message.required` (also spelled on Duration/Any/Timestamp rules). */
export function isRequired(rules: PlainObject | undefined): boolean {
  for (const kind of ["message", "duration", "any", "timestamp"]) {
    if (rulesFor(rules, kind)?.["required"] === true) return true;
  }
  return false;
}

function toNumber(value: unknown): number | undefined {
  if (typeof value === "number") return value;
  if (typeof value === "string" && value.trim() !== "" && !Number.isNaN(Number(value))) return Number(value);
  return undefined;
}

function checkNumeric(value: number, rules: PlainObject, path: string, errors: ErrorList): void {
  const bound = (key: string): number | undefined => toNumber(rules[key]);
  const failures: string[] = [];
  const c = bound("const");
  if (c !== undefined && value !== c) failures.push(`must equal ${c}`);
  const lt = bound("lt");
  if (lt !== undefined && !(value < lt)) failures.push(`must be < ${lt}`);
  const lte = bound("lte");
  if (lte !== undefined && !(value <= lte)) failures.push(`must be <= ${lte}`);
  const gt = bound("gt");
  if (gt !== undefined && !(value > gt)) failures.push(`must be > ${gt}`);
  const gte = bound("gte");
  if (gte !== undefined && !(value >= gte)) failures.push(`must be >= ${gte}`);
  const allowed = rules["in"];
  if (Array.isArray(allowed) && !allowed.map(toNumber).includes(value)) failures.push(`must be one of ${allowed.join(", ")}`);
  const banned = rules["not_in"];
  if (Array.isArray(banned) && banned.map(toNumber).includes(value)) failures.push(`must not be one of ${banned.join(", ")}`);
  for (const failure of failures) report(errors, path, `${value} ${failure} (validate.rules)`);
}

function checkString(value: string, rules: PlainObject, path: string, errors: ErrorList): void {
  const length = [...value].length;
  const num = (key: string): number | undefined => toNumber(rules[key]);
  const shown = JSON.stringify(value);
  if (typeof rules["const"] === "string" && value !== rules["const"]) {
    report(errors, path, `${shown} must equal ${JSON.stringify(rules["const"])} (validate.rules)`);
  }
  const len = num("len");
  if (len !== undefined && length !== len) report(errors, path, `${shown} must be ${len} characters long (validate.rules)`);
  const min = num("min_len");
  if (min !== undefined && length < min) report(errors, path, `${shown} must be at least ${min} characters long (validate.rules)`);
  const max = num("max_len");
  if (max !== undefined && length > max) report(errors, path, `${shown} must be at most ${max} characters long (validate.rules)`);
  if (typeof rules["prefix"] === "string" && !value.startsWith(rules["prefix"])) {
    report(errors, path, `${shown} must start with ${JSON.stringify(rules["prefix"])} (validate.rules)`);
  }
  if (typeof rules["suffix"] === "string" && !value.endsWith(rules["suffix"])) {
    report(errors, path, `${shown} must end with ${JSON.stringify(rules["suffix"])} (validate.rules)`);
  }
}

function isEmptyValue(kind: string, value: CheckedScalar): boolean {
  if (typeof value === "string") return value === "" || (kind !== "string" && value === "0"); // 64-bit ints are strings
  if (typeof value === "number") return value === 0;
  if (typeof value === "boolean") return !value;
  return value.length === 0;
}

/**
 * Checks a scalar against `rules[kind]` (`kind` is the proto scalar type name, e.g. `uint32`,
 * or `enum` with `definedNumbers`, the numbers the enum defines).
 */
export function checkScalarRules(
  kind: string,
  value: CheckedScalar,
  rules: PlainObject | undefined,
  path: string,
  errors: ErrorList,
  definedNumbers?: readonly number[],
): void {
  const own = rulesFor(rules, kind);
  if (own === undefined || (own["ignore_empty"] === true && isEmptyValue(kind, value))) return;
  if (kind === "enum" && typeof value === "number") {
    if (own["defined_only"] === true && definedNumbers !== undefined && !definedNumbers.includes(value)) {
      report(errors, path, `enum number ${value} is not defined (validate.rules defined_only)`);
    }
    checkNumeric(value, { const: own["const"], in: own["in"], not_in: own["not_in"] }, path, errors);
  } else if (typeof value === "string" && kind === "string") {
    checkString(value, own, path, errors);
  } else if (typeof value === "boolean") {
    if (typeof own["const"] === "boolean" && value !== own["const"]) {
      report(errors, path, `${value} must be ${own["const"]} (validate.rules)`);
    }
  } else if (typeof value === "number" || (typeof value === "string" && kind !== "bytes")) {
    const numeric = toNumber(value);
    if (numeric !== undefined) checkNumeric(numeric, own, path, errors);
  }
}

function durationSeconds(value: unknown): number | undefined {
  if (!isPlainObject(value)) return undefined;
  return (toNumber(value["seconds"]) ?? 0) + (toNumber(value["nanos"]) ?? 0) / 1e9;
}

/** Checks a Duration (as seconds + nanos) against `(validate.rules).duration` bounds. */
export function checkDurationRules(seconds: number, rules: PlainObject | undefined, path: string, errors: ErrorList): void {
  const own = rulesFor(rules, "duration");
  if (own === undefined) return;
  const bounds: PlainObject = {};
  for (const key of ["const", "lt", "lte", "gt", "gte"]) {
    const bound = durationSeconds(own[key]);
    if (bound !== undefined) bounds[key] = bound;
  }
  const before = errors.length;
  checkNumeric(seconds, bounds, path, errors);
  for (let i = before; i < errors.length; i++) errors[i] = `${errors[i]} (durations in seconds)`;
}

/** Checks a repeated field's length (`min_items`/`max_items`) or a map's size (`*_pairs`). */
export function checkCountRules(container: "repeated" | "map", count: number, rules: PlainObject | undefined, path: string, errors: ErrorList): void {
  const own = rulesFor(rules, container);
  if (own === undefined || (own["ignore_empty"] === true && count === 0)) return;
  const [minKey, maxKey] = container === "repeated" ? ["min_items", "max_items"] : ["min_pairs", "max_pairs"];
  const min = toNumber(own[minKey]);
  if (min !== undefined && count < min) report(errors, path, `needs at least ${min} entries, has ${count} (validate.rules)`);
  const max = toNumber(own[maxKey]);
  if (max !== undefined && count > max) report(errors, path, `allows at most ${max} entries, has ${count} (validate.rules)`);
}
