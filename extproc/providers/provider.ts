/** A configured upstream provider, resolved from config (credentials read, URL parsed). */
import type { ProviderConfig } from "../config/schema.ts";

export type ProviderKind = ProviderConfig["kind"];

export interface Provider {
  /** Config name; also the Envoy cluster Gearbox routes to via `x-gearbox-upstream`. */
  name: string;
  kind: ProviderKind;
  baseUrl: URL;
  /** Path prefix of `baseUrl` without a trailing slash (`/v1`, `/compatible-mode/v1`). */
  basePath: string;
  /** The credential Gearbox injects; absent → callers' own `authorization` is forwarded. */
  apiKey?: string;
  /** Where the key came from, for the startup report (never the key itself). */
  keySource: string;
  models: ReadonlySet<string>;
  isDefault: boolean;
  timeoutMs: number;
}

/** Request headers that carry this provider's credential. */
export function authHeaders(provider: Provider): Record<string, string> {
  if (provider.apiKey === undefined) return {};
  switch (provider.kind) {
    case "openai":
    case "openai-compatible":
      return { authorization: `Bearer ${provider.apiKey}` };
    default:
      return provider.kind satisfies never;
  }
}
