/**
 * `gearbox serve` / `gearbox extproc` / `gearbox xds`: start the servers a mode runs.
 *
 * - `serve`: all-in-one — the control plane (ADS + edge registry), and the ext_proc gRPC server
 *   and front door following it over loopback, so edge agents that register are routed to.
 * - `extproc`: the ext_proc server and front door; with `xds.address` (or GEARBOX_XDS_ADDRESS)
 *   they follow that control plane (policy and live edge agents), else the config file alone.
 * - `xds`: the control plane alone; it re-reads the config file when it changes (an invalid
 *   file is logged and the last good config stays).
 */
import { watchFile, unwatchFile } from "node:fs";
import { hostname } from "node:os";
import path from "node:path";
import { loadConfig, type GatewayConfig } from "../extproc/config/load.ts";
import { LiveEdgeAgents, type EdgeDirectory } from "../extproc/edge/agents.ts";
import type { LocalEdgeAgent, startLocalEdgeAgent } from "../edge-agent/in-process.ts";
import { followControlPlane } from "../extproc/control/follow.ts";
import { createResponseCache } from "../extproc/cache/create-response-cache.ts";
import { createSemanticCache, currentEdges } from "../extproc/cache/semantic/create-semantic-cache.ts";
import { createEmbedder } from "../extproc/cache/semantic/embedder-factory.ts";
import { Runtime } from "../extproc/runtime/runtime.ts";
import { startExtProcServer, type ExtProcServer } from "../extproc/grpc/server.ts";
import { ExtProcStreamStats } from "../extproc/grpc/stream-stats.ts";
import type { ProcessorDeps } from "../extproc/processor/processor.ts";
import { startFrontDoor, type FrontDoor } from "../extproc/http/front-door.ts";
import { DeviceApi } from "../extproc/devices/api.ts";
import { DeviceSlot, deviceRoutes } from "../extproc/devices/admin-routes.ts";
import { loadPlugins } from "../extproc/routing/policy/index.ts";
import { createLogger, logStats, type Logger } from "../common/telemetry/logger.ts";
import { guardProcess, processFaults } from "../common/telemetry/process-faults.ts";
import { GatewayMetrics } from "../extproc/telemetry/metrics.ts";
import { startMetricsServer, type MetricsServer } from "../extproc/telemetry/metrics-server.ts";
import { RequestTelemetry } from "../extproc/telemetry/request-telemetry.ts";
import { controlPlaneMetrics } from "../xds/metrics.ts";
import type { AdsClient } from "../xds/client/ads-client.ts";
import { SecretError, startGovernance } from "./governance.ts";
import { checkPorts } from "./ports.ts";
import { startControlPlane, type RunningControlPlane } from "../xds/control-plane.ts";
import { createTracing } from "../common/telemetry/tracing.ts";
import { ProviderHealth } from "../extproc/resilience/provider-health.ts";
import { createConversations } from "../extproc/conversation/create-store.ts";

export interface Running {
  config: GatewayConfig;
  extProc?: ExtProcServer;
  frontDoor?: FrontDoor;
  controlPlane?: RunningControlPlane;
  metrics?: MetricsServer;
  /** The in-process edge agent (`edge.local`, serve only). */
  localEdge?: LocalEdgeAgent;
  stop(): Promise<void>;
}

export type ServeMode = "serve" | "extproc" | "xds";

