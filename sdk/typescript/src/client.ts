/**
 * `Gearbox`: the official `openai` SDK's shape (`client.chat.completions.create(params)`, a
 * `ChatCompletion`, or an async iterable of `ChatCompletionChunk`s with `stream: true`), asking
 * the gateway first:
 *
 *   1. `POST /v1/device/decide` with the request → a routing instruction from the gateway's
 *      routing brain (target device or cloud, model, reason, policy version).
 *   2. device: the local model answers (`DeviceModels`: the instruction's model, else the active
 *      one); the confidence and tokens go to `POST /v1/device/outcome` (the text never leaves the
 *      device); a weak answer comes back upgraded — the gateway called the cloud and recorded it —
 *      and replaces the local one. With `stream: true` the local answer streams as it is generated
 *      only when it is final (`upgrade: false`); an upgradable one is held until the verdict, as
 *      the gateway holds an edge agent's, then streamed.
 *   3. cloud: the request goes to the gateway's `/v1/chat/completions` as any app's would.
 *
 * Gateway unreachable (connection refused, reset, timeout): with a policy that allows it
 * (`offline: local`, the default, pushed by the gateway) and a loaded model, the local answer is
 * returned as final (`gearbox.reason: gateway_unreachable`, no upgrade, nothing reported later);
 * otherwise — `offline: fail`, never connected, no model — `GatewayUnreachableError` is thrown.
 * An answer the gateway gave (4xx/5xx) is a `GearboxError`, never answered locally.
 *
 * Every completion carries `gearbox: { route: device|cloud, reason, confidence?, decision_id?, fallback? }`.
 */
import { randomUUID } from "node:crypto";
import { DeviceChannel, type Policy } from "./channel.ts";
import { DeviceModels } from "./device-models.ts";
import { GatewayUnreachableError, GearboxError } from "./errors.ts";
import type { ChatTurn, LocalAnswer, ModelHandle } from "./model-handle.ts";
import { readSse } from "./sse.ts";

export interface ChatMessage {
  role: "system" | "user" | "assistant" | "tool" | "developer";
  content: string | { type: string; text?: string }[] | null;
  [k: string]: unknown;
}

export interface ChatCompletionCreateParams {
  model: string;
  messages: ChatMessage[];
  stream?: boolean;
  max_tokens?: number;
  max_completion_tokens?: number;
  temperature?: number;
  top_p?: number;
  stop?: string | string[];
  seed?: number;
  user?: string;
  /** Gearbox: the conversation this call belongs to (context kept by the gateway). */
  conversation_id?: string;
  [k: string]: unknown;
}

export interface GearboxInfo {
  route: "device" | "cloud";
  reason: string;
  confidence?: number | null;
  decision_id?: string;
  fallback?: string;
}

export interface ChatCompletion {
  id: string;
  object: "chat.completion";
  created: number;
  model: string;
  choices: { index: number; message: { role: "assistant"; content: string | null; [k: string]: unknown }; finish_reason: string | null; logprobs: null }[];
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
  gearbox?: GearboxInfo;
  [k: string]: unknown;
}

export interface ChatCompletionChunk {
  id: string;
  object: "chat.completion.chunk";
  created: number;
  model: string;
  choices: { index: number; delta: { role?: "assistant"; content?: string }; finish_reason: string | null }[];
  gearbox?: GearboxInfo;
  [k: string]: unknown;
}

export interface RequestOptions {
  signal?: AbortSignal;
  /** Gearbox: the app's intent tag (`x-gearbox-intent`, honoured when the gateway allows client intents). */
  intent?: string;
  headers?: Record<string, string>;
}

export interface GearboxOptions {
  /** The gateway, as the openai SDK takes it (`http://gateway:8080/v1`). */
  baseURL: string;
  /** The device's call key (bound to its tenant). */
  apiKey?: string;
  /** This device's id (stable across restarts of the app). */
  deviceId: string;
  /** The local models (a handle, or several with the active one first). */
  models?: DeviceModels | ModelHandle | ModelHandle[];
  /** Decision, outcome and cloud calls: the timeout before the gateway counts as unreachable. Default 30 s. */
  timeoutMs?: number;
  backoff?: { baseMs: number; maxMs: number };
  maxConcurrent?: number;
}

type Instruction =
  | { target: "device"; decision_id: string; model: string; reason: string; policy_version: number; confidence_threshold: number; upgrade: boolean }
  | { target: "cloud"; model: string; provider: string; reason: string; policy_version: number };

type Verdict = { action: "keep"; reason: string } | { action: "upgrade"; reason: string; fallback: string; completion: ChatCompletion };

export class Gearbox {
  readonly models: DeviceModels;
  readonly channel: DeviceChannel;
  readonly chat: { completions: { create: Gearbox["create"] } };
  private readonly origin: string;
  private readonly base: string;

