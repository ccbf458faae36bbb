/**
 * A complete OpenAI chat completion replayed as an OpenAI SSE stream. Used when Gearbox had to
 * hold the whole answer before deciding (edge confidence check, cloud upgrade) and the client
 * asked for a stream: the client gets a well-formed stream, just in fewer chunks.
 */
import { isObject, type JsonObject } from "./fields.ts";
import { sseData } from "./sse.ts";

export function sseFromCompletion(completion: JsonObject, includeUsage: boolean): Buffer {
  const head = { id: completion.id, object: "chat.completion.chunk", created: completion.created, model: completion.model };
  const events: Buffer[] = [];
  const choices = Array.isArray(completion.choices) ? completion.choices.filter(isObject) : [];
  for (const choice of choices) {
    const message = isObject(choice.message) ? choice.message : {};
    const index = typeof choice.index === "number" ? choice.index : 0;
    const delta: JsonObject = { role: "assistant", content: typeof message.content === "string" ? message.content : "" };
    if (Array.isArray(message.tool_calls)) {
      delta.tool_calls = message.tool_calls.filter(isObject).map((call, i) => ({ index: i, ...call }));
    }
    events.push(sseData(JSON.stringify(Object.assign({}, head, { choices: [{ index, delta, logprobs: choice.logprobs ?? null, finish_reason: null }] }))));
    events.push(
      sseData(
        JSON.stringify(
          Object.assign(
            {},
            head,
            { choices: [{ index, delta: {}, logprobs: null, finish_reason: choice.finish_reason ?? "stop" }] },
            isObject(completion.gearbox) && { gearbox: completion.gearbox },
          ),
        ),
      ),
    );
  }
  if (includeUsage && isObject(completion.usage)) events.push(sseData(JSON.stringify(Object.assign({}, head, { choices: [], usage: completion.usage }))));
  events.push(sseData("[DONE]"));
  return Buffer.concat(events);
}
