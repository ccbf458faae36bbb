/**
 * Online calibration's background cloud call: the request an edge answer was kept for, asked of
 * the cloud model the cascade would have upgraded to, only to be judged against the edge's. No
 * retries and no caller's budget: a shadow call that fails is a dropped sample, nothing more.
 * Its answer never reaches the client.
 */
import type { ChatRequest } from "../../common/canonical/types.ts";
import { isObject, type JsonObject } from "../../common/schemas/fields.ts";
import { toOpenAIChatRequest } from "../../common/schemas/openai-chat-emit.ts";
import type { GatewayConfig } from "../config/load.ts";
import { resolveProvider } from "../routing/provider-route.ts";
import { planChat } from "../translators/select.ts";
import { callCloud } from "./cloud-call.ts";

/** The cloud's answer text to `request` under `model`; throws when there is none (no provider, an error status, no text). */
export async function shadowAnswer(config: GatewayConfig, model: string, request: ChatRequest): Promise<string> {
  const resolved = resolveProvider(model, config.providers);
  if (!resolved.ok) throw new Error(`no cloud provider for ${model}`);
  const { provider, upstreamModel } = resolved.value;
  const req: ChatRequest = Object.assign({}, request, { model, stream: false });
  delete req.includeUsage;
  const raw: JsonObject = toOpenAIChatRequest(req);
  const plan = planChat("openai", provider, req, raw, { upstreamModel, forceStreamUsage: false });
  const answer = await callCloud(provider, plan, Buffer.from(JSON.stringify(raw)));
  if (answer.status !== 200) throw new Error(`the cloud answered ${answer.status}`);
  let json: unknown;
  try {
    json = JSON.parse(answer.bytes.toString("utf8"));
  } catch {
    throw new Error("the cloud's answer is not JSON");
  }
  if (!isObject(json)) throw new Error("the cloud's answer is not a completion");
  return answerText(json);
}

/** The first choice's message text of an OpenAI completion ("" when it has none). */
export function answerText(completion: JsonObject): string {
  const choices = completion.choices;
  const first: unknown = Array.isArray(choices) ? choices[0] : undefined;
  const message = isObject(first) ? first.message : undefined;
  const content = isObject(message) ? message.content : undefined;
  return typeof content === "string" ? content : "";
}
