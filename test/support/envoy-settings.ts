/**
 * The ext_proc filter settings of a shipped Envoy config (`envoy/*.yaml`), as options for the
 * harness: tests and benchmarks drive Gearbox exactly as the config we ship tells Envoy to.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";
import type { ProcessingMode } from "../../proto/generated/envoy/extensions/filters/http/ext_proc/v3/ProcessingMode.ts";
import type { ExtProcOptions } from "../harness/envoy.ts";

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Every object in a YAML tree, depth first. */
function* walk(node: unknown): Generator<Record<string, unknown>> {
  if (Array.isArray(node)) for (const item of node) yield* walk(item);
  else if (isObject(node)) {
    yield node;
    for (const value of Object.values(node)) yield* walk(value);
  }
}

function durationMs(value: unknown): number | undefined {
  if (typeof value !== "string") return undefined;
  const match = /^(\d+(?:\.\d+)?)s$/.exec(value);
  return match ? Number(match[1]) * 1000 : undefined;
}

export interface ShippedEnvoySettings {
  extProc: Omit<ExtProcOptions, "address">;
  bufferLimitBytes: number | undefined;
}

/** Reads `envoy/<name>` and returns its ext_proc filter settings. Throws if there is none. */
export function shippedEnvoySettings(name = "local-dev.yaml"): ShippedEnvoySettings {
  const doc: unknown = parse(readFileSync(fileURLToPath(new URL(`../../envoy/${name}`, import.meta.url)), "utf8"));
  let filter: Record<string, unknown> | undefined;
  let bufferLimitBytes: number | undefined;
  for (const node of walk(doc)) {
    if (node["@type"] === "type.googleapis.com/envoy.extensions.filters.http.ext_proc.v3.ExternalProcessor") filter ??= node;
    if (typeof node.per_connection_buffer_limit_bytes === "number") bufferLimitBytes ??= node.per_connection_buffer_limit_bytes;
  }
  if (!filter) throw new Error(`envoy/${name} has no ext_proc filter`);
  const extProc: Omit<ExtProcOptions, "address"> = {
    processingMode: filter.processing_mode as ProcessingMode,
    allowModeOverride: filter.allow_mode_override === true,
    failureModeAllow: filter.failure_mode_allow === true,
  };
  if (Array.isArray(filter.request_attributes)) extProc.requestAttributes = filter.request_attributes.map(String);
  const timeout = durationMs(filter.message_timeout);
  const maxTimeout = durationMs(filter.max_message_timeout);
  if (timeout !== undefined) extProc.messageTimeoutMs = timeout;
  if (maxTimeout !== undefined) extProc.maxMessageTimeoutMs = maxTimeout;
  if (filter.observability_mode === true) extProc.observabilityMode = true;
  const deferredClose = durationMs(filter.deferred_close_timeout);
  if (deferredClose !== undefined) extProc.deferredCloseTimeoutMs = deferredClose;
  return { extProc, bufferLimitBytes };
}
