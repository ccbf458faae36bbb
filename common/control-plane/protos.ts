/**
 * The control plane's wire types, loaded once per process: the ADS and edge-registry gRPC
 * services (@grpc/proto-loader over Envoy's protos vendored in @grpc/grpc-js-xds and Gearbox's
 * own under `proto/`), and a protobufjs `Root` of the resource types that travel inside
 * `google.protobuf.Any` (clusters, endpoints, listeners, routes, Gearbox's policy and
 * assignments), with `packAny` / `unpackAny`.
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import protobuf from "protobufjs";
import { ENVOY_PROTO_DIRS, PROTO_LOADER_OPTIONS } from "../envoy/protos.ts";

const require = createRequire(import.meta.url);

/** Gearbox's own protos (`gearbox/v1/*.proto`). */
export const GEARBOX_PROTO_DIR = fileURLToPath(new URL("../../proto", import.meta.url));

/** Envoy's include dirs, then Gearbox's, then protobufjs's copy of the well-known types. */
export const XDS_PROTO_DIRS: readonly string[] = [...ENVOY_PROTO_DIRS, GEARBOX_PROTO_DIR, path.dirname(require.resolve("protobufjs/package.json"))];

export const TYPE_URL_PREFIX = "type.googleapis.com/";

/** Type URLs of every resource the control plane serves. */
export const TYPE_URLS = Object.freeze({
  cluster: `${TYPE_URL_PREFIX}envoy.config.cluster.v3.Cluster`,
  endpoints: `${TYPE_URL_PREFIX}envoy.config.endpoint.v3.ClusterLoadAssignment`,
  listener: `${TYPE_URL_PREFIX}envoy.config.listener.v3.Listener`,
  route: `${TYPE_URL_PREFIX}envoy.config.route.v3.RouteConfiguration`,
  routingPolicy: `${TYPE_URL_PREFIX}gearbox.v1.RoutingPolicy`,
  edgeAssignment: `${TYPE_URL_PREFIX}gearbox.v1.EdgeAssignment`,
});

/** Files whose types (and imports) the resource Root holds. */
const RESOURCE_FILES = [
  "envoy/config/cluster/v3/cluster.proto",
  "envoy/config/endpoint/v3/endpoint.proto",
  "envoy/config/listener/v3/listener.proto",
  "envoy/config/route/v3/route.proto",
  "envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager.proto",
  "envoy/extensions/filters/http/router/v3/router.proto",
  "envoy/extensions/transport_sockets/tls/v3/tls.proto",
  "envoy/extensions/upstreams/http/v3/http_protocol_options.proto",
  "gearbox/v1/routing_policy.proto",
  "gearbox/v1/edge_assignment.proto",
  "gearbox/v1/edge_registry.proto",
];

const LOADER_OPTIONS: protoLoader.Options = { ...PROTO_LOADER_OPTIONS, includeDirs: [...XDS_PROTO_DIRS] };

/** A packed resource as gRPC carries it (`google.protobuf.Any`, proto-loader's shape). */
export interface AnyMessage {
  type_url: string;
  value: Buffer;
}

let ads: grpc.GrpcObject | undefined;
let registry: grpc.GrpcObject | undefined;
let root: protobuf.Root | undefined;

function lookup(pkg: grpc.GrpcObject, dotted: string): grpc.ServiceClientConstructor {
  let node: unknown = pkg;
  for (const part of dotted.split(".")) node = (node as Record<string, unknown>)[part];
  if (typeof node !== "function") throw new Error(`${dotted} is not in the loaded protos`);
  return node as grpc.ServiceClientConstructor;
}

/** `envoy.service.discovery.v3.AggregatedDiscoveryService`: `.service` for servers, `new (...)` for clients. */
export function adsService(): grpc.ServiceClientConstructor {
  ads ??= grpc.loadPackageDefinition(protoLoader.loadSync("envoy/service/discovery/v3/ads.proto", LOADER_OPTIONS));
  return lookup(ads, "envoy.service.discovery.v3.AggregatedDiscoveryService");
}

/** `gearbox.v1.EdgeRegistryService`: `.service` for servers, `new (...)` for clients. */
export function edgeRegistryService(): grpc.ServiceClientConstructor {
  registry ??= grpc.loadPackageDefinition(protoLoader.loadSync("gearbox/v1/edge_registry.proto", LOADER_OPTIONS));
  return lookup(registry, "gearbox.v1.EdgeRegistryService");
}

