/**
 * The fault suite's world (tests and `bench/faults.ts`): two provider emulators (`openai` serving `gpt-4o-mini`, the one that
 * fails; `backup` serving `deepseek-chat`, the healthy fallback), a Redis of its own, and Gearbox
 * processes configured against them. The config asks for everything the scenario needs; parts
 * the gateway does not accept yet (resilience settings not built) are left out and noted, so the
 * table shows what the code does today rather than failing to start.
 */
import { randomBytes } from "node:crypto";
import { startFaultyUpstream, type FaultyUpstream } from "../emulators/faulty-upstream.ts";
import type { RedisChild } from "../support/redis-child.ts";
import { configErrors, freePorts, listenYaml, startGatewayProcess, type GatewayProcess, type Ports } from "../support/gateway-process.ts";

export const PRIMARY_MODEL = "gpt-4o-mini";
export const FALLBACK_MODEL = "deepseek-chat";
export const TENANT = "shop";
const PROVIDER_KEYS = { FAULT_PRIMARY_KEY: `sk-primary-${randomBytes(8).toString("hex")}`, FAULT_BACKUP_KEY: `sk-backup-${randomBytes(8).toString("hex")}` };

export interface Lab {
  dir: string;
  primary: FaultyUpstream;
  backup: FaultyUpstream;
  /** Calls both emulators received since the last `resetCounts`. */
  upstreamCalls(): number;
  resetCounts(): void;
  close(): Promise<void>;
}

export async function startLab(dir: string): Promise<Lab> {
  const primary = await startFaultyUpstream();
  const backup = await startFaultyUpstream();
  return {
    dir,
    primary,
    backup,
    upstreamCalls: () => primary.calls + backup.calls,
    resetCounts: () => {
      primary.resetCounts();
      backup.resetCounts();
    },
    close: async () => {
      await Promise.all([primary.close(), backup.close()]);
    },
  };
}

export interface GatewaySpec {
  name: string;
  mode?: "extproc" | "xds";
  redis?: RedisChild;
  /** A tenant `shop` with this `requests_per_second` (auth required, a call key made for it). */
  tenantRps?: number;
  exactCache?: boolean;
  /** `gpt-4o-mini` → `deepseek-chat` when the primary fails. */
  fallback?: boolean;
  /** The primary's `timeouts:`. */
  timeouts?: { connect_ms: number; first_byte_ms: number; idle_ms: number; total_ms: number };
  /** Resilience settings beyond the fallback chain (`retry:`, `breaker:` YAML lines, indented 2). */
  resilience?: string;
  /** Raw YAML appended (edge agents, xds address…). */
  extra?: string;
  ports?: Ports;
  /** Memory read after a full collection (`GatewayProcess.memory({ collected: true })`). */
  collectOnSignal?: boolean;
}

export interface StartedGateway {
  gateway: GatewayProcess;
  /** Headers every request carries (the call key, when there is a tenant). */
  headers: Record<string, string>;
  /** What the config asked for but the gateway does not accept yet. */
  notes: string[];
}

function providersYaml(lab: Lab, timeouts: GatewaySpec["timeouts"]): string {
  const t = timeouts
    ? `    timeouts: { connect_ms: ${timeouts.connect_ms}, first_byte_ms: ${timeouts.first_byte_ms}, idle_ms: ${timeouts.idle_ms}, total_ms: ${timeouts.total_ms} }\n`
    : "";
  return `providers:
  - name: openai
    kind: openai
    base_url: ${lab.primary.baseURL}
    api_key_env: FAULT_PRIMARY_KEY
    models: [${PRIMARY_MODEL}]
    default: true
${t}  - name: backup
    kind: openai
    base_url: ${lab.backup.baseURL}
    api_key_env: FAULT_BACKUP_KEY
    models: [${FALLBACK_MODEL}]
`;
}

function resilienceYaml(spec: GatewaySpec): string {
  if (!spec.fallback && spec.resilience === undefined) return "";
  return `resilience:\n${spec.resilience ?? ""}${spec.fallback ? `  fallbacks:\n    ${PRIMARY_MODEL}: [${FALLBACK_MODEL}]\n` : ""}`;
}

/** The config for `spec`, minus what Gearbox refuses today (noted). */
function buildConfig(lab: Lab, spec: GatewaySpec, ports: Ports, env: NodeJS.ProcessEnv): { yaml: string; notes: string[] } {
  const common = `${listenYaml(ports)}logging: { level: info }
${spec.tenantRps !== undefined ? `tenants:\n  - id: ${TENANT}\n    limits: { requests_per_second: ${spec.tenantRps} }\n` : ""}${spec.exactCache ? "cache: { exact: { enable: true } }\n" : ""}${spec.extra ?? ""}`;
  const notes: string[] = [];
  const wanted = `${common}${providersYaml(lab, spec.timeouts)}${resilienceYaml(spec)}`;
  const errors = configErrors(wanted, env);
  if (errors.length === 0) return { yaml: wanted, notes };
  notes.push(`config refused, resilience settings left out: ${errors.join("; ")}`);
  const without = `${common}${providersYaml(lab, undefined)}`;
  const left = configErrors(without, env);
  if (left.length > 0) throw new Error(`fault bench config invalid: ${left.join("; ")}`);
  return { yaml: without, notes };
}

async function createCallKey(gateway: GatewayProcess, adminKey: string): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${gateway.ports.admin}/v1/keys`, {
    method: "POST",
    headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json" },
    body: JSON.stringify({ role: "call", tenant: TENANT, name: "fault-bench" }),
  });
  if (!res.ok) throw new Error(`creating a call key: HTTP ${res.status} ${await res.text()}`);
  return ((await res.json()) as { key: string }).key;
}

export async function startGateway(lab: Lab, spec: GatewaySpec): Promise<StartedGateway> {
  const ports = spec.ports ?? (await freePorts());
  const adminKey = randomBytes(24).toString("base64url");
  // The admin API (and with it required auth) only where a tenant is: elsewhere callers are anonymous.
  const env: Record<string, string> = {
    ...PROVIDER_KEYS,
    ...(spec.tenantRps !== undefined && { GEARBOX_ADMIN_KEY: adminKey }),
    ...(spec.redis && { REDIS_URL: spec.redis.url }),
  };
  const { yaml, notes } = buildConfig(lab, spec, ports, env);
  const gateway = await startGatewayProcess({
    dir: lab.dir,
    name: spec.name,
    mode: spec.mode ?? "extproc",
    ports,
    yaml,
    env,
    ...(spec.collectOnSignal && { collectOnSignal: true }),
  });
  const headers: Record<string, string> = {};
  if (spec.tenantRps !== undefined) headers.authorization = `Bearer ${await createCallKey(gateway, adminKey)}`;
  return { gateway, headers, notes };
}
