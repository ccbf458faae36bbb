/**
 * Reads the Envoy configs under `envoy/` for the tests: YAML → plain value → Bootstrap.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import YAML from "yaml";
import { envoyRoot } from "./envoy-root.ts";
import { protoFromJson, type ProtoJsonOptions, type ProtoJsonResult } from "./proto-json.ts";

/** Envoy's top-level config type. */
export const BOOTSTRAP_TYPE = "envoy.config.bootstrap.v3.Bootstrap";

/** Absolute path of the repository's `envoy/` folder. */
export const ENVOY_CONFIG_DIR = fileURLToPath(new URL("../../envoy/", import.meta.url));

/** File names of every `*.yaml` under `envoy/`, sorted. */
export function envoyConfigFiles(): string[] {
  return readdirSync(ENVOY_CONFIG_DIR)
    .filter((name) => name.endsWith(".yaml"))
    .sort();
}

/**
 * Parses one YAML file under `envoy/` into plain data (anchors resolved into independent
 * copies, as Envoy's YAML → JSON → proto load makes them: an edit to one place in a test must
 * not show up at every alias). Throws on YAML errors, duplicate keys included, since those are
 * not proto problems.
 */
export function readEnvoyYaml(name: string): unknown {
  const doc = YAML.parseDocument(readFileSync(path.join(ENVOY_CONFIG_DIR, name), "utf8"), { uniqueKeys: true });
  if (doc.errors.length > 0) throw new Error(`${name}: ${doc.errors.map((e) => e.message).join("; ")}`);
  return JSON.parse(JSON.stringify(doc.toJS())) as unknown;
}

/** Converts plain data into a Bootstrap with the strict checker. */
export function parseBootstrap(json: unknown, options?: ProtoJsonOptions): ProtoJsonResult {
  return protoFromJson(envoyRoot(), BOOTSTRAP_TYPE, json, options);
}