/** The protobufjs Root of every resource type (snake_case field names, as in the protos). */
export function resourceRoot(): protobuf.Root {
  if (root) return root;
  const r = new protobuf.Root();
  r.resolvePath = (_origin: string, target: string): string | null => {
    if (path.isAbsolute(target)) return target;
    for (const dir of XDS_PROTO_DIRS) {
      const candidate = path.join(dir, target);
      if (existsSync(candidate)) return candidate;
    }
    return target;
  };
  r.loadSync(RESOURCE_FILES, { keepCase: true });
  r.resolveAll();
  root = r;
  return r;
}

/** The message type a type URL names. Throws on a type the Root does not hold. */
export function typeOf(typeUrl: string): protobuf.Type {
  if (!typeUrl.startsWith(TYPE_URL_PREFIX)) throw new Error(`not a type URL: ${typeUrl}`);
  return resourceRoot().lookupType(typeUrl.slice(TYPE_URL_PREFIX.length));
}

/**
 * Packs a plain object (snake_case fields; nested `Any`s as `{ "@type": url, ...fields }`, as in
 * Envoy's JSON) into an `Any`. `fromObject` is strict about types but ignores unknown fields, so
 * callers build objects from typed builders, and tests re-check them against Envoy's protos.
 */
export function packAny(typeUrl: string, object: Record<string, unknown>): AnyMessage {
  const type = typeOf(typeUrl);
  const message = type.fromObject(withPackedAnys(object) as Record<string, unknown>);
  return { type_url: typeUrl, value: Buffer.from(type.encode(message).finish()) };
}

/** Decodes an `Any` into a plain object (snake_case; enums as names; 64-bit ints as strings). */
export function unpackAny(any: AnyMessage): Record<string, unknown> {
  const type = typeOf(any.type_url);
  return type.toObject(type.decode(any.value), { enums: String, longs: String, defaults: false, arrays: true, objects: true });
}

/** Replaces `{ "@type": url, ...fields }` objects (nested typed configs) by packed `Any`s. */
function withPackedAnys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withPackedAnys);
  if (value === null || typeof value !== "object" || Buffer.isBuffer(value) || value instanceof Uint8Array) return value;
  const object = value as Record<string, unknown>;
  const typeUrl = object["@type"];
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(object)) if (key !== "@type") out[key] = withPackedAnys(field);
  if (typeof typeUrl !== "string") return out;
  const packed = packAny(typeUrl, out);
  return { type_url: packed.type_url, value: packed.value };
}

/** JSON → `google.protobuf.Struct` in the Root's own field names (protobufjs's are camelCase). */
export function jsonToStruct(object: Record<string, unknown>): { fields: Record<string, unknown> } {
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(object)) if (value !== undefined) fields[key] = jsonToValue(value);
  return { fields };
}

function jsonToValue(value: unknown): Record<string, unknown> {
  if (value === null) return { nullValue: "NULL_VALUE" };
  if (typeof value === "number") return { numberValue: value };
  if (typeof value === "string") return { stringValue: value };
  if (typeof value === "boolean") return { boolValue: value };
  if (Array.isArray(value)) return { listValue: { values: value.map(jsonToValue) } };
  if (typeof value === "object") return { structValue: jsonToStruct(value as Record<string, unknown>) };
  throw new TypeError(`cannot put a ${typeof value} in a Struct`);
}

/** `google.protobuf.Struct` (as `unpackAny` returns it) → JSON. */
export function structToJson(struct: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const fields = (struct as { fields?: Record<string, unknown> } | undefined)?.fields ?? {};
  for (const [key, value] of Object.entries(fields)) out[key] = valueToJson(value);
  return out;
}

function valueToJson(value: unknown): unknown {
  const v = (value ?? {}) as Record<string, unknown>;
  if ("numberValue" in v) return v.numberValue;
  if ("stringValue" in v) return v.stringValue;
  if ("boolValue" in v) return v.boolValue;
  if ("structValue" in v) return structToJson(v.structValue);
  if ("listValue" in v) return ((v.listValue as { values?: unknown[] }).values ?? []).map(valueToJson);
  return null;
}
