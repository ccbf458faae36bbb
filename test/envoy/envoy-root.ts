/**
 * A protobufjs `Root` holding Envoy's own API types, loaded from the protos vendored in
 * `@grpc/grpc-js-xds` (the same tree the ext_proc server uses, via `ENVOY_PROTO_DIRS`).
 *
 * Only the files named below (and what they import) are loaded. An extension whose proto is
 * not loaded cannot be named in an `Any`: the checker reports its `@type` as unknown, just as
 * an Envoy binary built without that extension rejects the config. Add the proto here when a
 * config starts using a new extension.
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import protobuf from "protobufjs";
import { ENVOY_PROTO_DIRS } from "../../common/envoy/protos.ts";

const require = createRequire(import.meta.url);

/** Proto files holding every type (top-level and extension) the configs under `envoy/` use. */
export const ENVOY_CONFIG_PROTO_FILES: readonly string[] = [
  // Top level: Bootstrap pulls in listener, cluster (incl. ORIGINAL_DST lb config), route,
  // core (health checks, gRPC service, protocol options) and the matcher types.
  "envoy/config/bootstrap/v3/bootstrap.proto",
  // Network filter.
  "envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager.proto",
  // HTTP filters (ext_proc brings ProcessingMode and ExtProcPerRoute).
  "envoy/extensions/filters/http/ext_proc/v3/ext_proc.proto",
  "envoy/extensions/filters/http/router/v3/router.proto",
  // Strips caller-sent routing headers ahead of ext_proc.
  "envoy/extensions/filters/http/header_mutation/v3/header_mutation.proto",
  // The Istio HTTPS interception chains check that :authority is the SNI they terminated.
  "envoy/extensions/filters/http/rbac/v3/rbac.proto",
  // Cluster extensions.
  "envoy/extensions/upstreams/http/v3/http_protocol_options.proto",
  "envoy/extensions/transport_sockets/tls/v3/tls.proto",
  // The HTTPS interception listener (sidecar.yaml llm_egress_tls) reads the SNI with it.
  "envoy/extensions/filters/listener/tls_inspector/v3/tls_inspector.proto",
  // Access log to stdout.
  "envoy/extensions/access_loggers/stream/v3/stream.proto",
];

/**
 * Include dirs: Envoy's, then protobufjs's own copy of `google/protobuf/*.proto` for the few
 * well-known files (descriptor.proto) protobufjs does not bundle.
 */
function includeDirs(): readonly string[] {
  const protobufjsDir = path.dirname(require.resolve("protobufjs/package.json"));
  return [...ENVOY_PROTO_DIRS, protobufjsDir];
}

/**
 * Loads `files` into a fresh Root with snake_case field names kept (as in Envoy's protos and
 * docs) and resolves every type, so lookups and `fromObject` work on any nested message.
 * Throws when a file or an import cannot be found: that is a broken checkout, not a bad config.
 */
export function loadEnvoyRoot(files: readonly string[] = ENVOY_CONFIG_PROTO_FILES): protobuf.Root {
  const dirs = includeDirs();
  const root = new protobuf.Root();
  root.resolvePath = (origin: string, target: string): string | null => {
    if (path.isAbsolute(target)) return target;
    for (const dir of dirs) {
      const candidate = path.join(dir, target);
      if (existsSync(candidate)) return candidate;
    }
    // Let protobufjs report the missing file with its own name in the message.
    return target;
  };
  root.loadSync([...files], { keepCase: true });
  root.resolveAll();
  return root;
}

let shared: protobuf.Root | undefined;

/** The process-wide Root for {@link ENVOY_CONFIG_PROTO_FILES}, loaded on first use. */
export function envoyRoot(): protobuf.Root {
  shared ??= loadEnvoyRoot();
  return shared;
}