/** Lines telling the operator what runs, where, and what is not configured. `localEdge`: the in-process agent's line. */
export function describe(
  mode: ServeMode,
  config: GatewayConfig,
  ports: { extProc?: number; http?: number; xds?: number; metrics?: number },
  follows?: string,
  governance: readonly string[] = [],
  localEdge?: string,
): string[] {
  const lines = [`gearbox ${mode}: config ${config.source ?? "(none found: embedded defaults)"}`];
  if (ports.xds !== undefined)
    lines.push(`  control plane   ${config.listen.host}:${ports.xds}  (envoy.service.discovery.v3.AggregatedDiscoveryService, gearbox.v1.EdgeRegistryService)`);
  if (ports.extProc !== undefined)
    lines.push(`  ext_proc gRPC   ${config.listen.host}:${ports.extProc}  (envoy.service.ext_proc.v3.ExternalProcessor, grpc.health.v1)`);
  if (ports.http !== undefined)
    lines.push(
      `  front door      http://${config.listen.host}:${ports.http}  (POST /v1/chat/completions, /v1/embeddings, /v1/messages, /v1/responses, /v1beta/models/{model}:generateContent, /v1/device/*; GET /v1/models, /v1/models/{id}, /healthz, /readyz)`,
    );
  if (ports.extProc !== undefined)
    lines.push(`  routing         ${follows ? `policy and edge agents from the control plane at ${follows}` : "policy and edge agents from the config file"}`);
  lines.push(`  state           ${process.env.REDIS_URL ? "tenants, keys, limits and audit on Redis (REDIS_URL)" : "in-memory"}`);
  for (const p of config.providers) {
    const key =
      p.auth === "none"
        ? "no credentials needed"
        : p.apiKey === undefined
          ? `NO KEY (${p.keySource}): requests go without credentials`
          : `key from ${p.keySource}`;
    lines.push(`  provider        ${p.name} (${p.kind}) ${p.baseUrl.href}${p.isDefault ? " [default]" : ""}: ${key}`);
  }
  if (ports.metrics !== undefined)
    lines.push(
      `  metrics         http://${config.listen.host}:${ports.metrics}/metrics  (Prometheus${ports.extProc !== undefined ? "; request log on stdout" : ""})`,
    );
  if (ports.extProc !== undefined && config.shadow.enable) {
    const scope = [
      config.shadow.endpoints.length > 0 ? `endpoints ${config.shadow.endpoints.join(", ")}` : "all endpoints",
      config.shadow.tenants.length > 0 ? `tenants ${config.shadow.tenants.join(", ")}` : "all tenants",
    ];
    lines.push(`  shadow mode     ON for ${scope.join(", ")}: decisions recorded, requests passed through untouched`);
  }
  lines.push(...governance);
  if (ports.extProc !== undefined)
    for (const a of config.edge.agents)
      lines.push(`  edge agent      ${a.address} (static, edge.agents): ${a.models.join(", ")}${a.node === undefined ? "" : ` on node ${a.node}`}`);
  if (localEdge !== undefined) lines.push(`  edge agent      ${localEdge}`);
  else if (config.edge.agents.length === 0 || ports.extProc === undefined)
    lines.push("  not running     edge agents (run as `gearbox edge-agent`, or set edge.local for one in this process)");
  return lines;
}

function mustLoad(): GatewayConfig {
  const loaded = loadConfig();
  if (!loaded.ok) throw new ConfigError(loaded.errors);
  return loaded.value;
}

/** Re-reads the config file when it changes and hands valid configs to `apply`. */
function watchConfig(config: GatewayConfig, logger: Logger, apply: (next: GatewayConfig) => void): () => void {
  const file = config.source;
  if (file === null) return () => undefined;
  const onChange = (): void => {
    const loaded = loadConfig({ path: file });
    if (!loaded.ok) {
      logger.error({ file, errors: loaded.errors }, "config file changed but is invalid; keeping the last good config");
      return;
    }
    logger.info({ file }, "config file changed; applying");
    apply(loaded.value);
  };
  watchFile(file, { interval: 500, persistent: false }, onChange);
  return () => unwatchFile(file, onChange);
}

