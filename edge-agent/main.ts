/**
 * `gearbox edge-agent`: loads the models named on the command line (more can be loaded later
 * through `/admin/models`) and serves them on port 8088 (`GEARBOX_EDGE_PORT`).
 */
import { parseArgs } from "node:util";
import { createLogger } from "../extproc/telemetry/logger.ts";
import type { EngineKind, ModelSpec } from "./engines/engine.ts";
import { createLlamaCppEngine } from "./engines/llamacpp.ts";
import { createOllamaEngine } from "./engines/ollama.ts";
import { createOnnxEngine } from "./engines/onnx.ts";
import { ModelRegistry, type EngineFactories } from "./registry.ts";
import { startEdgeAgent, type EdgeAgentServer } from "./server.ts";

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
environment: GEARBOX_EDGE_ADMIN_TOKEN protects /admin/models (load/unload at run time)
`;

export const DEFAULT_FACTORIES: EngineFactories = {
  llamacpp: () => createLlamaCppEngine(),
  ollama: () => createOllamaEngine(),
  onnx: () => createOnnxEngine(),
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
  stop(): Promise<void>;
}

export async function runEdgeAgent(argv: string[], env: NodeJS.ProcessEnv = process.env, factories: EngineFactories = DEFAULT_FACTORIES): Promise<EdgeAgentProcess> {
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
    },
    strict: true,
  });
  const engine = (values.engine ?? "llamacpp") as EngineKind;
  if (!["llamacpp", "ollama", "onnx"].includes(engine)) throw new Error(`--engine must be llamacpp, ollama or onnx, got '${engine}'`);
  const logger = createLogger(env.GEARBOX_LOG_LEVEL ?? "info", "edge-agent");
  const registry = new ModelRegistry(factories, {
    maxConcurrent: Math.max(1, positive("max-concurrency", values["max-concurrency"], 1)),
    maxQueue: positive("max-queue", values["max-queue"], 8),
    retryAfterSeconds: 1,
  });
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
  const server = await startEdgeAgent({ registry, logger, ...(env.GEARBOX_EDGE_ADMIN_TOKEN ? { adminToken: env.GEARBOX_EDGE_ADMIN_TOKEN } : {}) }, port);
  console.log(`gearbox edge-agent: http://0.0.0.0:${server.port} (POST /v1/chat/completions, /v1/embeddings; GET /v1/models, /healthz, /readyz, /metrics; /admin/models)`);
  if (models.length === 0) console.log("  no model loaded yet: POST /admin/models to load one (readyz answers 503 until then)");
  return {
    server,
    registry,
    stop: async () => {
      await server.close();
      await registry.close();
    },
  };
}
