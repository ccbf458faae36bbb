/**
 * `gearbox edge-agent`: loads the models named on the command line (more can be loaded later
 * through `/admin/models`) and serves them on port 8088 (`GEARBOX_EDGE_PORT`). With
 * `--control-plane` it also registers with `gearbox xds`, heartbeats its load and holds the
 * models the control plane assigns it; without, it runs standalone.
 */
import { hostname, networkInterfaces } from "node:os";
import { parseArgs } from "node:util";
import { createLogger, type Logger } from "../common/telemetry/logger.ts";
import { guardProcess } from "../common/telemetry/process-faults.ts";
import { addressError } from "../common/registry/hello.ts";
import { advertiseAddressOf } from "./advertise.ts";
import { connectControlPlane, type ControlPlaneClient } from "./control-plane-client.ts";
import type { EngineKind, ModelSpec } from "./engines/engine.ts";
import { lazyEngine } from "./engines/lazy.ts";
import { ModelRegistry, type EngineFactories } from "./registry.ts";
import { startEdgeAgent, type EdgeAgentServer } from "./server.ts";
import { createTracing } from "../common/telemetry/tracing.ts";

export const EDGE_AGENT_USAGE = `usage: gearbox edge-agent [--model <gguf|hf:uri|name|onnx>]... [options]

  --model SOURCE        a model to load at start (repeatable): a GGUF file or hf: URI (llamacpp),
                        an Ollama model name (--engine ollama), an ONNX file (--engine onnx)
  --id NAME             the model id clients use (default: the file name without extension)
  --engine KIND         llamacpp (default) | ollama | onnx
  --threads N           CPU threads per llama.cpp model (default: cores - 1, at most 8)
  --ctx N               context length to allocate (default: the model's, at most 4096)
  --tokenizer FILE      tokenizer JSON for --engine onnx
  --ollama-host URL     Ollama server (default http://127.0.0.1:11434)
  --max-concurrency N   requests generating at once per model (default 1)
  --max-queue N         requests waiting per model before 429 (default 8)
  --port N              HTTP port (default 8088, env GEARBOX_EDGE_PORT)
  --control-plane H:P   register with the control plane (gearbox xds) at host:port and hold the
                        models it assigns (env GEARBOX_XDS_ADDRESS; default: standalone). An
                        assignment is the whole list: models loaded with --model or /admin/models
                        that it leaves out are unloaded
  --node NAME           the node this agent runs on (env NODE_NAME, default the host name)
  --advertise-address IP:PORT
                        where Envoy dials this agent (env GEARBOX_EDGE_ADVERTISE, default the
                        first non-internal IPv4 address and --port); a bare IP gets --port
                        (IPv6 as [ip]:port)
  --agent-id ID         the agent's id in the control plane (default <node>:<port>)
  --otlp-endpoint URL   export traces (OpenTelemetry, OTLP gRPC) to URL, e.g. http://collector:4317
                        (env OTEL_EXPORTER_OTLP_ENDPOINT; default: no tracing). A request carrying a
                        W3C traceparent is traced when its caller sampled it; others all are
environment: GEARBOX_EDGE_ADMIN_TOKEN protects /admin/models (load/unload at run time)
`;

/** Each engine's module (and its native package) is imported when it loads its first model. */
export const DEFAULT_FACTORIES: EngineFactories = {
  llamacpp: () => lazyEngine("llamacpp", async () => (await import("./engines/llamacpp.ts")).createLlamaCppEngine()),
  ollama: () => lazyEngine("ollama", async () => (await import("./engines/ollama.ts")).createOllamaEngine()),
  onnx: () => lazyEngine("onnx", async () => (await import("./engines/onnx.ts")).createOnnxEngine()),
};

const positive = (name: string, value: string | undefined, fallback: number): number => {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new Error(`--${name} must be a whole number, got '${value}'`);
  return n;
};

export interface EdgeAgentProcess {
  server: EdgeAgentServer;
  registry: ModelRegistry;
  /** Present with `--control-plane`. */
  controlPlane?: ControlPlaneClient;
  stop(): Promise<void>;
}

/** The first non-internal IPv4 address of this host. */
function firstExternalIPv4(): string | undefined {
  for (const addresses of Object.values(networkInterfaces())) {
    const found = addresses?.find((a) => a.family === "IPv4" && !a.internal);
    if (found) return found.address;
  }
  return undefined;
}

interface ControlPlaneFlags {
  address: string;
  node?: string;
  advertise?: string;
  agentId?: string;
  ollamaHost?: string;
}

/** Registers the running agent with the control plane, filling in the defaults of its flags. */
function joinControlPlane(
  flags: ControlPlaneFlags,
  registry: ModelRegistry,
  capacity: { maxConcurrent: number; maxQueue: number },
  port: number,
  logger: Logger,
): ControlPlaneClient {
  const node = flags.node || hostname();
  const ip = firstExternalIPv4();
  const advertiseAddress = flags.advertise === undefined ? ip && `${ip}:${port}` : advertiseAddressOf(flags.advertise, port);
  if (!advertiseAddress) throw new Error("no non-internal IPv4 address to advertise; give --advertise-address ip:port");
  const bad = addressError(advertiseAddress);
  if (bad) throw new Error(`--advertise-address: ${bad}`);
  return connectControlPlane({
    address: flags.address,
    agentId: flags.agentId ?? `${node}:${port}`,
    node,
    advertiseAddress,
    registry,
    capacity,
    load: () => registry.busy(),
    logger: logger.child({ component: "control-plane-client" }),
    ...(flags.ollamaHost !== undefined ? { ollamaHost: flags.ollamaHost } : {}),
  });
}

