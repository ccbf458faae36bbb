/** Starts Gearbox's servers in-process on free ports, configured against test upstreams. */
import { parseConfigText, resolveConfig, type GatewayConfig } from "../../extproc/config/load.ts";
import { startExtProcServer, type ExtProcServer } from "../../extproc/grpc/server.ts";
import { startFrontDoor, type FrontDoor } from "../../extproc/http/front-door.ts";
import type { ProcessorDeps } from "../../extproc/processor/processor.ts";
import type { EnvoyOptions } from "../harness/config.ts";
import { startEnvoy, type EnvoyHarness } from "../harness/envoy.ts";
import { shippedEnvoySettings } from "./envoy-settings.ts";
import { pino } from "pino";
import { Runtime } from "../../extproc/runtime/runtime.ts";

export interface TestGateway {
  config: GatewayConfig;
  frontDoor: FrontDoor;
  extProc: ExtProcServer;
  /** `http://127.0.0.1:<port>/v1`, the OpenAI SDK's `baseURL` for the front door. */
  baseURL: string;
  extProcAddress: string;
  /** Every log line the gateway wrote (request log included), parsed. */
  logs: Record<string, unknown>[];
  close(): Promise<void>;
}

/** Config YAML → resolved config; throws with the errors so a broken fixture fails loudly. */
export function testConfig(yaml: string, env: NodeJS.ProcessEnv = {}): GatewayConfig {
  const raw = parseConfigText(yaml, "test.yaml");
  if (!raw.ok) throw new Error(raw.errors.join("\n"));
  const resolved = resolveConfig(raw.value, env, "test.yaml");
  if (!resolved.ok) throw new Error(resolved.errors.join("\n"));
  return resolved.value;
}

/** One `openai` provider pointing at `upstreamBaseURL`, with `apiKey` injected. */
export function openAIProviderYaml(upstreamBaseURL: string, extra = ""): string {
  return `
providers:
  - name: openai
    kind: openai
    base_url: ${upstreamBaseURL}
    api_key_env: TEST_PROVIDER_KEY
${extra}`;
}

/** `extra`: deps beyond the runtime and the logger (a conversation store, governance…). */
export async function startTestGateway(config: GatewayConfig, extra: Omit<Partial<ProcessorDeps>, "runtime" | "logger"> = {}): Promise<TestGateway> {
  const logs: Record<string, unknown>[] = [];
  const logger = pino({ level: "info" }, { write: (line: string) => void logs.push(JSON.parse(line) as Record<string, unknown>) });
  const deps: ProcessorDeps = { runtime: new Runtime(config), logger, ...extra };
  const extProc = await startExtProcServer(deps, 0, "127.0.0.1");
  const frontDoor = await startFrontDoor(deps, 0, "127.0.0.1");
  return {
    config,
    frontDoor,
    extProc,
    baseURL: `http://127.0.0.1:${frontDoor.port}/v1`,
    extProcAddress: `127.0.0.1:${extProc.port}`,
    logs,
    close: async () => {
      await Promise.all([frontDoor.close(), extProc.drain(1000)]);
    },
  };
}

/** The front door and the ext_proc server over `deps`, and the Envoy harness in front of ext_proc routing `openai` to `cloudUrl`. */
export interface GatewayPair {
  frontDoor: FrontDoor;
  extProc: ExtProcServer;
  envoy: EnvoyHarness;
  close(): Promise<void>;
}

export async function startGatewayPair(deps: ProcessorDeps, cloudUrl: string): Promise<GatewayPair> {
  const frontDoor = await startFrontDoor(deps, 0, "127.0.0.1");
  const extProc = await startExtProcServer(deps, 0, "127.0.0.1");
  const shipped = shippedEnvoySettings();
  const envoy = await startEnvoy({
    extProc: { ...shipped.extProc, address: `127.0.0.1:${extProc.port}` },
    routes: [{ header: "x-gearbox-upstream", value: "openai", cluster: "openai" }],
    clusters: { openai: { url: cloudUrl } },
  });
  return {
    frontDoor,
    extProc,
    envoy,
    close: async () => {
      await envoy.close();
      await Promise.all([frontDoor.close(), extProc.drain(1000)]);
    },
  };
}

/** How a test reaches a gateway: its front door, or Envoy (the harness, with the shipped ext_proc settings) in front of its ext_proc. */
export type Entry = "front door" | "Envoy + ext_proc";

/**
 * The base URL (no `/v1`) a client uses to reach `gateway` through `entry`; through Envoy, the
 * `openai` route goes to `upstreamUrl`'s origin. `close` stops the Envoy harness, if any.
 */
export async function entryTo(
  entry: Entry,
  gateway: TestGateway,
  upstreamUrl: string,
  envoy: Partial<EnvoyOptions> = {},
): Promise<{ base: string; close: () => Promise<void> }> {
  if (entry === "front door") return { base: gateway.baseURL.replace("/v1", ""), close: () => Promise.resolve() };
  const shipped = shippedEnvoySettings();
  const harness = await startEnvoy({
    extProc: { ...shipped.extProc, address: gateway.extProcAddress },
    routes: [{ header: "x-gearbox-upstream", value: "openai", cluster: "openai" }],
    clusters: { openai: { url: new URL(upstreamUrl).origin } },
    ...envoy,
  });
  return { base: harness.url, close: () => harness.close() };
}
