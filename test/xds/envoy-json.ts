/**
 * Checks a packed xDS resource against Envoy's own protos, independently of the Root that
 * built it: decode the bytes with the test harness's Envoy Root (`test/envoy/envoy-root.ts`),
 * write them out as proto3 JSON (nested `Any`s as `{"@type": ...}`, Durations as "1s", wrappers
 * as bare values, Structs as JSON), and parse that with the strict checker Envoy configs go
 * through (`protoFromJson`: unknown fields, oneofs, enums, PGV rules), which re-encodes it.
 */
import type protobuf from "protobufjs";
import { envoyRoot } from "../envoy/envoy-root.ts";
import { protoFromJson, toPlainObject, type ProtoJsonResult } from "../envoy/proto-json.ts";
import type { AnyMessage } from "../../common/control-plane/protos.ts";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const WRAPPERS = new Set(
  ["DoubleValue", "FloatValue", "Int64Value", "UInt64Value", "Int32Value", "UInt32Value", "BoolValue", "StringValue", "BytesValue"].map(
    (n) => `.google.protobuf.${n}`,
  ),
);
const LONG_TYPES = new Set(["int64", "uint64", "sint64", "fixed64", "sfixed64"]);

function messageType(typeUrl: string): protobuf.Type {
  return envoyRoot().lookupType(typeUrl.slice(typeUrl.lastIndexOf("/") + 1));
}

/** A 64-bit integer (a number, or a Long when long.js is installed) in decimal. */
function longString(value: unknown): string {
  return typeof value === "object" && value !== null ? (value as { toString(): string }).toString() : String(value);
}

function scalar(field: protobuf.Field, value: unknown): Json {
  if (LONG_TYPES.has(field.type)) return longString(value);
  if (field.type === "bytes") return Buffer.from(value as Uint8Array).toString("base64");
  return value as Json;
}

/** Set fields of a decoded message are its own properties; defaults live on the prototype. */
function has(message: object, field: string): boolean {
  return Object.prototype.hasOwnProperty.call(message, field);
}

function structValue(value: Record<string, unknown>): Json {
  if (has(value, "nullValue")) return null;
  if (has(value, "numberValue")) return value["numberValue"] as number;
  if (has(value, "stringValue")) return value["stringValue"] as string;
  if (has(value, "boolValue")) return value["boolValue"] as boolean;
  if (has(value, "structValue")) return struct(value["structValue"] as Record<string, unknown>);
  const list = (value["listValue"] as { values?: Record<string, unknown>[] } | undefined)?.values ?? [];
  return list.map(structValue);
}

function struct(value: Record<string, unknown>): Json {
  const fields = (value["fields"] ?? {}) as Record<string, Record<string, unknown>>;
  return Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, structValue(v)]));
}

function messageJson(type: protobuf.Type, message: Record<string, unknown>): Json {
  switch (type.fullName) {
    case ".google.protobuf.Any":
      return anyJson(message as unknown as AnyMessage);
    case ".google.protobuf.Duration": {
      const nanos = Number(message["nanos"] ?? 0);
      return `${longString(message["seconds"] ?? 0)}${nanos ? `.${String(nanos).padStart(9, "0")}` : ""}s`;
    }
    case ".google.protobuf.Struct":
      return struct(message);
    default:
      break;
  }
  if (WRAPPERS.has(type.fullName)) return scalar(type.fields["value"] as protobuf.Field, message["value"] ?? 0);
  const out: Record<string, Json> = {};
  for (const field of type.fieldsArray) {
    if (!has(message, field.name)) continue;
    const value = message[field.name];
    const one = (v: unknown): Json => {
      const resolved = field.resolvedType;
      if (resolved && "valuesById" in resolved) return resolved.valuesById[v as number] ?? (v as number);
      if (resolved) return messageJson(resolved, v as Record<string, unknown>);
      return scalar(field, v);
    };
    if (field.map) {
      const entries = Object.entries(value as Record<string, unknown>);
      if (entries.length > 0) out[field.name] = Object.fromEntries(entries.map(([k, v]) => [k, one(v)]));
    } else if (field.repeated) {
      if ((value as unknown[]).length > 0) out[field.name] = (value as unknown[]).map(one);
    } else {
      out[field.name] = one(value);
    }
  }
  return out;
}

function anyJson(any: AnyMessage): Json {
  const type = messageType(any.type_url);
  const json = messageJson(type, type.decode(any.value) as unknown as Record<string, unknown>);
  return { "@type": any.type_url, ...(json as Record<string, Json>) };
}

/** The resource as Envoy's proto3 JSON (a top-level `{"@type": ...}` object). */
export function envoyJson(any: AnyMessage): Record<string, Json> {
  return anyJson(any) as Record<string, Json>;
}

/** The strict checker's verdict on the resource, and its bytes as re-encoded from the JSON. */
export function checkWithEnvoyProtos(any: AnyMessage): { result: ProtoJsonResult; reencoded?: Buffer } {
  const { "@type": _type, ...json } = envoyJson(any);
  const typeName = any.type_url.slice(any.type_url.lastIndexOf("/") + 1);
  const result = protoFromJson(envoyRoot(), typeName, json);
  return result.ok ? { result, reencoded: Buffer.from(result.type.encode(result.message).finish()) } : { result };
}

/** The resource in the plain form `toPlainObject` gives Envoy configs (for comparisons with `envoy/*.yaml`). */
export function envoyPlain(any: AnyMessage): Record<string, unknown> {
  const type = messageType(any.type_url);
  return toPlainObject(type, type.decode(any.value));
}
