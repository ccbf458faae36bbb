/**
 * Edge agent overhead on the same model in the same run: tokens/s and time to first token
 * through the agent's HTTP API (streaming, what the router sees) vs node-llama-cpp driven
 * directly (a plain greedy `sequence.evaluate` loop), alternating rounds; plus resident memory
 * per loaded model. The model is the generated tiny GGUF unless a path is given (any GGUF works:
 * `npm run bench:edge -- /models/qwen2.5-0.5b-q4.gguf`).
 */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { getLlama, LlamaLogLevel } from "node-llama-cpp";
import { createLlamaCppEngine } from "../edge-agent/engines/llamacpp.ts";
import { createOllamaEngine } from "../edge-agent/engines/ollama.ts";
import { createOnnxEngine } from "../edge-agent/engines/onnx.ts";
import { writeTinyGguf } from "../edge-agent/model/tiny-gguf.ts";
import { ModelRegistry } from "../edge-agent/registry.ts";
import { startEdgeAgent } from "../edge-agent/server.ts";
import { silentLogger } from "../common/telemetry/logger.ts";

const TOKENS = Number(process.env.BENCH_TOKENS ?? 128);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const THREADS = 1;
const PROMPT = "Summarize the plot of Hamlet in three sentences.";

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const rss = () => process.memoryUsage().rss;

async function main(): Promise<void> {
  const modelPath = process.argv[2] ?? path.join(await mkdtemp(path.join(tmpdir(), "edge-bench-")), "tiny.gguf");
  if (!process.argv[2]) await writeTinyGguf(modelPath);
  const llama = await getLlama({ gpu: false, build: "never", logLevel: LlamaLogLevel.error });

  // Raw node-llama-cpp: the same model, context size, threads and prompt template.
  const rssBefore = rss();
  const rawModel = await llama.loadModel({ modelPath });
  const rawContext = await rawModel.createContext({ contextSize: 1024, threads: THREADS });
  const rawMemory = rss() - rssBefore;
  const sequence = rawContext.getSequence();
  const promptTokens = rawModel.tokenize(`<|im_start|>user\n${PROMPT}<|im_end|>\n<|im_start|>assistant\n`, true);
  async function raw(): Promise<{ ttft: number; tps: number }> {
    await sequence.clearHistory();
    const start = performance.now();
    let first = 0;
    let n = 0;
    for await (const _token of sequence.evaluate(promptTokens, { temperature: 0 })) {
      if (n === 0) first = performance.now() - start;
      if (++n >= TOKENS) break;
    }
    const seconds = (performance.now() - start - first) / 1000;
    return { ttft: first, tps: (n - 1) / seconds };
  }

  // Through the agent: HTTP + OpenAI parsing + logprobs/confidence + SSE.
  const before = rss();
  const registry = new ModelRegistry(
    { llamacpp: () => createLlamaCppEngine({ llama }), ollama: () => createOllamaEngine(), onnx: () => createOnnxEngine() },
    { maxConcurrent: 1, maxQueue: 0, retryAfterSeconds: 1 },
  );
  await registry.load({ id: "m", engine: "llamacpp", source: modelPath, threads: THREADS, contextLength: 1024 });
  const agentMemory = rss() - before;
  const server = await startEdgeAgent({ registry, logger: silentLogger() }, 0, "127.0.0.1");
  const url = `http://127.0.0.1:${server.port}/v1/chat/completions`;
  async function agent(logprobs: boolean): Promise<{ ttft: number; tps: number }> {
    const body = JSON.stringify({
      model: "m",
      messages: [{ role: "user", content: PROMPT }],
      max_tokens: TOKENS,
      temperature: 0,
      stream: true,
      stream_options: { include_usage: true },
      ...(logprobs && { logprobs: true, top_logprobs: 3 }),
    });
    const start = performance.now();
    const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body });
    let first = 0;
    let tokens = 0;
    let tail = "";
    const decoder = new TextDecoder();
    for await (const bytes of res.body as AsyncIterable<Uint8Array>) {
      const events = (tail + decoder.decode(bytes, { stream: true })).split("\n\n");
      tail = events.pop() ?? "";
      for (const event of events) {
        if (!event.startsWith("data: {")) continue;
        const chunk = JSON.parse(event.slice(6)) as { choices: { delta: { content?: string }; logprobs?: unknown }[]; usage?: { completion_tokens: number } };
        // The first generated token: the first chunk after the role chunk that carries one.
        if (first === 0 && (chunk.choices[0]?.delta.content || chunk.choices[0]?.logprobs)) first = performance.now() - start;
        if (chunk.usage) tokens = chunk.usage.completion_tokens;
      }
    }
    const seconds = (performance.now() - start - first) / 1000;
    return { ttft: first, tps: Math.max(0, tokens - 1) / seconds };
  }

  await raw();
  await agent(false);
  // The engine's own loop (evaluateWithMetadata + confidence), without HTTP: isolates the API cost.
  const engineOnly = registry.get("m").model;
  async function engine(): Promise<{ ttft: number; tps: number }> {
    const start = performance.now();
    let first = 0;
    let n = 0;
    for await (const event of engineOnly.chat({
      messages: [{ role: "user", content: PROMPT }],
      maxTokens: TOKENS,
      temperature: 0,
      topLogprobs: 0,
      signal: new AbortController().signal,
    })) {
      if (event.type !== "token") continue;
      if (n === 0) first = performance.now() - start;
      n++;
    }
    return { ttft: first, tps: (n - 1) / ((performance.now() - start - first) / 1000) };
  }
  const results: Record<string, { ttft: number; tps: number }[]> = { raw: [], "engine (no HTTP)": [], agent: [], "agent+logprobs": [] };
  for (let i = 0; i < ROUNDS; i++) {
    results.raw?.push(await raw());
    results["engine (no HTTP)"]?.push(await engine());
    results.agent?.push(await agent(false));
    results["agent+logprobs"]?.push(await agent(true));
  }
  console.log(
    `# edge agent vs raw node-llama-cpp — ${new Date().toISOString()} — node ${process.version}, ${path.basename(modelPath)}, ${TOKENS} tokens, ${THREADS} thread, ${ROUNDS} rounds, medians\n`,
  );
  console.log("| path | tokens/s | first token ms | tokens/s vs raw |");
  console.log("|---|---:|---:|---:|");
  const rawTps = median(results.raw?.map((r) => r.tps) ?? []);
  for (const [name, rs] of Object.entries(results)) {
    const tps = median(rs.map((r) => r.tps));
    console.log(`| ${name} | ${tps.toFixed(0)} | ${median(rs.map((r) => r.ttft)).toFixed(2)} | ${((tps / rawTps) * 100).toFixed(0)} % |`);
  }
  console.log(
    `\nresident memory added by loading the model: raw ${(rawMemory / 2 ** 20).toFixed(1)} MiB, agent ${(agentMemory / 2 ** 20).toFixed(1)} MiB (GGUF file ${(await import("node:fs")).statSync(modelPath).size} bytes)`,
  );
  await server.close();
  await registry.close();
  await rawContext.dispose();
  await rawModel.dispose();
  await llama.dispose();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