  constructor(private readonly o: GearboxOptions) {
    this.base = o.baseURL.replace(/\/+$/, "");
    this.origin = new URL(this.base).origin;
    const m = o.models;
    this.models = m instanceof DeviceModels ? m : new DeviceModels(m === undefined ? [] : Array.isArray(m) ? m : [m]);
    this.channel = new DeviceChannel({
      origin: this.origin,
      deviceId: o.deviceId,
      models: this.models,
      ...(o.apiKey !== undefined && { apiKey: o.apiKey }),
      ...(o.backoff && { backoff: o.backoff }),
      ...(o.maxConcurrent !== undefined && { maxConcurrent: o.maxConcurrent }),
    });
    this.chat = { completions: { create: this.create.bind(this) } };
  }

  /** The policy last received (survives a lost gateway). */
  get policy(): Policy | undefined {
    return this.channel.policy;
  }

  /** Loads the local models and opens the control channel; resolves on the gateway's welcome. */
  async connect(): Promise<void> {
    await this.models.loadAll();
    await this.channel.start();
  }

  async close(): Promise<void> {
    this.channel.close();
    await this.models.close();
  }

  create(params: ChatCompletionCreateParams & { stream: true }, options?: RequestOptions): Promise<AsyncIterable<ChatCompletionChunk>>;
  create(params: ChatCompletionCreateParams & { stream?: false }, options?: RequestOptions): Promise<ChatCompletion>;
  create(params: ChatCompletionCreateParams, options?: RequestOptions): Promise<ChatCompletion | AsyncIterable<ChatCompletionChunk>>;
  async create(params: ChatCompletionCreateParams, options: RequestOptions = {}): Promise<ChatCompletion | AsyncIterable<ChatCompletionChunk>> {
    let instruction: Instruction;
    try {
      instruction = (await this.post("/v1/device/decide", params, options)) as Instruction;
    } catch (err) {
      if (!(err instanceof GatewayUnreachableError)) throw err;
      return this.offline(params, err);
    }
    if (instruction.target === "cloud") return this.cloud(params, options);
    const handle = this.models.get(instruction.model) ?? this.models.active;
    if (!handle)
      throw new GearboxError(409, `The gateway sent this call to model '${instruction.model}', which this device does not hold.`, "model_not_loaded");
    if (params.stream && !instruction.upgrade) return this.streamFinal(handle, params, instruction);
    const answer = await this.answerLocally(handle, params).catch((err: unknown) => err);
    const local = answer instanceof Error || !isAnswer(answer) ? undefined : answer;
    let verdict: Verdict;
    try {
      verdict = (await this.post(
        "/v1/device/outcome",
        {
          decision_id: instruction.decision_id,
          confidence: local?.confidence ?? null,
          status: local ? "ok" : "failed",
          ...(local && { usage: local.usage }),
        },
        options,
      )) as Verdict;
    } catch (err) {
      if (!(err instanceof GatewayUnreachableError) || !local) throw err;
      // Lost between the decision and the outcome: the local answer stands, unjudged.
      verdict = { action: "keep", reason: "gateway_unreachable_after_decision" };
    }
    const completion =
      verdict.action === "upgrade"
        ? {
            ...verdict.completion,
            gearbox: {
              route: "cloud" as const,
              reason: verdict.reason,
              fallback: verdict.fallback,
              confidence: local?.confidence ?? null,
              decision_id: instruction.decision_id,
            },
          }
        : local
          ? localCompletion(handle, local, { route: "device", reason: verdict.reason, confidence: local.confidence, decision_id: instruction.decision_id })
          : undefined;
    if (!completion) throw answer instanceof Error ? answer : new Error("the local model failed and was not upgraded");
    return params.stream ? replay(completion) : completion;
  }

  private answerLocally(handle: ModelHandle, params: ChatCompletionCreateParams, signal?: AbortSignal): Promise<LocalAnswer> {
    this.channel.track(1);
    return handle.chat(turnsOf(params.messages), generateOptions(params, signal)).finally(() => this.channel.track(-1));
  }

  /** A final local answer, streamed as generated; its outcome is reported at the end. */
  private async *streamFinal(
    handle: ModelHandle,
    params: ChatCompletionCreateParams,
    instruction: Instruction & { target: "device" },
  ): AsyncIterable<ChatCompletionChunk> {
    const id = `chatcmpl-${randomUUID()}`;
    const created = Math.floor(Date.now() / 1000);
    const chunk = (delta: ChatCompletionChunk["choices"][0]["delta"], finish: string | null, gearbox?: GearboxInfo): ChatCompletionChunk => ({
      id,
      object: "chat.completion.chunk",
      created,
      model: handle.spec.id,
      choices: [{ index: 0, delta, finish_reason: finish }],
      ...(gearbox && { gearbox }),
    });
    yield chunk({ role: "assistant" }, null);
    this.channel.track(1);
    try {
      for await (const c of handle.chatStream(turnsOf(params.messages), generateOptions(params))) {
        if (c.type === "text") yield chunk({ content: c.text }, null);
        else {
          const verdict = (await this.post(
            "/v1/device/outcome",
            { decision_id: instruction.decision_id, confidence: c.answer.confidence, usage: c.answer.usage },
            {},
          ).catch(() => ({ reason: "gateway_unreachable_after_decision" }))) as { reason: string };
          yield chunk({}, c.answer.finishReason, {
            route: "device",
            reason: verdict.reason,
            confidence: c.answer.confidence,
            decision_id: instruction.decision_id,
          });
        }
      }
    } finally {
      this.channel.track(-1);
    }
  }

