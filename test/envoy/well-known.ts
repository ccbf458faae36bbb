/**
 * Proto3 JSON forms of the well-known types Envoy configs use: Duration ("1.5s"), Timestamp
 * (RFC 3339), FieldMask ("a.b,c"), the wrappers (a bare scalar), Struct / Value / ListValue
 * (free JSON). `Any` needs the whole type walk, so it lives in `proto-json.ts`.
 */
import type protobuf from "protobufjs";
import { report, fieldPath, indexPath, keyPath, type ErrorList } from "./errors.ts";
import { checkDurationRules, checkScalarRules } from "./pgv.ts";
import { describe, isPlainObject, lowerCamel, snakeCase, type PlainObject } from "./plain.ts";
import { convertScalar, type ScalarKind } from "./scalars.ts";

/** Converts the special JSON form of one well-known type into a `fromObject` input. */
export type WellKnownConverter = (
  json: unknown,
  path: string,
  errors: ErrorList,
  type: protobuf.Type,
  rules: PlainObject | undefined,
) => PlainObject | undefined;

/** Largest |seconds| protobuf allows in a Duration (10,000 years). */
const MAX_DURATION_SECONDS = 315_576_000_000n;
const DURATION = /^(-)?(\d+)(?:\.(\d{1,9}))?s$/;
const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?([Zz]|[+-]\d{2}:\d{2})$/;

const WRAPPERS: Readonly<Record<string, ScalarKind>> = {
  ".google.protobuf.DoubleValue": "double",
  ".google.protobuf.FloatValue": "float",
  ".google.protobuf.Int64Value": "int64",
  ".google.protobuf.UInt64Value": "uint64",
  ".google.protobuf.Int32Value": "int32",
  ".google.protobuf.UInt32Value": "uint32",
  ".google.protobuf.BoolValue": "bool",
  ".google.protobuf.StringValue": "string",
  ".google.protobuf.BytesValue": "bytes",
};

/** The field of a well-known type under its proto name or camelCase (protobufjs bundles both styles). */
function fieldName(type: protobuf.Type, snake: string): string {
  if (snake in type.fields) return snake;
  const camel = lowerCamel(snake);
  if (camel in type.fields) return camel;
  throw new Error(`${type.fullName} has no field ${snake}`);
}

function nanosOf(fraction: string | undefined): number {
  return Number((fraction ?? "").padEnd(9, "0"));
}

const convertDuration: WellKnownConverter = (json, path, errors, _type, rules) => {
  const match = typeof json === "string" ? DURATION.exec(json) : null;
  if (match === null) {
    return void report(errors, path, `invalid Duration ${describe(json)}: expected a string such as "1.5s", "0.250s" or "300s"`);
  }
  const negative = match[1] === "-";
  const seconds = BigInt(match[2] ?? "0");
  if (seconds > MAX_DURATION_SECONDS) return void report(errors, path, `Duration ${JSON.stringify(json)} exceeds 315576000000s`);
  const nanos = nanosOf(match[3]);
  checkDurationRules((negative ? -1 : 1) * (Number(seconds) + nanos / 1e9), rules, path, errors);
  // Zero parts are left out, as protobuf's own JSON parser leaves them unset.
  return {
    ...(seconds === 0n ? {} : { seconds: (negative ? -seconds : seconds).toString() }),
    ...(nanos === 0 ? {} : { nanos: negative ? -nanos : nanos }),
  };
};

const convertTimestamp: WellKnownConverter = (json, path, errors) => {
  const m = typeof json === "string" ? TIMESTAMP.exec(json) : null;
  if (m === null) return void report(errors, path, `invalid Timestamp ${describe(json)}: expected RFC 3339, e.g. "2024-01-01T00:00:00Z"`);
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const zone = m[8] ?? "Z";
  const offsetMinutes = /^[Zz]$/.test(zone) ? 0 : (zone.startsWith("-") ? -1 : 1) * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4, 6)));
  const millis = Date.UTC(year, month - 1, day, hour, minute, second);
  const check = new Date(millis);
  if (year < 1 || check.getUTCMonth() !== month - 1 || check.getUTCDate() !== day || hour > 23 || minute > 59 || second > 59) {
    return void report(errors, path, `invalid Timestamp ${JSON.stringify(json)}: no such date or time`);
  }
  const seconds = millis / 1000 - offsetMinutes * 60;
  const nanos = nanosOf(m[7]);
  return { ...(seconds === 0 ? {} : { seconds: String(seconds) }), ...(nanos === 0 ? {} : { nanos }) };
};

