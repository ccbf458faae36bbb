/**
 * Envoy's real protos, loaded once per process from the tree vendored in @grpc/grpc-js-xds
 * (`deps/`). Both the ext_proc server and the test harness (which plays Envoy) use this module,
 * so they speak exactly the same wire types.
 */
import { createRequire } from "node:module";
import path from "node:path";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import type { ProtoGrpcType } from "../../proto/generated/external_processor.ts";

const require = createRequire(import.meta.url);

/** Include dirs for Envoy's API protos and their dependencies. */
export const ENVOY_PROTO_DIRS: readonly string[] = (() => {
  const deps = path.join(path.dirname(require.resolve("@grpc/grpc-js-xds/package.json")), "deps");
  return ["envoy-api", "xds", "protoc-gen-validate", "googleapis"].map((d) => path.join(deps, d));
})();

/** Loader options shared by every user: snake_case fields as in Envoy's docs, enums as names. */
export const PROTO_LOADER_OPTIONS: protoLoader.Options = {
  keepCase: true,
  longs: String,
  enums: String,
  defaults: false,
  oneofs: true,
  includeDirs: [...ENVOY_PROTO_DIRS],
};

let extProc: ProtoGrpcType | undefined;

/** The `envoy.service.ext_proc.v3` package (service definition and client constructor). */
export function extProcPackage(): ProtoGrpcType {
  extProc ??= grpc.loadPackageDefinition(
    protoLoader.loadSync("envoy/service/ext_proc/v3/external_processor.proto", PROTO_LOADER_OPTIONS),
  ) as unknown as ProtoGrpcType;
  return extProc;
}