export async function serve(mode: ServeMode): Promise<Running> {
  const config = mustLoad();
  // A port in use ends the start before anything listens, naming the setting that moves it.
  const free = await checkPorts(mode, config);
  if (!free.ok) throw new ConfigError(free.errors);
  const logger = createLogger(config.logging.level);
  guardProcess(logger);
  // Traces of every server this mode runs (ext_proc + front door, control plane); `tracer` is undefined when off.
  const tracing = createTracing(config.telemetry.tracing, { defaultServiceName: mode === "xds" ? "gearbox-xds" : "gearbox" });
  const tracer = tracing.tracer;
  let controlPlane: RunningControlPlane | undefined;
  let unwatch = (): void => undefined;
  if (mode !== "extproc") {
    // All-in-one restarts everything together: no agent to wait for.
    controlPlane = await startControlPlane(
      config,
      logger,
      config.listen.xds_port,
      config.listen.host,
      mode === "serve" ? 0 : config.xds.startup_grace_ms,
      tracer,
    );
    const plane = controlPlane.plane;
    unwatch = watchConfig(config, logger, (next) => {
      const published = plane.setConfig(next);
      if (!published.ok) logger.error({ errors: published.errors }, "the new config gives an inconsistent snapshot; not published");
    });
  }
  if (mode === "xds" && controlPlane) {
    const running = controlPlane;
    const metrics = await startMetricsServer([controlPlaneMetrics(running)], config.listen.metrics_port, config.listen.host).catch(async (err: unknown) => {
      await running.close();
      throw err;
    });
    for (const line of describe(mode, config, { xds: controlPlane.port, metrics: metrics.port })) console.log(line);
    console.log(`  tracing         ${tracing.describe}`);
    return {
      config,
      controlPlane: running,
      metrics,
      stop: async () => {
        unwatch();
        await metrics.close();
        await running.close();
        await tracing.shutdown();
      },
    };
  }

  const plugins = await loadPlugins(
    config.route.plugins.map((p) => ({ name: p.name, module: p.module, timeoutMs: p.timeout_ms })),
    config.source ? path.dirname(path.resolve(config.source)) : process.cwd(),
  );
  if (!plugins.ok) throw new ConfigError(plugins.errors);
  // The admin API starts first; its device routes find the registry once the device API runs.
  const deviceSlot = new DeviceSlot();
  let governed;
  try {
    governed = await startGovernance(config, logger, process.env, deviceRoutes(deviceSlot));
  } catch (err) {
    await controlPlane?.close();
    if (err instanceof SecretError) throw new ConfigError(err.problems);
    throw err;
  }
  // Following a control plane: its live edge agents beside the config's static ones (a registration of the same address wins).
  const follows = controlPlane ? `127.0.0.1:${controlPlane.port}` : config.xds.address;
  const liveEdges = follows !== undefined ? new LiveEdgeAgents(config.edge.agents) : undefined;
  // Providers' breakers and retry budgets outlive config reloads, and stickiness, the cloud-latency
  // window and the month's spend outlive pushed policies: one runtime per process, whose snapshot a push swaps.
  const providerHealth = new ProviderHealth(config.resilience, logger);
  const runtime = new Runtime(config, { plugins: plugins.value, providerHealth, logger, ...(liveEdges && { edgeAgents: liveEdges }) });
  // Online calibration's embedding judge uses the semantic cache's embedder (cache.semantic.embedder).
  const judgeEmbedder = createEmbedder(
    config,
    currentEdges(() => runtime.current().edgeAgents),
  );
  if (judgeEmbedder.ok) runtime.state.calibration.embed = async (texts) => (await judgeEmbedder.value.embed(texts)).map((v) => Array.from(v));
  const cached = createResponseCache(config, { ...(process.env.REDIS_URL && { redisUrl: process.env.REDIS_URL }), logger, sharedState: governed.sharedState });
  const conversed = createConversations(config, {
    ...(process.env.REDIS_URL && { redisUrl: process.env.REDIS_URL }),
    logger,
    sharedState: governed.sharedState,
    edges: currentEdges(() => runtime.current().edgeAgents),
  });
  // The semantic cache's embedder and verifier ask the edge agents of the moment (live ones when following a control plane).
  const semantic = createSemanticCache(config, {
    logger,
    edges: currentEdges(() => runtime.current().edgeAgents),
    ...(process.env.REDIS_URL && { redisUrl: process.env.REDIS_URL }),
    sharedState: governed.sharedState,
  });
  if (!semantic.ok) {
    cached.close();
    await governed.close();
    await controlPlane?.close();
    throw new ConfigError(semantic.errors);
  }
  const semanticCache = semantic.value.cache;
  const semanticStore = semantic.value.store;
  const extProcStreams = new ExtProcStreamStats();
  const gatewayMetrics = new GatewayMetrics({
    extProcStreams,
    breakers: providerHealth,
    calibration: runtime.state.calibration,
    devices: deviceSlot,
    alerts: governed.governance.governor.alerts,
    log: logStats,
    faults: processFaults,
    ...(governed.limiterStats && { limiter: governed.limiterStats }),
    sharedState: governed.sharedState,
    ...(semanticCache && semanticStore && { semantic: { stats: semanticCache.stats, size: () => semanticStore.stats() } }),
  });
  const telemetry = new RequestTelemetry(logger, gatewayMetrics);
  const deps: ProcessorDeps = {
    runtime,
    logger,
    telemetry,
    governance: governed.governance,
    ...(cached.cache && { cache: cached.cache }),
    ...(conversed.conversations && { conversations: conversed.conversations }),
    ...(semanticCache && { semanticCache }),
    ...(tracer && { tracer }),
  };
  let follower: AdsClient | undefined;
  if (follows !== undefined && liveEdges) {
    follower = followControlPlane({
      address: follows,
      nodeId: `extproc-${hostname()}-${process.pid}`,
      ...(process.env.NODE_NAME && { nodeName: process.env.NODE_NAME }),
      followed: { runtime, edgeAgents: liveEdges },
      logger,
    });
    // Serve once the policy and the edge set have arrived; a control plane not up yet leaves the config file's policy.
    if (!(await follower.ready(3_000))) logger.warn({ address: follows }, "control plane not reachable yet; serving the config file's policy until it is");
  }
  let localEdge: LocalEdgeAgent | undefined;
  if (mode === "serve" && controlPlane && config.edge.local && liveEdges) {
    try {
      localEdge = await startLocalEdge(config, `127.0.0.1:${controlPlane.port}`, liveEdges, logger);
    } catch (err) {
      follower?.close();
      cached.close();
      await semantic.value.close();
      await governed.close();
      await controlPlane.close();
      throw err;
    }
  }
  const extProc = await startExtProcServer(deps, config.listen.extproc_port, config.listen.host, extProcStreams);
  const devices = new DeviceApi({ runtime, logger, telemetry, governance: governed.governance });
  deviceSlot.registry = devices.registry;
  deviceSlot.api = devices;
  const frontDoor = await startFrontDoor(deps, config.listen.http_port, config.listen.host, devices);
  // One /metrics: the gateway's, plus the control plane's when it runs in this process.
  /** Stops what started before the metrics server (the rest of `stop`). */
  const stopServing = async (): Promise<void> => {
    unwatch();
    // Device channels are endless responses: ended first (devices reconnect and resume), so the front door can drain.
    devices.close();
    await Promise.all([extProc.drain(), frontDoor.close()]);
    await governed.close();
    cached.close();
    await conversed.close();
    await semantic.value.close();
    await localEdge?.stop();
    follower?.close();
    await controlPlane?.close();
    await tracing.shutdown();
  };
  const metrics = await startMetricsServer(
    [gatewayMetrics.registry, ...(controlPlane ? [controlPlaneMetrics(controlPlane)] : [])],
    config.listen.metrics_port,
    config.listen.host,
  ).catch(async (err: unknown) => {
    // The metrics port is taken (or refused): nothing started stays behind.
    await stopServing();
    throw err;
  });
  for (const line of describe(
    mode,
    config,
    { extProc: extProc.port, http: frontDoor.port, metrics: metrics.port, ...(controlPlane && { xds: controlPlane.port }) },
    follows,
    [...governed.describe, cached.describe, semantic.value.describe, conversed.describe, `  tracing         ${tracing.describe}`],
    localEdge && `${localEdge.address} (in-process, edge.local): ${localEdge.modelId}`,
  ))
    console.log(line);
  return {
    config,
    extProc,
    frontDoor,
    metrics,
    ...(controlPlane && { controlPlane }),
    ...(localEdge && { localEdge }),
    stop: async () => {
      await Promise.all([metrics.close(), stopServing()]);
    },
  };
}

