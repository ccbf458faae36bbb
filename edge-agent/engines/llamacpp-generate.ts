/**
 * Token-by-token generation on one context sequence, with per-token log-probabilities.
 *
 * node-llama-cpp 3.21.1's `sequence.evaluateWithMetadata(tokens, {confidence, probabilities})`
 * yields each next token with its probability (and, with `probabilities`, the whole distribution,
 * sorted). It always runs llama.cpp's greedy sampler, whose distribution is the plain softmax of
 * the logits; at `temperature > 0` the token is drawn in `sampleToken` and fed back as the
 * generator's replacement token. The full distribution is fetched only when alternatives or
 * sampling need it: it costs a sort and a copy of the whole vocabulary per token.
 *
 * The KV cache of the sequence is reused: the prompt's common prefix with what the sequence
 * already holds (the previous chat on it) is kept and only the rest is evaluated. llama.cpp does
 * not promise bit-identical logits across batch shapes, so a reused prefix can move
 * log-probabilities in the last digits (greedy tokens are unaffected in practice); `reusePrefix:
 * false` evaluates every prompt from scratch.
 */
import type { LlamaContextSequence, LlamaModel, Token } from "node-llama-cpp";
import type { ChatEvent, ChatParams, TokenAlternative } from "./engine.ts";
import { mulberry32, sampleToken } from "./llamacpp-sampling.ts";
import { StopStringBuffer } from "./llamacpp-stop.ts";
import type { TokenRenderer } from "./llamacpp-vocab.ts";

/** Everything one generation needs; the caller owns the sequence for its duration. */
export interface GenerationInput {
  model: LlamaModel;
  sequence: LlamaContextSequence;
  prompt: readonly Token[];
  params: ChatParams;
  renderer: TokenRenderer;
  stopTokens: ReadonlySet<Token>;
  /** Keep the sequence's cached prefix of the prompt. */
  reusePrefix: boolean;
  /** Aborts generation (the client's signal, or the model unloading). Checked before every token. */
  signal: AbortSignal;
}

type TokenEvent = Extract<ChatEvent, { type: "token" }>;

/** What one evaluation step gives: the greedy token, its probability, maybe the distribution. */
interface Step {
  token: Token;
  confidence?: number;
  probabilities?: Map<Token, number>;
}

/** Probabilities of zero (float underflow) are reported as this log-probability, as OpenAI does. */
export const LOGPROB_FLOOR = -9999;

const logprobOf = (p: number | undefined): number => (p !== undefined && p > 0 ? Math.max(Math.log(p), LOGPROB_FLOOR) : LOGPROB_FLOOR);

/**
 * Drops what the sequence holds beyond the prompt's cached prefix and evaluates the prompt up to
 * its last batch, one batch at a time so an abort is seen between batches (llama.cpp cannot stop
 * a batch midway). Returns the tokens left to evaluate: at least one, whose logits give the first
 * answer token.
 */
async function prepareSequence(sequence: LlamaContextSequence, prompt: readonly Token[], reuse: boolean, signal: AbortSignal): Promise<Token[]> {
  const keep = reuse ? Math.min(sequence.compareContextTokens([...prompt]).firstDifferentIndex, prompt.length - 1) : 0;
  if (sequence.nextTokenIndex > keep) await sequence.eraseContextTokenRanges([{ start: keep, end: sequence.nextTokenIndex }]);
  const batch = Math.max(1, sequence.context.batchSize);
  let at = keep;
  while (prompt.length - at > batch) {
    signal.throwIfAborted();
    await sequence.evaluateWithoutGeneratingNewTokens(prompt.slice(at, at + batch));
    at += batch;
  }
  signal.throwIfAborted();
  return prompt.slice(at);
}

function evaluate(sequence: LlamaContextSequence, tokens: Token[], full: boolean): AsyncGenerator<Step, void, void | Token | Token[]> {
  const options = { temperature: 0, yieldEogToken: true } as const;
  return full
    ? sequence.evaluateWithMetadata(tokens, { confidence: true, probabilities: true }, options)
    : sequence.evaluateWithMetadata(tokens, { confidence: true }, options);
}

function alternatives(step: Step, count: number, renderer: TokenRenderer): TokenAlternative[] {
  const out: TokenAlternative[] = [];
  if (count <= 0 || step.probabilities === undefined) return out;
  for (const [token, p] of step.probabilities) {
    if (out.length >= count) break;
    out.push({ token: renderer.display(token), logprob: logprobOf(p) });
  }
  return out;
}

/**
 * Generates the answer to `prompt`. Yields `token` events, then one `done`. Throws the signal's
 * reason when it aborts (checked before each token), and whatever node-llama-cpp throws.
 * `completionTokens` counts every token generated except the one that ended the turn, including
 * tokens hidden because they formed a stop string. A multi-byte character cut short by
 * `maxTokens` adds no text (its bytes are still in `bytes`).
 */
export async function* generate(input: GenerationInput): AsyncGenerator<ChatEvent, void, undefined> {
  const { sequence, prompt, params, renderer, stopTokens, model, signal } = input;
  const budget = Math.min(params.maxTokens, sequence.contextSize - prompt.length);
  const promptTokens = prompt.length;
  if (budget <= 0) {
    yield { type: "done", finishReason: "length", promptTokens, completionTokens: 0 };
    return;
  }
  signal.throwIfAborted();
  const sampling = params.temperature > 0;
  const random = sampling ? mulberry32(params.seed ?? Math.floor(Math.random() * 2 ** 32)) : undefined;
  const topP = params.topP ?? 1;
  const stops = new StopStringBuffer<TokenEvent>(params.stop ?? []);
  const decoder = new TextDecoder("utf-8");

  const evalTokens = await prepareSequence(sequence, prompt, input.reusePrefix, signal);
  const steps = evaluate(sequence, evalTokens, sampling || params.topLogprobs > 0);
  let generated = 0;
  let finishReason: "stop" | "length" | undefined;
  try {
    let next = await steps.next();
    while (!next.done) {
      const step = next.value;
      let token = step.token;
      let probability = step.confidence;
      if (random !== undefined && step.probabilities !== undefined) {
        token = sampleToken(step.probabilities, params.temperature, topP, random);
        probability = step.probabilities.get(token);
      }
      if (stopTokens.has(token) || model.isEogToken(token)) {
        finishReason = "stop";
        break;
      }
      generated++;
      const bytes = renderer.bytes(token);
      const event: TokenEvent = {
        type: "token",
        text: decoder.decode(bytes, { stream: true }),
        logprob: logprobOf(probability),
        bytes: Array.from(bytes),
        topLogprobs: alternatives(step, params.topLogprobs, renderer),
      };
      const pushed = stops.push(event, event.text);
      for (const { item, text } of pushed.emit) yield { ...item, text };
      if (pushed.stopped) {
        finishReason = "stop";
        break;
      }
      if (generated >= budget) {
        finishReason = "length";
        break;
      }
      signal.throwIfAborted();
      next = await steps.next(token);
    }
    // Held tokens that turned out not to start a stop string (empty after a stop string matched).
    for (const { item, text } of stops.flush()) yield { ...item, text };
  } finally {
    await steps.return();
  }
  // The evaluator ending on its own (no token to sample) is an end of turn.
  yield { type: "done", finishReason: finishReason ?? "stop", promptTokens, completionTokens: generated };
}
