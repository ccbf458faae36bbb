#!/usr/bin/env node
// Regenerates proto/generated/: TypeScript types for the Envoy protos Gearbox speaks, made by
// @grpc/proto-loader's generator from the protos vendored in @grpc/grpc-js-xds (deps/).
// Run with `npm run proto:gen`; never edit proto/generated/ by hand.
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import path from "node:path";

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const deps = path.join(root, "node_modules/@grpc/grpc-js-xds/deps");
const out = path.join(root, "proto/generated");
const protos = ["envoy/service/ext_proc/v3/external_processor.proto"];

rmSync(out, { recursive: true, force: true });
execFileSync(
  path.join(root, "node_modules/.bin/proto-loader-gen-types"),
  [
    "--keepCase",
    "--longs=String",
    "--enums=String",
    "--oneofs",
    "--grpcLib=@grpc/grpc-js",
    `--outDir=${out}`,
    "--includeDirs",
    ...["envoy-api", "xds", "protoc-gen-validate", "googleapis"].map((d) => path.join(deps, d)),
    "--",
    ...protos,
  ],
  { stdio: "inherit" },
);

// The generator writes extensionless relative imports and absolute source paths; the project is
// ESM (NodeNext), so imports get their `.ts` and comments get paths relative to deps/.
for (const entry of readdirSync(out, { recursive: true, encoding: "utf8" })) {
  if (!entry.endsWith(".ts")) continue;
  const file = path.join(out, entry);
  const text = readFileSync(file, "utf8")
    .replace(`// Original file: ${deps}/`, "// Original file: ")
    .replace(/from '(\.[^']+)'/g, "from '$1.ts'");
  writeFileSync(file, text);
}