/**
 * Starts `edge.local` (lazily importing the agent and its engine) and waits until the processor
 * picks it: registered with the control plane at `controlPlane` and back over ADS.
 */
async function startLocalEdge(config: GatewayConfig, controlPlane: string, directory: EdgeDirectory, logger: Logger): Promise<LocalEdgeAgent> {
  const local = config.edge.local;
  if (!local) throw new Error("edge.local is not set");
  // Loaded here, not at the top: the agent's engine (node-llama-cpp) is not part of a gateway-only install.
  let start: typeof startLocalEdgeAgent;
  try {
    ({ startLocalEdgeAgent: start } = await import("../edge-agent/in-process.ts"));
  } catch (err) {
    throw new ConfigError([
      `edge.local: the edge agent's engine cannot be loaded (${err instanceof Error ? err.message : String(err)}); install node-llama-cpp or remove edge.local`,
    ]);
  }
  let agent: LocalEdgeAgent;
  try {
    agent = await start({
      model: local.model,
      port: local.port ?? config.listen.edge_port,
      controlPlane,
      logger,
      ...(local.id !== undefined && { id: local.id }),
      ...(local.threads !== undefined && { threads: local.threads }),
      ...(local.context_length !== undefined && { contextLength: local.context_length }),
    });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === "EADDRINUSE"
        ? `port ${local.port ?? config.listen.edge_port} is in use (set edge.local.port, 0 for a free one)`
        : err instanceof Error
          ? err.message
          : String(err);
    throw new ConfigError([`edge.local: ${why}`]);
  }
  const deadline = Date.now() + LOCAL_EDGE_JOIN_MS;
  while (!directory.serves(agent.modelId) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  if (!directory.serves(agent.modelId))
    logger.warn({ address: agent.address, model: agent.modelId }, "the in-process edge agent has not appeared in the control plane's edge set yet");
  return agent;
}

/** How long `serve` waits for its in-process agent's registration to come back over ADS. */
const LOCAL_EDGE_JOIN_MS = 5_000;

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  ${problems.join("\n  ")}`);
    this.name = "ConfigError";
  }
}
