/**
 * What the device SDKs' end-to-end tests run against: the real `gearbox extproc` process (front
 * door with the device API, admin API) on its own Redis (keys survive a gateway restart), a cloud
 * emulator for upgrades and cloud routes, a tenant `shop` and one call key for it. Optionally the
 * real edge agent on the tiny model, which the Python SDK's tests use as the local llama.cpp
 * server (both speak OpenAI-compatible HTTP). `restart(threshold)` brings the gateway back on the
 * same ports with another confidence threshold (a new policy version).
 */
import { randomBytes } from "node:crypto";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { startOpenAIUpstream, type OpenAIUpstream } from "../emulators/openai-upstream.ts";
import { freePorts, listenYaml, startGatewayProcess, type GatewayProcess } from "./gateway-process.ts";
import { RedisChild } from "./redis-child.ts";
import { startTinyEdgeAgent, type TinyEdgeAgent } from "./tiny-edge-agent.ts";

const CLOUD_KEY = "sk-device-cloud";

export interface DeviceStack {
  gateway: GatewayProcess;
  cloud: OpenAIUpstream;
  /** The tiny model's edge agent, when asked for. */
  agent: TinyEdgeAgent | undefined;
  /** `http://127.0.0.1:<front door>` */
  url: string;
  adminUrl: string;
  adminKey: string;
  /** A call key of tenant `shop`, and its id (for revoking it). */
  callKey: string;
  callKeyId: string;
  /** A new call key of `shop`. */
  newKey(): Promise<{ key: string; id: string }>;
  revoke(id: string): Promise<void>;
  /** Sends a model command to a device through the admin API; the command as the gateway sent it. */
  command(device: string, body: { op: string; model: string; engine?: string; source?: string }): Promise<{ status: number; body: Record<string, unknown> }>;
  devices(): Promise<Record<string, unknown>[]>;
  /** One sample of the gateway's /metrics, by its name and labels as exported (`name{label="v"}`); NaN when absent. */
  metric(sample: string): Promise<number>;
  /** Stops the gateway and starts it again with `threshold` (default: unchanged). */
  restart(threshold?: number): Promise<void>;
  close(): Promise<void>;
}

export interface DeviceStackOptions {
  threshold: number;
  heartbeatMs?: number;
  expiryMs?: number;
  withAgent?: boolean;
  /** Limits of tenant `shop` (each admission is then a round trip to its Redis). */
  limits?: { requests_per_second?: number; max_concurrent?: number };
  /** A policy plugin module (`route.plugins`, name `device-test`). */
  plugin?: string;
  /** More environment for the gateway process (a bench's `NODE_OPTIONS=--cpu-prof`, say). */
  env?: Record<string, string>;
}

function yaml(ports: Awaited<ReturnType<typeof freePorts>>, cloud: OpenAIUpstream, o: DeviceStackOptions, threshold: number): string {
  return (
    listenYaml(ports) +
    `providers:\n  - { name: openai, kind: openai, base_url: '${cloud.baseURL}', api_key_env: CLOUD_KEY }\n` +
    `tenants:\n  - { id: shop, models: [gpt-4.1-nano, tiny, tiny-b]${o.limits ? `, limits: ${JSON.stringify(o.limits)}` : ""} }\n` +
    `edge: { fallback_model: gpt-4.1-nano }\n` +
    `route:\n  rules:\n    - { when: { intent: [summarize] }, target: edge }\n    - { when: { intent: [code_gen] }, target: cloud }\n` +
    `  fallback: { enable: true, confidence_threshold: ${threshold} }\n` +
    (o.plugin ? `  plugins: [{ name: device-test, module: '${o.plugin}', timeout_ms: 200 }]\n` : "") +
    `devices: { heartbeat_interval_ms: ${o.heartbeatMs ?? 200}, expiry_ms: ${o.expiryMs ?? 1500} }\n` +
    `logging: { level: info }\n`
  );
}

export async function startDeviceStack(o: DeviceStackOptions): Promise<DeviceStack> {
  const redis = await RedisChild.start();
  const cloud = await startOpenAIUpstream({ apiKey: CLOUD_KEY });
  const agent = o.withAgent ? await startTinyEdgeAgent() : undefined;
  const dir = await mkdtemp(path.join(tmpdir(), "gearbox-devices-"));
  const ports = await freePorts();
  const adminKey = randomBytes(36).toString("base64url");
  const env = { CLOUD_KEY, GEARBOX_ADMIN_KEY: adminKey, REDIS_URL: redis.url, ...o.env };
  let threshold = o.threshold;
  let gateway = await startGatewayProcess({ dir, name: "devices", mode: "extproc", ports, yaml: yaml(ports, cloud, o, threshold), env });
  const adminUrl = `http://127.0.0.1:${ports.admin}`;
  const admin = async (method: string, p: string, body?: unknown) => {
    const res = await fetch(`${adminUrl}${p}`, {
      method,
      headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json" },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const newKey = async () => {
    const made = await admin("POST", "/v1/keys", { role: "call", tenant: "shop", name: "device" });
    if (made.status !== 201 && made.status !== 200) throw new Error(`key not created: ${JSON.stringify(made.body)}`);
    return { key: String(made.body.key), id: String(made.body.id) };
  };
  const first = await newKey();
  return {
    get gateway() {
      return gateway;
    },
    cloud,
    agent,
    url: gateway.url,
    adminUrl,
    adminKey,
    callKey: first.key,
    callKeyId: first.id,
    newKey,
    revoke: async (id) => {
      const r = await admin("DELETE", `/v1/keys/${id}`);
      if (r.status !== 200) throw new Error(`not revoked: ${JSON.stringify(r.body)}`);
    },
    command: (device, body) => admin("POST", `/v1/devices/shop/${device}/commands`, body),
    devices: async () => ((await admin("GET", "/v1/devices")).body.data ?? []) as Record<string, unknown>[],
    metric: async (sample) => {
      const text = await (await fetch(`http://127.0.0.1:${gateway.ports.metrics}/metrics`)).text();
      const found = text.split("\n").find((l) => l.startsWith(`${sample} `));
      return found === undefined ? NaN : Number(found.slice(sample.length + 1));
    },
    restart: async (next) => {
      await gateway.stop();
      if (next !== undefined) threshold = next;
      gateway = await startGatewayProcess({ dir, name: "devices", mode: "extproc", ports, yaml: yaml(ports, cloud, o, threshold), env });
    },
    close: async () => {
      await gateway.stop();
      await agent?.close();
      await cloud.close();
      await redis.down();
    },
  };
}