  private async offline(params: ChatCompletionCreateParams, err: GatewayUnreachableError): Promise<ChatCompletion | AsyncIterable<ChatCompletionChunk>> {
    const handle = this.models.active;
    if (this.policy?.offline !== "local" || !handle) throw err;
    const answer = await this.answerLocally(handle, params);
    const completion = localCompletion(handle, answer, { route: "device", reason: "gateway_unreachable", confidence: answer.confidence });
    return params.stream ? replay(completion) : completion;
  }

  private async cloud(params: ChatCompletionCreateParams, options: RequestOptions): Promise<ChatCompletion | AsyncIterable<ChatCompletionChunk>> {
    const res = await this.send(`${this.base}/chat/completions`, params, options);
    if (!params.stream) {
      const completion = (await res.json()) as ChatCompletion;
      return { ...completion, gearbox: { route: "cloud", reason: res.headers.get("x-gearbox-reason") ?? "" } };
    }
    if (!res.body) throw new GearboxError(502, "the gateway's stream has no body");
    const body = res.body;
    return (async function* () {
      for await (const e of readSse(body)) {
        if (e.data === "[DONE]") return;
        yield JSON.parse(e.data) as ChatCompletionChunk;
      }
    })();
  }

  private async post(path: string, body: unknown, options: RequestOptions): Promise<unknown> {
    const res = await this.send(`${this.origin}${path}`, body, options);
    return res.json();
  }

  /** A POST to the gateway: its error answers as `GearboxError`, no answer at all as `GatewayUnreachableError`. */
  private async send(url: string, body: unknown, options: RequestOptions): Promise<Response> {
    const timeout = AbortSignal.timeout(this.o.timeoutMs ?? 30_000);
    const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
    const headers: Record<string, string> = {
      "content-type": "application/json",
      "x-gearbox-device-id": this.o.deviceId,
      ...(this.o.apiKey !== undefined && { authorization: `Bearer ${this.o.apiKey}` }),
      ...(options.intent !== undefined && { "x-gearbox-intent": options.intent }),
      ...options.headers,
    };
    let res: Response;
    try {
      res = await fetch(url, { method: "POST", headers, body: JSON.stringify(body), signal });
    } catch (err) {
      if (options.signal?.aborted) throw err;
      throw new GatewayUnreachableError(`The gateway at ${this.origin} could not be reached: ${(err as Error).message}`, { cause: err });
    }
    if (!res.ok) throw GearboxError.fromBody(res.status, await res.text());
    return res;
  }
}

function isAnswer(x: unknown): x is LocalAnswer {
  return typeof x === "object" && x !== null && "text" in x;
}

function turnsOf(messages: ChatMessage[]): ChatTurn[] {
  return messages.map((m) => ({
    role: m.role === "developer" ? "system" : m.role,
    content: typeof m.content === "string" ? m.content : (m.content ?? []).map((p) => p.text ?? "").join(""),
  }));
}

function generateOptions(p: ChatCompletionCreateParams, signal?: AbortSignal) {
  const maxTokens = p.max_completion_tokens ?? p.max_tokens;
  return {
    ...(maxTokens !== undefined && { maxTokens }),
    ...(p.temperature !== undefined && { temperature: p.temperature }),
    ...(p.top_p !== undefined && { topP: p.top_p }),
    ...(p.stop !== undefined && { stop: typeof p.stop === "string" ? [p.stop] : p.stop }),
    ...(p.seed !== undefined && { seed: p.seed }),
    ...(signal && { signal }),
  };
}

function localCompletion(handle: ModelHandle, a: LocalAnswer, gearbox: GearboxInfo): ChatCompletion {
  return {
    id: `chatcmpl-${randomUUID()}`,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: handle.spec.id,
    choices: [{ index: 0, message: { role: "assistant", content: a.text }, finish_reason: a.finishReason, logprobs: null }],
    usage: { ...a.usage, total_tokens: a.usage.prompt_tokens + a.usage.completion_tokens },
    gearbox,
  };
}

/** A whole completion as a short chunk stream (role, content, finish). */
async function* replay(c: ChatCompletion): AsyncIterable<ChatCompletionChunk> {
  await Promise.resolve();
  yield* replayChunks(c);
}

function* replayChunks(c: ChatCompletion): Generator<ChatCompletionChunk> {
  const base = { id: c.id, object: "chat.completion.chunk" as const, created: c.created, model: c.model };
  const choice = c.choices[0];
  yield { ...base, choices: [{ index: 0, delta: { role: "assistant" }, finish_reason: null }] };
  const content = choice?.message.content;
  if (content) yield { ...base, choices: [{ index: 0, delta: { content }, finish_reason: null }] };
  yield { ...base, choices: [{ index: 0, delta: {}, finish_reason: choice?.finish_reason ?? "stop" }], ...(c.gearbox && { gearbox: c.gearbox }) };
}
