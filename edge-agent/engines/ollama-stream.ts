/**
 * Turns the objects of an Ollama `/api/chat` stream into engine `ChatEvent`s, as a pure state
 * machine (no I/O), so the mapping is tested without a server.
 *
 * Token text and log-probabilities. Ollama ≥ 0.12.11 (its PR #12899) answers `"logprobs": true`
 * with a `logprobs` array on each chunk, one entry per sampled token: `{token, logprob, bytes?,
 * top_logprobs?}` (`api.Logprob` in Ollama's `api/types.go`, `Logprob` in its
 * `docs/openapi.yaml`; older servers ignore the request field and send none). A chunk
 * usually carries one token whose text is the chunk's `message.content`, but not always: Ollama
 * holds text back while it checks stop sequences and tool-call or thinking parsers, then sends
 * several tokens' text in one chunk, or sends a chunk with logprobs and no content at all. So:
 *
 * - entries whose tokens spell exactly the chunk's content become one event per token, with the
 *   token's own logprob, bytes and alternatives;
 * - entries on a chunk with neither content nor thinking wait for the next content chunk (any
 *   still waiting when the stream ends are dropped);
 * - entries on a thinking-only chunk are dropped (reasoning is not the answer);
 * - otherwise the chunk's content becomes one event whose logprob is the sum of the entries
 *   (the joint log-probability of that text) and whose alternatives are those of the single
 *   entry when there is exactly one (none otherwise: alternatives belong to one position);
 * - content with no entries at all (a server older than 0.12.11, or a chunk the server sent
 *   without them) gets `logprob: NaN`. NaN means "not reported", never "certain" or "impossible":
 *   the confidence layer (`edge-agent/confidence.ts`, `ConfidenceMeter.add`) already skips
 *   non-finite values, and an answer whose tokens are all NaN has no score (`null`), so it must
 *   not be taken as low confidence either; an OpenAI-shaped `logprobs` field should be `null`.
 *
 * Thinking text and tool calls have no `ChatEvent` and are not emitted.
 */
import type { ChatEvent, TokenAlternative } from "./engine.ts";
import { EngineError } from "./engine.ts";

/** One stream object, loosely typed: Ollama omits fields freely (the final object may lack `message`). */
export interface OllamaWireChunk {
  message?: { content?: string; thinking?: string };
  done?: boolean;
  done_reason?: string;
  prompt_eval_count?: number;
  eval_count?: number;
  logprobs?: unknown;
}

/** A validated `logprobs` entry. */
interface TokenLogprob {
  token: string;
  logprob: number;
  bytes: number[] | undefined;
  top: TokenAlternative[];
}

const encoder = new TextEncoder();

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function readBytes(value: unknown): number[] | undefined {
  return Array.isArray(value) && value.every((b): b is number => Number.isInteger(b) && b >= 0 && b <= 255) ? value : undefined;
}

function readAlternative(value: unknown): TokenAlternative | undefined {
  if (!isRecord(value) || typeof value.token !== "string" || typeof value.logprob !== "number") return undefined;
  return { token: value.token, logprob: value.logprob };
}

/** The chunk's `logprobs`, keeping only well-formed entries (a malformed one is treated as absent). */
function readLogprobs(value: unknown): TokenLogprob[] {
  if (!Array.isArray(value)) return [];
  const out: TokenLogprob[] = [];
  for (const entry of value) {
    if (!isRecord(entry) || typeof entry.token !== "string" || typeof entry.logprob !== "number") continue;
    const top = Array.isArray(entry.top_logprobs) ? entry.top_logprobs.map(readAlternative).filter((a): a is TokenAlternative => a !== undefined) : [];
    out.push({ token: entry.token, logprob: entry.logprob, bytes: readBytes(entry.bytes), top });
  }
  return out;
}

function tokenEvent(text: string, logprob: number, bytes: number[] | undefined, topLogprobs: TokenAlternative[]): ChatEvent {
  return { type: "token", text, logprob, bytes: bytes ?? Array.from(encoder.encode(text)), topLogprobs };
}

/** Events for `content` given the logprob entries that produced it (see the module comment). */
function eventsFor(content: string, entries: readonly TokenLogprob[]): ChatEvent[] {
  if (entries.length === 0) return [tokenEvent(content, Number.NaN, undefined, [])];
  if (entries.map((e) => e.token).join("") === content) return entries.map((e) => tokenEvent(e.token, e.logprob, e.bytes, e.top));
  const joint = entries.reduce((sum, e) => sum + e.logprob, 0);
  const only = entries.length === 1 ? entries[0] : undefined;
  return [tokenEvent(content, joint, undefined, only?.top ?? [])];
}

/** Maps `done_reason` to a finish reason; absent (servers before ~0.5) is inferred from the token count. */
export function finishReasonOf(doneReason: string | undefined, completionTokens: number, maxTokens: number): "stop" | "length" {
  if (doneReason === "stop") return "stop";
  if (doneReason === "length") return "length";
  if (doneReason === undefined || doneReason === "") return completionTokens >= maxTokens ? "length" : "stop";
  throw new EngineError(`Ollama ended the stream with an unknown done_reason '${doneReason}'.`, "engine_crashed");
}

/** Stateful mapper for one stream; feed it every object in order. */
export class OllamaStreamMapper {
  private pending: TokenLogprob[] = [];
  private finished = false;

  constructor(private readonly maxTokens: number) {}

  /** Whether the final (`done: true`) object has been seen. */
  get done(): boolean {
    return this.finished;
  }

  /** The events one stream object yields; the final object yields its text (if any) and `done`. */
  map(chunk: OllamaWireChunk): ChatEvent[] {
    if (this.finished) throw new EngineError("Ollama sent data after the final stream object.", "engine_crashed");
    const content = chunk.message?.content ?? "";
    const thinking = chunk.message?.thinking ?? "";
    const entries = readLogprobs(chunk.logprobs);
    const events: ChatEvent[] = [];
    if (content !== "") {
      events.push(...eventsFor(content, [...this.pending, ...entries]));
      this.pending = [];
    } else if (thinking === "") {
      this.pending.push(...entries);
    }
    if (chunk.done === true) {
      this.finished = true;
      const completionTokens = chunk.eval_count ?? 0;
      events.push({
        type: "done",
        finishReason: finishReasonOf(chunk.done_reason, completionTokens, this.maxTokens),
        promptTokens: chunk.prompt_eval_count ?? 0,
        completionTokens,
      });
    }
    return events;
  }
}
