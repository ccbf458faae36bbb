/**
 * Loads `gearbox.yaml` (`GEARBOX_CONFIG`, default `./gearbox.yaml`), validates it and resolves
 * it: env port overrides, provider credentials, the default provider. Returns a result whose
 * errors name the bad field (`providers[0].base_url: Invalid URL`).
 */
import { existsSync, readFileSync } from "node:fs";
import { parse as parseYaml, YAMLParseError } from "yaml";
import type { z } from "zod";
import { DEFAULT_AUTH, PRESETS } from "../providers/catalog.ts";
import type { Provider } from "../providers/provider.ts";
import type { ProviderTimeouts } from "../resilience/timeouts.ts";
import { checkFallbacks } from "../resilience/fallback-chains.ts";
import { fail, ok, type Result } from "../../common/result.ts";
import { configSchema, type RawConfig } from "./schema.ts";
import type { ProviderConfig } from "../providers/config-schema.ts";

export interface GatewayConfig extends Omit<RawConfig, "providers"> {
  providers: Provider[];
  /** The file the config came from, or null for embedded defaults. */
  source: string | null;
}

/** The env variable that overrides each `listen.*` port (also named in the CLI's messages). */
export const PORT_ENV: Record<string, Exclude<keyof RawConfig["listen"], "host">> = {
  GEARBOX_EXTPROC_PORT: "extproc_port",
  GEARBOX_HTTP_PORT: "http_port",
  GEARBOX_ADMIN_PORT: "admin_port",
  GEARBOX_METRICS_PORT: "metrics_port",
  GEARBOX_XDS_PORT: "xds_port",
  GEARBOX_EDGE_PORT: "edge_port",
};

export interface LoadOptions {
  env?: NodeJS.ProcessEnv;
  /** Explicit path; otherwise `GEARBOX_CONFIG`, then `./gearbox.yaml` if it exists. */
  path?: string;
}

export function loadConfig(options: LoadOptions = {}): Result<GatewayConfig> {
  const env = options.env ?? process.env;
  const explicit = options.path ?? (env.GEARBOX_CONFIG || undefined);
  const path = explicit ?? (existsSync("gearbox.yaml") ? "gearbox.yaml" : undefined);
  let text = "";
  if (path !== undefined) {
    try {
      text = readFileSync(path, "utf8");
    } catch (err) {
      // A file named explicitly that is absent is an error (never a silent fall-back to the defaults).
      const code = (err as NodeJS.ErrnoException).code;
      const named = options.path === undefined && explicit !== undefined ? " (GEARBOX_CONFIG)" : "";
      return fail(
        `config file ${path}${named} ${code === "ENOENT" ? "does not exist" : code === "EISDIR" ? "is a directory" : `cannot be read (${code ?? String(err)})`}`,
      );
    }
  }
  const parsed = parseConfigText(text, path ?? "<defaults>");
  if (!parsed.ok) return parsed;
  return resolveConfig(parsed.value, env, path ?? null);
}

/** YAML text → validated raw config. An empty document means "all defaults". */
export function parseConfigText(text: string, name: string): Result<RawConfig> {
  let doc: unknown;
  try {
    doc = parseYaml(text) ?? {};
  } catch (err) {
    // The parser's first line names the line and column; the code frame after it is left out (one-line errors).
    if (err instanceof YAMLParseError) return fail(`${name}: invalid YAML: ${(err.message.split("\n")[0] ?? "").replace(/:$/, "")}`);
    throw err;
  }
  const result = configSchema.safeParse(doc);
  if (!result.success) return fail(...result.error.issues.map((i) => `${name}: ${formatIssue(i)}`));
  return ok(result.data);
}

function formatIssue(issue: z.core.$ZodIssue): string {
  const path = issue.path.reduce<string>((acc, key) => (typeof key === "number" ? `${acc}[${key}]` : acc ? `${acc}.${String(key)}` : String(key)), "");
  return `${path || "(top level)"}: ${issue.message}`;
}

export function resolveConfig(raw: RawConfig, env: NodeJS.ProcessEnv, source: string | null): Result<GatewayConfig> {
  const errors: string[] = [];
  const listen = { ...raw.listen };
  for (const [name, key] of Object.entries(PORT_ENV)) {
    const value = env[name];
    if (value === undefined || value === "") continue;
    const n = Number(value);
    if (!Number.isInteger(n) || n < 0 || n > 65535) errors.push(`${name}: must be a port number, got '${value}'`);
    else listen[key] = n;
  }
  const rawProviders: ProviderConfig[] = raw.providers.length > 0 ? raw.providers : [defaultOpenAI(env)];
  const providers: Provider[] = [];
  const names = new Set<string>();
  rawProviders.forEach((p, i) => {
    const where = `providers[${i}]`;
    if (names.has(p.name)) errors.push(`${where}.name: duplicate provider name '${p.name}'`);
    names.add(p.name);
    const provider = resolveProvider(p, env, where, errors);
    if (provider) providers.push(provider);
  });
  if (raw.provider !== undefined) {
    const chosen = providers.find((p) => p.name === raw.provider);
    if (!chosen) errors.push(`provider: no provider named '${raw.provider}' (have ${providers.map((p) => p.name).join(", ")})`);
    else for (const p of providers) p.isDefault = p === chosen;
  }
  const defaults = providers.filter((p) => p.isDefault);
  if (defaults.length > 1) errors.push(`providers: at most one provider may set 'default: true' (${defaults.map((p) => p.name).join(", ")})`);
  const first = providers[0];
  if (defaults.length === 0 && first) first.isDefault = true;
  const xds = { ...raw.xds };
  const xdsAddress = env.GEARBOX_XDS_ADDRESS;
  if (xdsAddress !== undefined && xdsAddress !== "") {
    if (/^[^/\s]+:\d{1,5}$/.test(xdsAddress)) xds.address = xdsAddress;
    else errors.push(`GEARBOX_XDS_ADDRESS: must be host:port, got '${xdsAddress}'`);
  }
  if (errors.length === 0)
    errors.push(...checkFallbacks(raw.resilience.fallbacks, providers, raw.edge.default_model).map((e) => (source ? `${source}: ${e}` : e)));
  if (errors.length > 0) return fail(...errors);
  return ok({ ...raw, listen, xds, providers, source });
}

