/**
 * A real edge agent for tests: the generated tiny GGUF model in a temp dir, loaded by llama.cpp
 * (CPU, one thread) as model `tiny`, behind the agent's HTTP server on a free port.
 */
import assert from "node:assert/strict";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Tracer } from "@opentelemetry/api";
import { getLlama, LlamaLogLevel } from "node-llama-cpp";
import { createLlamaCppEngine } from "../../edge-agent/engines/llamacpp.ts";
import { createOllamaEngine } from "../../edge-agent/engines/ollama.ts";
import { createOnnxEngine } from "../../edge-agent/engines/onnx.ts";
import { writeTinyGguf } from "../../edge-agent/model/tiny-gguf.ts";
import { ModelRegistry } from "../../edge-agent/registry.ts";
import { startEdgeAgent, type EdgeAgentServer } from "../../edge-agent/server.ts";
import { silentLogger } from "../../common/telemetry/logger.ts";

export interface TinyEdgeAgent {
  server: EdgeAgentServer;
  port: number;
  /** `127.0.0.1:<port>`, as `edge.agents[].address` takes it. */
  address: string;
  close(): Promise<void>;
}

export async function startTinyEdgeAgent(options: { contextLength?: number; tracer?: Tracer } = {}): Promise<TinyEdgeAgent> {
  const file = path.join(await mkdtemp(path.join(tmpdir(), "tiny-edge-")), "tiny.gguf");
  await writeTinyGguf(file);
  const llama = await getLlama({ gpu: false, build: "never", logLevel: LlamaLogLevel.error });
  const registry = new ModelRegistry(
    { llamacpp: () => createLlamaCppEngine({ llama }), ollama: () => createOllamaEngine(), onnx: () => createOnnxEngine() },
    { maxConcurrent: 2, maxQueue: 4, retryAfterSeconds: 1 },
  );
  await registry.load({ id: "tiny", engine: "llamacpp", source: file, threads: 1, contextLength: options.contextLength ?? 512 });
  const server = await startEdgeAgent({ registry, logger: silentLogger(), ...(options.tracer && { tracer: options.tracer }) }, 0, "127.0.0.1");
  return {
    server,
    port: server.port,
    address: `127.0.0.1:${server.port}`,
    close: async () => {
      await server.close();
      await registry.close();
      await llama.dispose();
    },
  };
}

/** The agent's confidence on `request` (asked directly), which must be strictly between 0 and 1. */
export async function confidenceOn(agent: TinyEdgeAgent, request: unknown): Promise<number> {
  const direct = await fetch(`http://${agent.address}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(request),
  });
  await direct.arrayBuffer();
  const confidence = Number(direct.headers.get("x-gearbox-confidence"));
  assert.ok(confidence > 0 && confidence < 1, `tiny model confidence ${confidence}`);
  return confidence;
}
