/**
 * The ext_proc filter settings of a shipped Envoy config (`envoy/*.yaml`), as options for the
 * harness: tests and benchmarks drive Gearbox exactly as the config we ship tells Envoy to.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";
import type { ProcessingMode } from "../../proto/generated/envoy/extensions/filters/http/ext_proc/v3/ProcessingMode.ts";
import type { ClusterOptions, RetryBudgetOptions, RetryPolicyOptions, RouteOptions } from "../harness/config.ts";
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

/** `envoy/<name>`, parsed. */
function shippedDoc(name: string): unknown {
  return parse(readFileSync(fileURLToPath(new URL(`../../envoy/${name}`, import.meta.url)), "utf8"));
}

export interface ShippedEnvoySettings {
  extProc: Omit<ExtProcOptions, "address">;
  bufferLimitBytes: number | undefined;
  /** The router filter's `suppress_envoy_headers`. */
  suppressEnvoyHeaders: boolean;
}

/** Reads `envoy/<name>` and returns its ext_proc filter settings. Throws if there is none. */
export function shippedEnvoySettings(name = "local-dev.yaml"): ShippedEnvoySettings {
  const doc = shippedDoc(name);
  let filter: Record<string, unknown> | undefined;
  let bufferLimitBytes: number | undefined;
  let suppressEnvoyHeaders = false;
  for (const node of walk(doc)) {
    if (node["@type"] === "type.googleapis.com/envoy.extensions.filters.http.ext_proc.v3.ExternalProcessor") filter ??= node;
    if (node["@type"] === "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router" && node.suppress_envoy_headers === true)
      suppressEnvoyHeaders = true;
    if (typeof node.per_connection_buffer_limit_bytes === "number") bufferLimitBytes ??= node.per_connection_buffer_limit_bytes;
  }
  if (!filter) throw new Error(`envoy/${name} has no ext_proc filter`);
  const extProc: Omit<ExtProcOptions, "address"> = {
    processingMode: filter.processing_mode as ProcessingMode,
    allowModeOverride: filter.allow_mode_override === true,
    failureModeAllow: filter.failure_mode_allow === true,
  };
  if (Array.isArray(filter.request_attributes)) extProc.requestAttributes = filter.request_attributes.map(String);
  const metadataOptions = isObject(filter.metadata_options) ? filter.metadata_options : {};
  const receiving = isObject(metadataOptions.receiving_namespaces) ? metadataOptions.receiving_namespaces.untyped : undefined;
  if (Array.isArray(receiving)) extProc.receivingNamespaces = receiving.map(String);
  const timeout = durationMs(filter.message_timeout);
  const maxTimeout = durationMs(filter.max_message_timeout);
  if (timeout !== undefined) extProc.messageTimeoutMs = timeout;
  if (maxTimeout !== undefined) extProc.maxMessageTimeoutMs = maxTimeout;
  if (filter.observability_mode === true) extProc.observabilityMode = true;
  const deferredClose = durationMs(filter.deferred_close_timeout);
  if (deferredClose !== undefined) extProc.deferredCloseTimeoutMs = deferredClose;
  return { extProc, bufferLimitBytes, suppressEnvoyHeaders };
}

/** A route's first header match (`match.headers[0]`, exact value), as harness route fields. */
function headerMatch(match: Record<string, unknown>): Pick<RouteOptions, "header" | "value"> {
  const header = Array.isArray(match.headers) && isObject(match.headers[0]) ? match.headers[0] : undefined;
  if (header === undefined) return {};
  return { header: String(header.name), value: String(isObject(header.string_match) ? header.string_match.exact : undefined) };
}

/** A route's own rules once chosen: its `request_headers_to_remove` and its action's `timeout`. */
function routeRules(route: Record<string, unknown>): Pick<RouteOptions, "requestHeadersToRemove" | "timeoutMs"> {
  const rules: Pick<RouteOptions, "requestHeadersToRemove" | "timeoutMs"> = {};
  if (Array.isArray(route.request_headers_to_remove)) rules.requestHeadersToRemove = route.request_headers_to_remove.map(String);
  const timeout = durationMs(isObject(route.route) ? route.route.timeout : undefined);
  if (timeout !== undefined) rules.timeoutMs = timeout;
  return rules;
}

/**
 * The shipped config's route to provider `cluster` (`x-gearbox-upstream: <cluster>`), as a harness
 * route to the cluster of that name: its header match, retry policy, timeout and `request_headers_to_remove`.
 * The host rewrite is left out (tests' upstreams are local).
 */
export function shippedProviderRoute(name = "sidecar.yaml", cluster = "openai"): RouteOptions {
  const doc = shippedDoc(name);
  for (const node of walk(doc)) {
    if (!isObject(node.match) || !isObject(node.route) || node.route.cluster !== cluster) continue;
    const route: RouteOptions = { cluster, ...headerMatch(node.match), ...routeRules(node) };
    if (isObject(node.route.retry_policy)) route.retryPolicy = retryPolicyOf(node.route.retry_policy);
    return route;
  }
  throw new Error(`envoy/${name} has no route to ${cluster}`);
}

