/**
 * Per-token time of the llama.cpp engine on the tiny GGUF (CPU), by thread count and with or
 * without top alternatives. The tiny model's compute is negligible, so this measures the
 * engine's and node-llama-cpp's per-token overhead plus llama.cpp's fixed decode cost.
 *   node --import tsx edge-agent/engines/llamacpp.bench.ts [threads…]
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { getLlama, LlamaLogLevel } from "node-llama-cpp";
import { writeTinyGguf } from "../edge-agent/model/tiny-gguf.ts";
import { createLlamaCppEngine } from "../edge-agent/engines/llamacpp.ts";

const TOKENS = 400;
const ROUNDS = 3;

const dir = await mkdtemp(path.join(tmpdir(), "llamacpp-bench-"));
const file = path.join(dir, "tiny.gguf");
await writeTinyGguf(file);
const llama = await getLlama({ gpu: false, build: "never", logLevel: LlamaLogLevel.error });
const engine = createLlamaCppEngine({ llama });
const threadCounts = process.argv.slice(2).map(Number);
try {
  for (const threads of threadCounts.length > 0 ? threadCounts : [1, 2]) {
    // Context large enough for the prompt and every generated token.
    const model = await engine.load({ id: "tiny", engine: "llamacpp", source: file, threads, contextLength: 1024 });
    for (const topLogprobs of [0, 5]) {
      const perToken: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        let first = 0;
        let count = 0;
        for await (const event of model.chat({
          messages: [{ role: "user", content: `round ${round}` }],
          maxTokens: TOKENS,
          temperature: 0,
          topLogprobs,
          signal: new AbortController().signal,
        })) {
          if (event.type !== "token") continue;
          if (++count === 1) first = performance.now();
        }
        // The first token carries the prompt's evaluation; time the rest.
        perToken.push((performance.now() - first) / Math.max(1, count - 1));
      }
      perToken.sort((a, b) => a - b);
      const median = perToken[Math.floor(perToken.length / 2)] ?? NaN;
      console.log(`threads=${threads} topLogprobs=${topLogprobs}: ${median.toFixed(3)} ms/token (median of ${ROUNDS} × ${TOKENS} tokens)`);
    }
    await model.unload();
  }
} finally {
  await engine.close();
  await llama.dispose();
  await rm(dir, { recursive: true, force: true });
}
