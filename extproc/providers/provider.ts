/** A configured upstream provider, resolved from config and its catalog preset. */
import type { AuthScheme, ModelPrice, ParamRules, ProviderKind } from "./catalog.ts";
import type { ProviderTimeouts } from "../resilience/timeouts.ts";

export type { ProviderKind } from "./catalog.ts";

export interface Provider {
  /** Config name; also the Envoy cluster Gearbox routes to via `x-gearbox-upstream`. */
  name: string;
  kind: ProviderKind;
  baseUrl: URL;
  /** Path prefix of `baseUrl` without a trailing slash (`/v1`, `/compatible-mode/v1`). */
  basePath: string;
  auth: AuthScheme;
  /** The credential Gearbox injects; absent → the request goes without credentials. */
  apiKey?: string;
  /** Where the key came from, for the startup report (never the key itself). */
  keySource: string;
  models: ReadonlySet<string>;
  /** Client-facing model name → provider model name. */
  aliases: ReadonlyMap<string, string>;
  pricing: ReadonlyMap<string, ModelPrice>;
  params: ParamRules;
  /** Azure OpenAI `api-version`. */
  apiVersion?: string;
  /** OpenAI's `OpenAI-Organization` and `OpenAI-Project` for `apiKey`. */
  organization?: string;
  project?: string;
  isDefault: boolean;
  /** The whole call's timeout (`timeouts.total_ms`, else `timeout_ms`). */
  timeoutMs: number;
  /** Connect, first byte, idle gap and total (`resilience/timeouts.ts`); absent → `timeoutMs` for each. */
  timeouts?: ProviderTimeouts;
}

/**
 * A provider Gearbox was not configured with: no key, no models, no prices, no parameter rules,
 * `basePath` taken from `baseUrl` (an edge agent answering as an OpenAI provider, tests).
 */
export function plainProvider(fields: Pick<Provider, "name" | "kind" | "baseUrl" | "timeoutMs"> & Partial<Provider>): Provider {
  return {
    basePath: fields.baseUrl.pathname.replace(/\/$/, ""),
    auth: "none",
    keySource: "none",
    models: new Set(),
    aliases: new Map(),
    pricing: new Map(),
    params: {},
    isDefault: false,
    ...fields,
  };
}

/**
 * Every header a client may use to present a key, and OpenAI's organization and project that
 * scope a key: none of them is forwarded upstream (Gearbox's key goes, scoped by the provider's
 * own `organization` and `project`).
 */
export const CLIENT_CREDENTIAL_HEADERS = [
  "authorization",
  "x-api-key",
  "api-key",
  "x-goog-api-key",
  "proxy-authorization",
  "openai-organization",
  "openai-project",
];

/** Request headers that carry this provider's credential (and, for OpenAI, the key's organization and project). */
export function authHeaders(provider: Provider): Record<string, string> {
  if (provider.apiKey === undefined) return {};
  switch (provider.auth) {
    case "bearer": {
      const headers: Record<string, string> = { authorization: `Bearer ${provider.apiKey}` };
      if (provider.organization !== undefined) headers["openai-organization"] = provider.organization;
      if (provider.project !== undefined) headers["openai-project"] = provider.project;
      return headers;
    }
    case "api-key":
      return { "api-key": provider.apiKey };
    case "x-api-key":
      return { "x-api-key": provider.apiKey };
    case "x-goog-api-key":
      return { "x-goog-api-key": provider.apiKey };
    case "none":
      return {};
    default:
      return provider.auth satisfies never;
  }
}

/** The provider's price for a model (exact name, then the longest matching prefix). */
export function priceOf(provider: Provider, model: string): ModelPrice | undefined {
  const exact = provider.pricing.get(model);
  if (exact) return exact;
  let best: [string, ModelPrice] | undefined;
  for (const entry of provider.pricing) if (model.startsWith(entry[0]) && (!best || entry[0].length > best[0].length)) best = entry;
  return best?.[1];
}

/**
 * Removes the provider's key from text going back to clients (providers quote masked keys in
 * auth errors: "Incorrect API key provided: sk-proj-****abcd").
 */
export function redactKey(text: string, provider: Provider): string {
  const key = provider.apiKey;
  if (!key || key.length < 8) return text;
  const whole = text.includes(key) ? text.split(key).join("[REDACTED]") : text;
  // A masked key always holds `***`: without it (nearly every header value) there is nothing to build a pattern for.
  if (!whole.includes("***")) return whole;
  const tail = key.slice(-4).replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return whole.replace(new RegExp(`[\\w-]*\\*{3,}[\\w-]*${tail}`, "g"), "[REDACTED]");
}
