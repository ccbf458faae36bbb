/**
 * The ext_proc filter settings of a shipped Envoy config (`envoy/*.yaml`), as options for the
 * harness: tests and benchmarks drive Gearbox exactly as the config we ship tells Envoy to.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";
import type { ProcessingMode } from "../../proto/generated/envoy/extensions/filters/http/ext_proc/v3/ProcessingMode.ts";
import type { RetryBudgetOptions, RetryPolicyOptions } from "../harness/config.ts";
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

/** The retry policy of a shipped config's route to `cluster`, and that cluster's retry budget, as harness options. */
export function shippedProviderRetries(name = "sidecar.yaml", cluster = "openai"): { retryPolicy: RetryPolicyOptions; retryBudget: RetryBudgetOptions | undefined } {
  const doc: unknown = parse(readFileSync(fileURLToPath(new URL(`../../envoy/${name}`, import.meta.url)), "utf8"));
  let policy: Record<string, unknown> | undefined;
  let budget: Record<string, unknown> | undefined;
  for (const node of walk(doc)) {
    if (node.cluster === cluster && isObject(node.retry_policy)) policy ??= node.retry_policy;
    if (node.name === cluster && isObject(node.circuit_breakers)) {
      for (const t of walk(node.circuit_breakers)) if (isObject(t.retry_budget)) budget ??= t.retry_budget;
    }
  }
  if (!policy) throw new Error(`envoy/${name} has no retry policy on its route to ${cluster}`);
  const retryPolicy: RetryPolicyOptions = { retry_on: String(policy.retry_on) };
  if (typeof policy.num_retries === "number") retryPolicy.num_retries = policy.num_retries;
  if (Array.isArray(policy.retriable_status_codes)) retryPolicy.retriable_status_codes = policy.retriable_status_codes.map(Number);
  const backOff = isObject(policy.retry_back_off) ? policy.retry_back_off : undefined;
  const base = durationMs(backOff?.base_interval);
  if (base !== undefined) retryPolicy.retry_back_off = { base_interval_ms: base, ...(durationMs(backOff?.max_interval) !== undefined && { max_interval_ms: durationMs(backOff?.max_interval) }) };
  const limited = isObject(policy.rate_limited_retry_back_off) ? policy.rate_limited_retry_back_off : undefined;
  if (limited && Array.isArray(limited.reset_headers)) {
    const headers = limited.reset_headers.filter((h): h is Record<string, unknown> => isObject(h) && h.format === "SECONDS").map((h) => String(h.name));
    retryPolicy.rate_limited_retry_back_off = { reset_headers: headers, ...(durationMs(limited.max_interval) !== undefined && { max_interval_ms: durationMs(limited.max_interval) }) };
  }
  const percent = isObject(budget?.budget_percent) ? Number(budget.budget_percent.value) : undefined;
  const retryBudget: RetryBudgetOptions | undefined = budget ? { ...(percent !== undefined && { budget_percent: percent }), ...(typeof budget.min_retry_concurrency === "number" && { min_retry_concurrency: budget.min_retry_concurrency }) } : undefined;
  return { retryPolicy, retryBudget };
}