/** The retry policy of a shipped config's route to `cluster`, and that cluster's retry budget, as harness options. */
export function shippedProviderRetries(
  name = "sidecar.yaml",
  cluster = "openai",
): { retryPolicy: RetryPolicyOptions; retryBudget: RetryBudgetOptions | undefined } {
  const doc = shippedDoc(name);
  let policy: Record<string, unknown> | undefined;
  let budget: Record<string, unknown> | undefined;
  for (const node of walk(doc)) {
    if (node.cluster === cluster && isObject(node.retry_policy)) policy ??= node.retry_policy;
    if (node.name === cluster && isObject(node.circuit_breakers)) {
      for (const t of walk(node.circuit_breakers)) if (isObject(t.retry_budget)) budget ??= t.retry_budget;
    }
  }
  if (!policy) throw new Error(`envoy/${name} has no retry policy on its route to ${cluster}`);
  const percent = isObject(budget?.budget_percent) ? Number(budget.budget_percent.value) : undefined;
  const retryBudget: RetryBudgetOptions | undefined = budget
    ? {
        ...(percent !== undefined && { budget_percent: percent }),
        ...(typeof budget.min_retry_concurrency === "number" && { min_retry_concurrency: budget.min_retry_concurrency }),
      }
    : undefined;
  return { retryPolicy: retryPolicyOf(policy), retryBudget };
}

/** A route's `retry_policy`, as harness options. */
function retryPolicyOf(policy: Record<string, unknown>): RetryPolicyOptions {
  const retryPolicy: RetryPolicyOptions = { retry_on: String(policy.retry_on) };
  if (typeof policy.num_retries === "number") retryPolicy.num_retries = policy.num_retries;
  if (Array.isArray(policy.retriable_status_codes)) retryPolicy.retriable_status_codes = policy.retriable_status_codes.map(Number);
  const backOff = isObject(policy.retry_back_off) ? policy.retry_back_off : undefined;
  const base = durationMs(backOff?.base_interval);
  if (base !== undefined)
    retryPolicy.retry_back_off = {
      base_interval_ms: base,
      ...(durationMs(backOff?.max_interval) !== undefined && { max_interval_ms: durationMs(backOff?.max_interval) }),
    };
  const limited = isObject(policy.rate_limited_retry_back_off) ? policy.rate_limited_retry_back_off : undefined;
  if (limited && Array.isArray(limited.reset_headers)) {
    const headers = limited.reset_headers.filter((h): h is Record<string, unknown> => isObject(h) && h.format === "SECONDS").map((h) => String(h.name));
    retryPolicy.rate_limited_retry_back_off = {
      reset_headers: headers,
      ...(durationMs(limited.max_interval) !== undefined && { max_interval_ms: durationMs(limited.max_interval) }),
    };
  }
  return retryPolicy;
}

/**
 * The shipped config's edge route (`to_edge`: its x-gearbox-upstream header and dynamic-metadata
 * guard) and its `edge` ORIGINAL_DST cluster (`metadata_key`), as harness options: suites that go
 * to an edge agent through the harness route exactly as the config we ship does.
 */
export function shippedEdgeRoute(name = "sidecar.yaml"): { route: RouteOptions; cluster: ClusterOptions } {
  const doc = shippedDoc(name);
  let route: Record<string, unknown> | undefined;
  let cluster: Record<string, unknown> | undefined;
  for (const node of walk(doc)) {
    if (node.name === "to_edge" && isObject(node.match)) route ??= node;
    if (node.name === "edge" && node.type === "ORIGINAL_DST") cluster ??= node;
  }
  if (!route || !cluster) throw new Error(`envoy/${name} has no to_edge route or edge cluster`);
  const match = route.match as Record<string, unknown>;
  const guard = Array.isArray(match.dynamic_metadata) && isObject(match.dynamic_metadata[0]) ? match.dynamic_metadata[0] : undefined;
  const pathKey = Array.isArray(guard?.path) && isObject(guard.path[0]) ? guard.path[0].key : undefined;
  const regex =
    isObject(guard?.value) && isObject(guard.value.string_match) && isObject(guard.value.string_match.safe_regex)
      ? guard.value.string_match.safe_regex.regex
      : undefined;
  const harnessRoute: RouteOptions = { ...headerMatch(match), cluster: "edge", ...routeRules(route) };
  if (guard !== undefined) harnessRoute.dynamicMetadata = { filter: String(guard.filter), key: String(pathKey), regex: String(regex) };
  const lb = isObject(cluster.original_dst_lb_config) ? cluster.original_dst_lb_config : {};
  const key = isObject(lb.metadata_key) ? lb.metadata_key : undefined;
  const keyPath = Array.isArray(key?.path) && isObject(key.path[0]) ? String(key.path[0].key) : "";
  const originalDst: Extract<ClusterOptions, { originalDst: unknown }>["originalDst"] = {};
  if (key !== undefined) originalDst.metadataKey = { key: String(key.key), path: keyPath };
  if (lb.use_http_header === true) originalDst.httpHeaderName = typeof lb.http_header_name === "string" ? lb.http_header_name : "";
  return { route: harnessRoute, cluster: { originalDst } };
}