/** With no `providers:` section: OpenAI, honouring the OpenAI SDK's own env variables. */
function defaultOpenAI(env: NodeJS.ProcessEnv): ProviderConfig {
  return {
    name: "openai",
    preset: "openai",
    base_url: env.OPENAI_BASE_URL ?? "https://api.openai.com/v1",
    models: [],
    aliases: {},
    pricing: {},
    default: true,
    timeout_ms: 600_000,
    timeouts: { connect_ms: 5_000, idle_ms: 120_000 },
  };
}

/** A provider entry merged over its preset (preset named, or the one named like the kind). */
function resolveProvider(p: ProviderConfig, env: NodeJS.ProcessEnv, where: string, errors: string[]): Provider | undefined {
  const preset = p.preset !== undefined ? PRESETS[p.preset] : p.kind !== undefined ? PRESETS[p.kind] : undefined;
  const kind = p.kind ?? preset?.kind;
  const baseUrl = p.base_url ?? preset?.base_url;
  if (kind === undefined) errors.push(`${where}.kind: required (or name a preset: ${Object.keys(PRESETS).join(", ")})`);
  if (baseUrl === undefined) errors.push(`${where}.base_url: required for ${p.preset ?? kind ?? "this provider"}`);
  if (kind === "azure-openai" && p.api_version === undefined) errors.push(`${where}.api_version: required for azure-openai (e.g. '2024-10-21')`);
  for (const field of ["organization", "project"] as const) {
    if (p[field] !== undefined && kind !== undefined && kind !== "openai")
      errors.push(`${where}.${field}: only for kind openai (OpenAI's own header), not ${kind}`);
  }
  if (kind === undefined || baseUrl === undefined) return undefined;
  const key = readKey({ ...p, api_key_env: p.api_key_env ?? preset?.api_key_env }, env, where, errors);
  const url = new URL(baseUrl);
  const pricing = new Map(Object.entries({ ...preset?.pricing, ...p.pricing }));
  const provider: Provider = {
    name: p.name,
    kind,
    baseUrl: url,
    basePath: url.pathname.replace(/\/+$/, ""),
    auth: p.auth ?? (p.kind !== undefined ? DEFAULT_AUTH[p.kind] : (preset?.auth ?? DEFAULT_AUTH[kind])),
    keySource: key.source,
    models: new Set(p.models),
    aliases: new Map(Object.entries(p.aliases)),
    pricing,
    params: { drop: [...(preset?.params?.drop ?? []), ...(p.params?.drop ?? [])], rename: { ...preset?.params?.rename, ...p.params?.rename } },
    isDefault: p.default,
    timeoutMs: p.timeouts.total_ms ?? p.timeout_ms,
    timeouts: timeoutsFrom(p),
  };
  if (key.value !== undefined) provider.apiKey = key.value;
  if (p.api_version !== undefined) provider.apiVersion = p.api_version;
  if (p.organization !== undefined) provider.organization = p.organization;
  if (p.project !== undefined) provider.project = p.project;
  return provider;
}

/** A provider's timeouts: first byte and total default to `timeout_ms`. */
function timeoutsFrom(p: ProviderConfig): ProviderTimeouts {
  const total = p.timeouts.total_ms ?? p.timeout_ms;
  return {
    connectMs: Math.min(p.timeouts.connect_ms, total),
    firstByteMs: Math.min(p.timeouts.first_byte_ms ?? total, total),
    idleMs: p.timeouts.idle_ms,
    totalMs: total,
  };
}

function readKey(p: ProviderConfig, env: NodeJS.ProcessEnv, where: string, errors: string[]): { value?: string; source: string } {
  if (p.api_key_file !== undefined) {
    try {
      const value = readFileSync(p.api_key_file, "utf8").trim();
      if (value === "") errors.push(`${where}.api_key_file: '${p.api_key_file}' is empty`);
      return { value, source: `file ${p.api_key_file}` };
    } catch (err) {
      errors.push(`${where}.api_key_file: cannot read '${p.api_key_file}' (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
      return { source: "unreadable file" };
    }
  }
  if (p.api_key_env !== undefined) {
    const value = env[p.api_key_env];
    return value ? { value, source: `env ${p.api_key_env}` } : { source: `env ${p.api_key_env} (unset)` };
  }
  return { source: "none" };
}
