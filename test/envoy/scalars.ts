/**
 * Proto3 JSON mapping for scalar fields and map keys, strict in the way Envoy's loader is
 * (protobuf's `JsonStringToMessage`): a string field takes only a string, a bool only
 * true/false, integers take a number or a decimal string within the type's range, 64-bit
 * integers beyond 2^53 must be strings, floats take a number or "NaN"/"Infinity"/"-Infinity"
 * or a numeric string, bytes take base64 (standard or URL-safe).
 */
import { report, type ErrorList } from "./errors.ts";
import { describe } from "./plain.ts";
import type { CheckedScalar } from "./pgv.ts";

/** The proto scalar type names. */
export type ScalarKind =
  | "double"
  | "float"
  | "int32"
  | "sint32"
  | "sfixed32"
  | "uint32"
  | "fixed32"
  | "int64"
  | "sint64"
  | "sfixed64"
  | "uint64"
  | "fixed64"
  | "bool"
  | "string"
  | "bytes";

const SCALAR_KINDS: ReadonlySet<string> = new Set<ScalarKind>([
  "double",
  "float",
  "int32",
  "sint32",
  "sfixed32",
  "uint32",
  "fixed32",
  "int64",
  "sint64",
  "sfixed64",
  "uint64",
  "fixed64",
  "bool",
  "string",
  "bytes",
]);

/** True when `type` (a protobufjs `Field.type`) names a scalar rather than a message/enum. */
export function isScalarKind(type: string): type is ScalarKind {
  return SCALAR_KINDS.has(type);
}

type IntegerKind = Exclude<ScalarKind, "double" | "float" | "bool" | "string" | "bytes">;

const INT_RANGES: Readonly<Record<IntegerKind, readonly [bigint, bigint]>> = {
  int32: [-(2n ** 31n), 2n ** 31n - 1n],
  sint32: [-(2n ** 31n), 2n ** 31n - 1n],
  sfixed32: [-(2n ** 31n), 2n ** 31n - 1n],
  uint32: [0n, 2n ** 32n - 1n],
  fixed32: [0n, 2n ** 32n - 1n],
  int64: [-(2n ** 63n), 2n ** 63n - 1n],
  sint64: [-(2n ** 63n), 2n ** 63n - 1n],
  sfixed64: [-(2n ** 63n), 2n ** 63n - 1n],
  uint64: [0n, 2n ** 64n - 1n],
  fixed64: [0n, 2n ** 64n - 1n],
};

const FLOAT_MAX = 3.4028234663852886e38;

function convertInteger(kind: IntegerKind, json: unknown, path: string, errors: ErrorList): CheckedScalar | undefined {
  let value: bigint;
  if (typeof json === "number") {
    if (!Number.isInteger(json)) return void report(errors, path, `expected ${kind} (an integer), got ${describe(json)}`);
    if (!Number.isSafeInteger(json)) {
      return void report(errors, path, `${json} is beyond 2^53 and loses precision as a number; quote it as a string`);
    }
    value = BigInt(json);
  } else if (typeof json === "string" && /^-?\d+$/.test(json)) {
    value = BigInt(json);
  } else {
    return void report(errors, path, `expected ${kind} (an integer or a decimal string), got ${describe(json)}`);
  }
  const [min, max] = INT_RANGES[kind];
  if (value < min || value > max) return void report(errors, path, `${value} is out of range for ${kind} [${min}, ${max}]`);
  return kind.endsWith("64") ? value.toString() : Number(value);
}

function convertFloat(kind: "double" | "float", json: unknown, path: string, errors: ErrorList): number | undefined {
  let value: number;
  if (typeof json === "number" && Number.isFinite(json)) {
    value = json;
  } else if (json === "NaN" || json === "Infinity" || json === "-Infinity") {
    return Number(json);
  } else if (typeof json === "string" && json.trim() !== "" && Number.isFinite(Number(json))) {
    value = Number(json);
  } else {
    return void report(errors, path, `expected ${kind} (a finite number, a numeric string, "NaN" or "±Infinity"), got ${describe(json)}`);
  }
  if (kind === "float" && Math.abs(value) > FLOAT_MAX) return void report(errors, path, `${value} is out of range for float`);
  return value;
}

const BASE64_STANDARD = /^[A-Za-z0-9+/]*={0,2}$/;
const BASE64_URL_SAFE = /^[A-Za-z0-9_-]*={0,2}$/;

function isBase64(text: string): boolean {
  const unpadded = text.replace(/=+$/, "");
  const paddingOk = unpadded.length === text.length || text.length % 4 === 0;
  return (BASE64_STANDARD.test(text) || BASE64_URL_SAFE.test(text)) && paddingOk && unpadded.length % 4 !== 1;
}

function convertBytes(json: unknown, path: string, errors: ErrorList): Uint8Array | undefined {
  if (typeof json !== "string" || !isBase64(json)) {
    return void report(errors, path, `expected bytes (a base64 string), got ${describe(json)}`);
  }
  return new Uint8Array(Buffer.from(json, "base64"));
}

/** Converts one JSON scalar to the form `Type.fromObject` takes; undefined after an error. */
export function convertScalar(kind: ScalarKind, json: unknown, path: string, errors: ErrorList): CheckedScalar | undefined {
  switch (kind) {
    case "string":
      return typeof json === "string" ? json : void report(errors, path, `expected string, got ${describe(json)}`);
    case "bool":
      return typeof json === "boolean" ? json : void report(errors, path, `expected bool (true or false), got ${describe(json)}`);
    case "bytes":
      return convertBytes(json, path, errors);
    case "double":
    case "float":
      return convertFloat(kind, json, path, errors);
    case "int32":
    case "sint32":
    case "sfixed32":
    case "uint32":
    case "fixed32":
    case "int64":
    case "sint64":
    case "sfixed64":
    case "uint64":
    case "fixed64":
      return convertInteger(kind, json, path, errors);
    default: {
      const unreachable: never = kind;
      throw new Error(`unhandled scalar kind ${String(unreachable)}`);
    }
  }
}

/**
 * Checks a map key (always a JSON object key, so a string) against the key type: integer keys
 * must be decimal, bool keys "true"/"false". Returns the key as `fromObject` expects it.
 */
export function convertMapKey(kind: ScalarKind, key: string, path: string, errors: ErrorList): string | undefined {
  switch (kind) {
    case "string":
      return key;
    case "bool":
      return key === "true" || key === "false" ? key : void report(errors, path, `map key must be "true" or "false"`);
    case "double":
    case "float":
    case "bytes":
      return void report(errors, path, `${kind} is not a valid map key type`);
    case "int32":
    case "sint32":
    case "sfixed32":
    case "uint32":
    case "fixed32":
    case "int64":
    case "sint64":
    case "sfixed64":
    case "uint64":
    case "fixed64":
      return convertInteger(kind, key, path, errors) === undefined ? undefined : key;
    default: {
      const unreachable: never = kind;
      throw new Error(`unhandled map key kind ${String(unreachable)}`);
    }
  }
}
