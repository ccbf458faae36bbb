/**
 * An edge agent inside `gearbox serve` (`edge.local` in the config): one llama.cpp model (a GGUF
 * file or an `hf:` URI) behind the agent's own HTTP API on 127.0.0.1, registered with the
 * embedded control plane over loopback exactly as a `gearbox edge-agent --control-plane` would,
 * so ext_proc learns of it from the registry like of any other agent.
 *
 * `gearbox serve` imports this module lazily (only when `edge.local` is set): it loads
 * node-llama-cpp, which a gateway-only install does not need.
 */
import { hostname } from "node:os";
import type { Logger } from "../common/telemetry/logger.ts";
import { connectControlPlane, type ControlPlaneClient } from "./control-plane-client.ts";
import { createLlamaCppEngine } from "./engines/llamacpp.ts";
import { createOllamaEngine } from "./engines/ollama.ts";
import type { Engine, ModelSpec } from "./engines/engine.ts";
import { ModelRegistry } from "./registry.ts";
import { startEdgeAgent, type EdgeAgentServer } from "./server.ts";

export interface LocalEdgeAgentOptions {
  /** GGUF path or `hf:` URI. */
  model: string;
  /** The model id clients use; default the file name without `.gguf`. */
  id?: string;
  /** HTTP port on 127.0.0.1 (0 = a free one). */
  port: number;
  threads?: number;
  contextLength?: number;
  /** `host:port` of the control plane to register with. */
  controlPlane: string;
  logger: Logger;
}

export interface LocalEdgeAgent {
  /** `127.0.0.1:<port>`, as registered. */
  address: string;
  modelId: string;
  server: EdgeAgentServer;
  controlPlane: ControlPlaneClient;
  /** Leaves the control plane, stops serving, frees the model. */
  stop(): Promise<void>;
}

/** The id `gearbox edge-agent --model` gives a source: the file name without its extension. */
export function modelIdOf(source: string): string {
  return (source.split(/[/\\]/).pop() ?? source).replace(/\.gguf$/i, "");
}

const unusedEngine = (kind: string): Engine => {
  throw new Error(`edge.local runs llama.cpp models only, not ${kind}`);
};

export async function startLocalEdgeAgent(options: LocalEdgeAgentOptions): Promise<LocalEdgeAgent> {
  const modelId = options.id ?? modelIdOf(options.model);
  const capacity = { maxConcurrent: 1, maxQueue: 8 };
  const registry = new ModelRegistry(
    { llamacpp: () => createLlamaCppEngine(), ollama: () => createOllamaEngine(), onnx: () => unusedEngine("onnx") },
    { ...capacity, retryAfterSeconds: 1 },
  );
  const spec: ModelSpec = {
    id: modelId,
    engine: "llamacpp",
    source: options.model,
    ...(options.threads !== undefined && { threads: options.threads }),
    ...(options.contextLength !== undefined && { contextLength: options.contextLength }),
  };
  try {
    await registry.load(spec);
  } catch (err) {
    await registry.close();
    throw err;
  }
  const logger = options.logger.child({ component: "edge-agent" });
  let server: EdgeAgentServer;
  try {
    server = await startEdgeAgent({ registry, logger }, options.port, "127.0.0.1");
  } catch (err) {
    await registry.close();
    throw err;
  }
  const node = hostname();
  const address = `127.0.0.1:${server.port}`;
  const controlPlane = connectControlPlane({
    address: options.controlPlane,
    agentId: `${node}:local:${server.port}`,
    node,
    advertiseAddress: address,
    registry,
    capacity,
    load: () => registry.busy(),
    logger: logger.child({ component: "control-plane-client" }),
  });
  return {
    address,
    modelId,
    server,
    controlPlane,
    stop: async () => {
      await controlPlane.close();
      await server.close();
      await registry.close();
    },
  };
}
