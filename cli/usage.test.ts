import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { PORT_ENV } from "../extproc/config/load.ts";
import { PRESETS } from "../extproc/providers/catalog.ts";
import { SERVER_USAGE, USAGE } from "./usage.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts") && !f.includes("node_modules"))
    .map((f) => path.join(ROOT, dir, f));
}

/** Every environment variable the processes' code reads: `env.X`, `process.env.X`, quoted GEARBOX_* names, the port overrides, each preset's key variable. */
function envVariablesRead(): Set<string> {
  const names = new Set<string>();
  for (const file of ["common", "extproc", "cli", "xds", "edge-agent"].flatMap(sources)) {
    const text = readFileSync(file, "utf8");
    for (const m of text.matchAll(/\benv\.([A-Z][A-Z0-9_]+)\b/g)) names.add(m[1] ?? "");
    // Names held in constants (`ADMIN_KEY_ENV = "GEARBOX_ADMIN_KEY"`), read as env[NAME].
    for (const m of text.matchAll(/["'`](GEARBOX_[A-Z0-9_]+)["'`]/g)) names.add(m[1] ?? "");
  }
  for (const name of Object.keys(PORT_ENV)) names.add(name);
  for (const p of Object.values(PRESETS)) if (p.api_key_env) names.add(p.api_key_env);
  return names;
}

test("gearbox --help names every environment variable the code reads", () => {
  const read = envVariablesRead();
  // The scan sees the variables it must (or this test could pass on nothing).
  for (const known of [
    "GEARBOX_ADMIN_PORT",
    "GEARBOX_ADMIN_KEY",
    "GEARBOX_EDGE_ADMIN_TOKEN",
    "GEARBOX_CONFIG",
    "REDIS_URL",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "ANTHROPIC_API_KEY",
    "NODE_NAME",
  ])
    assert.ok(read.has(known), `scan missed ${known}`);
  const missing = [...read].filter((name) => !new RegExp(`\\b${name}\\b`).test(USAGE));
  assert.deepEqual(missing, [], `not in the usage text: ${missing.join(", ")}`);
});

test("each server verb's usage names every port it listens on, its setting and its variable", () => {
  const ports: Record<keyof typeof SERVER_USAGE, string[]> = {
    serve: ["xds_port", "extproc_port", "http_port", "metrics_port", "admin_port"],
    extproc: ["extproc_port", "http_port", "metrics_port", "admin_port"],
    xds: ["xds_port", "metrics_port"],
  };
  for (const [verb, keys] of Object.entries(ports)) {
    for (const key of keys) {
      const variable = `GEARBOX_${key.replace("_port", "").toUpperCase()}_PORT`;
      assert.match(SERVER_USAGE[verb as keyof typeof SERVER_USAGE], new RegExp(`listen\\.${key}\\s+${variable}`), `${verb}: ${key}`);
    }
  }
});