export async function runEdgeAgent(
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
  factories: EngineFactories = DEFAULT_FACTORIES,
): Promise<EdgeAgentProcess> {
  const { values } = parseArgs({
    args: argv,
    options: {
      model: { type: "string", multiple: true },
      id: { type: "string" },
      engine: { type: "string" },
      threads: { type: "string" },
      ctx: { type: "string" },
      tokenizer: { type: "string" },
      "ollama-host": { type: "string" },
      "max-concurrency": { type: "string" },
      "max-queue": { type: "string" },
      port: { type: "string" },
      "control-plane": { type: "string" },
      node: { type: "string" },
      "advertise-address": { type: "string" },
      "agent-id": { type: "string" },
      "otlp-endpoint": { type: "string" },
    },
    strict: true,
  });
  const engine = (values.engine ?? "llamacpp") as EngineKind;
  if (!["llamacpp", "ollama", "onnx"].includes(engine)) throw new Error(`--engine must be llamacpp, ollama or onnx, got '${engine}'`);
  const logger = createLogger(env.GEARBOX_LOG_LEVEL ?? "info", "edge-agent");
  guardProcess(logger);
  const capacity = {
    maxConcurrent: Math.max(1, positive("max-concurrency", values["max-concurrency"], 1)),
    maxQueue: positive("max-queue", values["max-queue"], 8),
  };
  const registry = new ModelRegistry(factories, { ...capacity, retryAfterSeconds: 1 });
  const models = values.model ?? [];
  if (values.id !== undefined && models.length > 1) throw new Error("--id names one model; give one --model with it");
  for (const source of models) {
    const spec: ModelSpec = { id: values.id ?? (source.split("/").pop() ?? source).replace(/\.(gguf|onnx)$/i, ""), engine, source };
    if (values.threads !== undefined) spec.threads = positive("threads", values.threads, 1);
    if (values.ctx !== undefined) spec.contextLength = positive("ctx", values.ctx, 0);
    if (values.tokenizer !== undefined) spec.tokenizer = values.tokenizer;
    if (values["ollama-host"] !== undefined) spec.host = values["ollama-host"];
    const entry = await registry.load(spec);
    const info = entry.model.info();
    console.log(`  model           ${info.id} (${info.engine}) ${info.source}: context ${info.contextLength}, loaded in ${Math.round(entry.loadMs)} ms`);
  }
  const port = positive("port", values.port ?? env.GEARBOX_EDGE_PORT, 8088);
  const otlpEndpoint = values["otlp-endpoint"] ?? (env.OTEL_EXPORTER_OTLP_ENDPOINT || undefined);
  const tracing = createTracing(
    { enable: otlpEndpoint !== undefined, endpoint: otlpEndpoint, sample_ratio: 1 },
    { defaultServiceName: "gearbox-edge-agent", env },
  );
  const server = await startEdgeAgent(
    {
      registry,
      logger,
      ...(env.GEARBOX_EDGE_ADMIN_TOKEN ? { adminToken: env.GEARBOX_EDGE_ADMIN_TOKEN } : {}),
      ...(tracing.tracer && { tracer: tracing.tracer }),
    },
    port,
  );
  console.log(
    `gearbox edge-agent: http://0.0.0.0:${server.port} (POST /v1/chat/completions, /v1/embeddings; GET /v1/models, /healthz, /readyz, /metrics; /admin/models)`,
  );
  const controlPlaneAddress = values["control-plane"] ?? env.GEARBOX_XDS_ADDRESS;
  let controlPlane: ControlPlaneClient | undefined;
  try {
    controlPlane =
      controlPlaneAddress === undefined
        ? undefined
        : joinControlPlane(
            {
              address: controlPlaneAddress,
              node: values.node ?? env.NODE_NAME,
              advertise: values["advertise-address"] ?? env.GEARBOX_EDGE_ADVERTISE,
              agentId: values["agent-id"],
              ollamaHost: values["ollama-host"],
            },
            registry,
            capacity,
            server.port,
            logger,
          );
  } catch (err) {
    await server.close();
    await registry.close();
    await tracing.shutdown();
    throw err;
  }
  if (tracing.tracer) console.log(`  tracing         ${tracing.describe}`);
  if (controlPlane) console.log(`  control plane   ${controlPlaneAddress} (models follow its assignment)`);
  else if (models.length === 0) console.log("  no model loaded yet: POST /admin/models to load one (readyz answers 503 until then)");
  return {
    server,
    registry,
    ...(controlPlane ? { controlPlane } : {}),
    stop: async () => {
      await controlPlane?.close();
      await server.close();
      await registry.close();
      await tracing.shutdown();
    },
  };
}