const convertFieldMask: WellKnownConverter = (json, path, errors) => {
  if (typeof json !== "string") return void report(errors, path, `expected FieldMask (a string such as "a.b,c"), got ${describe(json)}`);
  const paths = json === "" ? [] : json.split(",");
  for (const p of paths) {
    if (!/^[a-zA-Z][a-zA-Z0-9]*(\.[a-zA-Z][a-zA-Z0-9]*)*$/.test(p)) {
      return void report(errors, path, `invalid FieldMask path ${JSON.stringify(p)} (lowerCamelCase segments joined by ".")`);
    }
  }
  return paths.length === 0 ? {} : { paths: paths.map((p) => p.split(".").map(snakeCase).join(".")) };
};

function wrapper(kind: ScalarKind): WellKnownConverter {
  return (json, path, errors, _type, rules) => {
    const value = convertScalar(kind, json, path, errors);
    if (value === undefined) return undefined;
    checkScalarRules(kind, value, rules, path, errors);
    return { value };
  };
}

/** google.protobuf.Value from any JSON value (null becomes NULL_VALUE). */
function convertValue(json: unknown, path: string, errors: ErrorList, valueType: protobuf.Type): PlainObject | undefined {
  const root = valueType.root;
  if (json === null) return { [fieldName(valueType, "null_value")]: 0 };
  if (typeof json === "number") {
    if (!Number.isFinite(json)) return void report(errors, path, `a Value number must be finite, got ${json}`);
    return { [fieldName(valueType, "number_value")]: json };
  }
  if (typeof json === "string") return { [fieldName(valueType, "string_value")]: json };
  if (typeof json === "boolean") return { [fieldName(valueType, "bool_value")]: json };
  if (Array.isArray(json)) {
    const list = convertListValue(json, path, errors, root.lookupType("google.protobuf.ListValue"), undefined);
    return list === undefined ? undefined : { [fieldName(valueType, "list_value")]: list };
  }
  if (isPlainObject(json)) {
    const struct = convertStruct(json, path, errors, root.lookupType("google.protobuf.Struct"), undefined);
    return struct === undefined ? undefined : { [fieldName(valueType, "struct_value")]: struct };
  }
  return void report(errors, path, `expected a JSON value, got ${describe(json)}`);
}

const convertStruct: WellKnownConverter = (json, path, errors, type) => {
  if (!isPlainObject(json)) return void report(errors, path, `expected Struct (a JSON object), got ${describe(json)}`);
  const valueType = type.root.lookupType("google.protobuf.Value");
  const fields: PlainObject = {};
  let ok = true;
  for (const [key, value] of Object.entries(json)) {
    const converted = convertValue(value, /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? fieldPath(path, key) : keyPath(path, key), errors, valueType);
    if (converted === undefined) ok = false;
    else fields[key] = converted;
  }
  if (!ok) return undefined;
  return Object.keys(fields).length === 0 ? {} : { [fieldName(type, "fields")]: fields };
};

const convertListValue: WellKnownConverter = (json, path, errors, type) => {
  if (!Array.isArray(json)) return void report(errors, path, `expected ListValue (a JSON array), got ${describe(json)}`);
  const valueType = type.root.lookupType("google.protobuf.Value");
  const values = (json as unknown[]).map((item, i) => convertValue(item, indexPath(path, i), errors, valueType));
  if (!values.every((v) => v !== undefined)) return undefined;
  return values.length === 0 ? {} : { [fieldName(type, "values")]: values };
};

const CONVERTERS: Readonly<Record<string, WellKnownConverter>> = {
  ".google.protobuf.Duration": convertDuration,
  ".google.protobuf.Timestamp": convertTimestamp,
  ".google.protobuf.FieldMask": convertFieldMask,
  ".google.protobuf.Struct": convertStruct,
  ".google.protobuf.ListValue": convertListValue,
  ".google.protobuf.Value": (json, path, errors, type) => convertValue(json, path, errors, type),
  ...Object.fromEntries(Object.entries(WRAPPERS).map(([name, kind]) => [name, wrapper(kind)])),
};

/** The special-JSON converter for `type`, or undefined when it is an ordinary message. */
export function wellKnownConverter(type: protobuf.Type): WellKnownConverter | undefined {
  return CONVERTERS[type.fullName];
}

/** True when JSON `null` is a value of `type` (google.protobuf.Value) rather than "unset". */
export function nullIsAValue(type: protobuf.Type | protobuf.Enum | null): boolean {
  return type?.fullName === ".google.protobuf.Value" || type?.fullName === ".google.protobuf.NullValue";
}
