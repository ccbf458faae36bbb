/**
 * A complete Gemini `GenerateContentResponse` → canonical `ChatResponse`. Candidates become
 * choices (see `gemini-candidate.ts` for parts and finish reasons); function calls get ids
 * `call_<n>` (n counts the response's calls from 0), carrying Gemini's own id and thought
 * signature when it sent them (`gemini-call-id.ts`), and their
 * arguments are JSON text. A blocked prompt (`promptFeedback`, no candidates) is a normal
 * response with one `content_filter` choice whose refusal says why: never an empty success.
 * The response id is Gemini's `responseId` (else a generated one), the model its `modelVersion`.
 */
import { randomUUID } from "node:crypto";
import type { AssistantMessage, ChatChoice, ChatResponse, ToolCall } from "../../../common/canonical/types.ts";
import type { GatewayError } from "../../../common/errors.ts";
import { fail, ok, type Result } from "../../../common/result.ts";
import { isObject, type JsonObject } from "../../../common/schemas/fields.ts";
import type { BackendContext } from "../codec.ts";
import {
  finishRefusal,
  isPromptBlock,
  mapFinish,
  noContentError,
  notAResponse,
  parseGeminiUsage,
  promptRefusal,
  readCandidate,
  str,
  type CandidateSlice,
} from "./gemini-candidate.ts";
import { encodeCallId } from "./gemini-call-id.ts";
import { FunctionCallAssembler, type CompletedCall } from "./gemini-function-calls.ts";
import { geminiModelId } from "./gemini-model.ts";

/** Id, creation time and model of a response or stream. */
export interface ResponseMeta {
  id: string;
  created: number;
  model: string;
}

/** Meta from the body: `responseId`, `createTime` (Vertex), `modelVersion`; else generated, now, the routed model. */
export function responseMeta(json: JsonObject, ctx: BackendContext): ResponseMeta {
  const createTime = str(json.createTime);
  const parsed = createTime === undefined ? NaN : Date.parse(createTime);
  return {
    id: str(json.responseId) ?? `gemini-${randomUUID()}`,
    created: Math.floor((Number.isNaN(parsed) ? Date.now() : parsed) / 1000),
    model: str(json.modelVersion) ?? geminiModelId(ctx.upstreamModel),
  };
}

/** A completed Gemini call as a canonical tool call; `next` numbers generated ids. */
export function toToolCall(call: CompletedCall, next: () => number): ToolCall {
  const id = encodeCallId(`call_${next()}`, {
    ...(call.id !== undefined && { id: call.id }),
    ...(call.thoughtSignature !== undefined && { thoughtSignature: call.thoughtSignature }),
  });
  return { id, name: call.name, arguments: JSON.stringify(call.args) };
}

/** Parses a success body; anything that is not a usable response is a 502. */
export function parseGeminiResponse(json: unknown, ctx: BackendContext): Result<ChatResponse, GatewayError> {
  if (!isObject(json)) return fail(notAResponse("a body that is not a JSON object"));
  const meta = responseMeta(json, ctx);
  const response: ChatResponse = Object.assign({}, meta, { choices: [], extra: {} });
  const usage = parseGeminiUsage(json.usageMetadata);
  if (usage) response.usage = usage;
  if (isPromptBlock(json)) {
    const message: AssistantMessage = { role: "assistant", content: null, refusal: promptRefusal(json.promptFeedback) };
    response.choices.push({ index: 0, message, finishReason: "content_filter" });
    return ok(response);
  }
  if (!Array.isArray(json.candidates)) return fail(notAResponse("a body without candidates or promptFeedback"));
  let calls = 0;
  const next = (): number => calls++;
  const failures: CandidateSlice[] = [];
  json.candidates.forEach((raw, position) => {
    if (!isObject(raw)) return;
    const slice = readCandidate(raw, position);
    const choice = toChoice(slice, next);
    if (choice === undefined) failures.push(slice);
    else response.choices.push(choice);
  });
  if (response.choices.length > 0) return ok(response);
  const [first] = failures;
  return fail(first === undefined ? notAResponse("an empty candidates list") : noContentError(first));
}

/** One candidate → a choice, or `undefined` for a failed generation (no output, abnormal end). */
function toChoice(slice: CandidateSlice, next: () => number): ChatChoice | undefined {
  const assembler = new FunctionCallAssembler();
  const completed = [...slice.calls.flatMap((c) => assembler.push(c)), ...assembler.finish()];
  const toolCalls = completed.map((c) => toToolCall(c, next));
  const finish = mapFinish(slice.finishReason, toolCalls.length > 0);
  const empty = slice.text === "" && slice.reasoning === "" && toolCalls.length === 0;
  if (empty && finish.abnormal) return undefined;
  const message: AssistantMessage = { role: "assistant", content: slice.text === "" && (finish.filtered || toolCalls.length > 0) ? null : slice.text };
  if (finish.filtered) message.refusal = finishRefusal(slice);
  if (toolCalls.length > 0) message.toolCalls = toolCalls;
  if (slice.reasoning !== "") message.reasoning = slice.reasoning;
  const choice: ChatChoice = { index: slice.index, message, finishReason: finish.finishReason };
  if (slice.logprobs !== undefined) choice.logprobs = slice.logprobs;
  return choice;
}
