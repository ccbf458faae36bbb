/**
 * `POST /v1/responses`, OpenAI's Responses API (the default of OpenAI's newer SDKs and agent
 * frameworks), on every backend: parsed into the canonical chat request
 * (`openai-responses-request.ts`), routed, limited, cached and costed like a chat completion,
 * and answered in the Responses schema, streamed or not (`clients/openai-responses.ts`).
 *
 * `previous_response_id`: with `store` (OpenAI's default true), each finished response is kept in
 * the response store (memory, or Redis with `REDIS_URL`) under the caller's tenant; a request
 * naming one gets that conversation in front of its input. An unknown (or another tenant's,
 * or expired) id is a 400 naming the field, as OpenAI answers; a store that cannot answer is a
 * 503 naming it (the call cannot go on without its history: that answer would be silently
 * wrong). A failed write is logged nowhere and costs only that response's continuation.
 */
import type { AssistantMessage, ChatRequest, Message } from "../../common/canonical/types.ts";
import { GatewayError } from "../../common/errors.ts";
import { ok } from "../../common/result.ts";
import { isObject, type JsonObject } from "../../common/schemas/fields.ts";
import { parseResponsesRequest } from "../../common/schemas/openai-responses-request.ts";
import { connectRedis } from "../store/redis.ts";
import { MemoryResponseStore } from "../store/memory-response-store.ts";
import { RedisResponseStore } from "../store/redis-response-store.ts";
import { DEFAULT_RESPONSE_TTL_MS, type ResponseStore } from "../store/response-store.ts";
import { responsesClient, responsesId } from "../translators/clients/openai-responses.ts";
import { planResponses } from "../translators/select.ts";
import type { EndpointSpec, ParsedCall } from "./spec.ts";

let store: ResponseStore | undefined;

/** The process's response store: Redis when `REDIS_URL` is set, else memory (created on first use). */
export function responseStore(): ResponseStore {
  if (!store) {
    const url = process.env.REDIS_URL;
    store = url
      ? new RedisResponseStore(unrefConnection(connectRedis(url, { name: "gearbox-responses" })), { ttlMs: DEFAULT_RESPONSE_TTL_MS }, "gearbox:", true)
      : new MemoryResponseStore({ ttlMs: DEFAULT_RESPONSE_TTL_MS });
  }
  return store;
}

/**
 * Nobody closes the process-wide store, so its connection (each one, across reconnects) must not
 * keep the process alive: without this a process that ever served a Responses call never exits
 * on its own (a CLI run, a test file).
 */
function unrefConnection<C extends { stream: { unref?: () => void } | undefined; on(event: "connect", f: () => void): unknown }>(client: C): C {
  client.on("connect", () => client.stream?.unref?.());
  return client;
}

/** Replaces the process's response store (tests, or a runtime that builds its own). */
export function useResponseStore(next: ResponseStore | undefined): void {
  store = next;
}

export const openaiResponsesEndpoint: EndpointSpec = {
  name: "responses",
  path: "/v1/responses",
  method: "POST",
  parse(json) {
    const parsed = parseResponsesRequest(json);
    if (!parsed.ok) return parsed;
    const { request, previousResponseId, store: keep } = parsed.value;
    const id = responsesId("resp");
    const call = (req: ChatRequest, tenant: string | undefined): ParsedCall => ({
      call: { endpoint: "chat", request: req },
      model: req.model,
      stream: req.stream,
      plan: (provider, ctx) => {
        const onComplete = keep && tenant !== undefined ? (response: JsonObject) => remember(tenant, id, req, response) : undefined;
        return planResponses(
          responsesClient({ id, ...(previousResponseId !== undefined && { previousResponseId }), ...(onComplete && { onComplete }) }),
          provider,
          req,
          ctx,
        );
      },
      prepare: (tenantId) => withHistory(tenantId, request, previousResponseId).then((full) => (full instanceof GatewayError ? full : call(full, tenantId))),
    });
    return ok(call(request, undefined));
  },
};

/** The request with the stored conversation of `previousId` in front of its input (after its instructions). */
async function withHistory(tenant: string, req: ChatRequest, previousId: string | undefined): Promise<ChatRequest | GatewayError> {
  if (previousId === undefined) return req;
  let stored;
  try {
    stored = await responseStore().get(tenant, previousId);
  } catch {
    return new GatewayError(
      503,
      "server_error",
      `'previous_response_id': the response store cannot be read right now; retry, or send the conversation as 'input' items.`,
      {
        param: "previous_response_id",
        code: "response_store_unavailable",
      },
    );
  }
  if (!stored) {
    return new GatewayError(400, "invalid_request_error", `Previous response with id '${previousId}' not found.`, {
      param: "previous_response_id",
      code: "previous_response_not_found",
    });
  }
  const system = req.messages.filter((m) => m.role === "system" || m.role === "developer");
  const rest = req.messages.filter((m) => m.role !== "system" && m.role !== "developer");
  return { ...req, messages: [...system, ...stored.messages, ...rest] };
}

/** Stores the conversation through `response` (fire and forget: a failed write only loses the continuation). */
function remember(tenant: string, id: string, req: ChatRequest, response: JsonObject): void {
  if (response.status !== "completed" && response.status !== "incomplete") return;
  const messages: Message[] = req.messages.filter((m) => m.role !== "system" && m.role !== "developer");
  messages.push(answerOf(response));
  responseStore()
    .put(tenant, id, { messages })
    .catch(() => undefined);
}

/** The assistant message a Responses object's output items make. */
function answerOf(response: JsonObject): AssistantMessage {
  const message: AssistantMessage = { role: "assistant", content: null };
  let text = "";
  for (const item of Array.isArray(response.output) ? response.output : []) {
    if (!isObject(item)) continue;
    if (item.type === "reasoning" && Array.isArray(item.summary)) {
      message.reasoning = item.summary.map((s) => (isObject(s) && typeof s.text === "string" ? s.text : "")).join("\n");
    } else if (item.type === "message" && Array.isArray(item.content)) {
      for (const part of item.content) {
        if (isObject(part) && part.type === "output_text" && typeof part.text === "string") text += part.text;
        if (isObject(part) && part.type === "refusal" && typeof part.refusal === "string") message.refusal = part.refusal;
      }
    } else if (item.type === "function_call" && typeof item.call_id === "string" && typeof item.name === "string") {
      (message.toolCalls ??= []).push({ id: item.call_id, name: item.name, arguments: typeof item.arguments === "string" ? item.arguments : "" });
    }
  }
  if (text !== "") message.content = text;
  return message;
}
