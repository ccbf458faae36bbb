/**
 * `streamGenerateContent?alt=sse` → canonical chunks. Each SSE event is a whole
 * `GenerateContentResponse` holding the next slice of every candidate; one event gives one chunk:
 * the role on a candidate's first delta, text as content, `thought` text as reasoning, every
 * function call as one complete tool-call delta (id, name, full arguments; `index` counts the
 * candidate's calls), and the finish reason (with a refusal when a filter stopped it) on the
 * event that carries it. `usageMetadata` is cumulative in every event: the last one becomes a
 * usage chunk (no choices) at `end()`.
 *
 * Gemini sends no `[DONE]`: a stream is complete when every candidate has finished (or the
 * prompt was blocked). `end()` throws a 502 when it has not, when the stream ended in the middle
 * of an event, or held no event. Invalid JSON, a body that is not a response, and an `error`
 * object (as a `data:` event or a bare JSON block) throw too, the latter with its own status
 * (see `statusOfGoogleError`) and Google's status name as `code`.
 */
import type { ChatChunk, ChunkChoice, FinishReason, Usage } from "../../../common/canonical/types.ts";
import { GatewayError } from "../../../common/errors.ts";
import { isObject, type JsonObject } from "../../../common/schemas/fields.ts";
import type { BackendContext, ChatStreamDecoder } from "../codec.ts";
import {
  finishRefusal,
  isPromptBlock,
  mapFinish,
  noContentError,
  notAResponse,
  parseGeminiUsage,
  promptRefusal,
  readCandidate,
  type CandidateSlice,
} from "./gemini-candidate.ts";
import { googleStatusError, statusOfGoogleError } from "./gemini-error.ts";
import { FunctionCallAssembler } from "./gemini-function-calls.ts";
import { responseMeta, toToolCall, type ResponseMeta } from "./gemini-response.ts";
import { GeminiSseFramer, type GeminiBlock } from "./gemini-sse.ts";
import { parseUpstreamJson } from "../upstream-json.ts";

interface CandidateState {
  readonly assembler: FunctionCallAssembler;
  roleSent: boolean;
  toolCalls: number;
  output: boolean;
  finished: boolean;
}

function truncated(message: string): GatewayError {
  return new GatewayError(502, "upstream_error", message, { code: "stream_truncated" });
}

/** One block → the response object it carries; errors and garbage throw. */
function parseBlock(block: GeminiBlock, unterminated: boolean): JsonObject {
  const text = block.kind === "data" ? block.data : block.text;
  const parsed = parseUpstreamJson(text, "stream event", "Gemini");
  if (!parsed.ok) throw unterminated ? truncated("Gemini's stream ended in the middle of an event.") : parsed.errors[0];
  const json = parsed.value;
  if (isObject(json) && isObject(json.error)) throw googleStatusError(statusOfGoogleError(json.error), json.error);
  if (block.kind === "raw") throw notAResponse("a stream block without 'data:'");
  if (!isObject(json) || !(Array.isArray(json.candidates) || isObject(json.promptFeedback) || isObject(json.usageMetadata))) {
    throw notAResponse("a stream event without candidates, promptFeedback or usageMetadata");
  }
  return json;
}

/** Per-request decoder of a Gemini SSE stream. */
export class GeminiStreamDecoder implements ChatStreamDecoder {
  private readonly framer = new GeminiSseFramer();
  private readonly candidates = new Map<number, CandidateState>();
  private meta: ResponseMeta | undefined;
  private usage: Usage | undefined;
  private blocked = false;
  private calls = 0;
  private readonly nextCallId = (): number => this.calls++;

  constructor(private readonly ctx: BackendContext) {}

  push(chunk: Buffer): ChatChunk[] {
    return this.decode(this.framer.push(chunk), false);
  }

  end(): ChatChunk[] {
    const out = this.decode(this.framer.flush(), true);
    const meta = this.meta;
    if (meta === undefined) throw truncated("Gemini's stream ended without sending a response.");
    if (!this.blocked) {
      if (this.candidates.size === 0) throw truncated("Gemini's stream ended without candidates.");
      for (const [index, state] of this.candidates) {
        if (!state.finished) throw truncated(`Gemini's stream ended before candidate ${index} finished.`);
      }
    }
    if (this.usage) out.push(Object.assign({}, meta, { choices: [], usage: this.usage, extra: {} }));
    return out;
  }

  private decode(blocks: GeminiBlock[], unterminated: boolean): ChatChunk[] {
    const out: ChatChunk[] = [];
    for (const block of blocks) {
      const chunk = this.event(parseBlock(block, unterminated));
      if (chunk) out.push(chunk);
    }
    return out;
  }

  private event(json: JsonObject): ChatChunk | undefined {
    const meta = (this.meta ??= responseMeta(json, this.ctx));
    this.usage = parseGeminiUsage(json.usageMetadata) ?? this.usage;
    const choices: ChunkChoice[] = [];
    if (isPromptBlock(json)) {
      this.blocked = true;
      const state = this.state(0);
      state.finished = true;
      choices.push(this.choice(state, 0, { refusal: promptRefusal(json.promptFeedback) }, "content_filter"));
    } else if (Array.isArray(json.candidates)) {
      json.candidates.forEach((raw, position) => {
        const choice = isObject(raw) ? this.candidate(readCandidate(raw, position)) : undefined;
        if (choice) choices.push(choice);
      });
    }
    return choices.length > 0 ? Object.assign({}, meta, { choices, extra: {} }) : undefined;
  }

  private candidate(slice: CandidateSlice): ChunkChoice | undefined {
    const state = this.state(slice.index);
    const ending = slice.finishReason !== undefined && !state.finished;
    const completed = slice.calls.flatMap((c) => state.assembler.push(c));
    if (ending) completed.push(...state.assembler.finish());
    const delta: ChunkChoice["delta"] = {};
    if (slice.text !== "") delta.content = slice.text;
    if (slice.reasoning !== "") delta.reasoning = slice.reasoning;
    if (completed.length > 0) {
      delta.toolCalls = completed.map((c) => ({ index: state.toolCalls++, ...toToolCall(c, this.nextCallId) }));
    }
    state.output ||= Object.keys(delta).length > 0;
    let finishReason: FinishReason | null = null;
    if (ending) {
      const finish = mapFinish(slice.finishReason, state.toolCalls > 0);
      if (!state.output && finish.abnormal) throw noContentError(slice);
      if (finish.filtered) delta.refusal = finishRefusal(slice);
      finishReason = finish.finishReason;
      state.finished = true;
    }
    if (Object.keys(delta).length === 0 && finishReason === null && slice.logprobs === undefined) return undefined;
    const choice = this.choice(state, slice.index, delta, finishReason);
    if (slice.logprobs !== undefined) choice.logprobs = slice.logprobs;
    return choice;
  }

  private choice(state: CandidateState, index: number, delta: ChunkChoice["delta"], finishReason: FinishReason | null): ChunkChoice {
    if (state.roleSent) return { index, delta, finishReason };
    state.roleSent = true;
    return { index, delta: { role: "assistant", ...delta }, finishReason };
  }

  private state(index: number): CandidateState {
    let state = this.candidates.get(index);
    if (state === undefined) {
      state = { assembler: new FunctionCallAssembler(), roleSent: false, toolCalls: 0, output: false, finished: false };
      this.candidates.set(index, state);
    }
    return state;
  }
}
