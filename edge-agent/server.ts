/**
 * The edge agent's HTTP API (port 8088): OpenAI-compatible `/v1/chat/completions` (with
 * logprobs and confidence), `/v1/embeddings`, `/v1/models`, `/v1/tokenize` (token counts by the model's own tokenizer); `/healthz`, `/readyz`, `/metrics`;
 * and `/admin/models` to load and unload models without a restart.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { GatewayError, invalidRequest, toErrorResponse } from "../common/errors.ts";
import { parseOpenAIChatRequest } from "../common/schemas/openai-chat-request.ts";
import { float32Base64, parseOpenAIEmbeddingsRequest, toOpenAIEmbeddingsResponse } from "../common/schemas/openai-embeddings.ts";
import { isObject } from "../common/schemas/fields.ts";
import { decodeJsonBody } from "../common/schemas/json-body.ts";
import { answerMalformedHttp } from "../common/net/malformed-http.ts";
import type { Logger } from "../common/telemetry/logger.ts";
import { handleChat } from "./chat-handler.ts";
import { EngineError, type EngineKind, type ModelSpec } from "./engines/engine.ts";
import { AgentMetrics } from "./metrics.ts";
import type { ModelRegistry } from "./registry.ts";
import { endAgentSpan, startAgentSpan, type ServedRequest } from "./tracing.ts";
import type { Tracer } from "@opentelemetry/api";

const MAX_BODY = 4 * 1024 * 1024;
const ENGINES: readonly EngineKind[] = ["llamacpp", "ollama", "onnx"];

export interface EdgeAgentServer {
  port: number;
  metrics: AgentMetrics;
  close(): Promise<void>;
}

export interface EdgeAgentOptions {
  registry: ModelRegistry;
  logger: Logger;
  /** When set, `/admin/*` requires `authorization: Bearer <token>`. */
  adminToken?: string;
  /** OpenTelemetry tracer (`--otlp-endpoint`); absent → no spans. */
  tracer?: Tracer;
}

function sendJson(res: http.ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  const body = Buffer.from(JSON.stringify(value));
  res.writeHead(status, { "content-type": "application/json", "content-length": String(body.length), ...headers });
  res.end(body);
}

/** The most texts one `/v1/tokenize` counts. */
export const TOKENIZE_MAX_TEXTS = 512;

/** `POST /v1/tokenize`: `{model, texts: string[]}` → `{object: "tokenize", model, counts}` (Gearbox's, for history budgets). */
function parseTokenize(json: unknown): { model: string; texts: string[] } {
  if (!isObject(json)) throw invalidRequest("The body must be a JSON object.");
  const { model, texts } = json;
  if (typeof model !== "string" || model === "") throw invalidRequest("'model' is required.", "model");
  if (!Array.isArray(texts) || texts.length === 0 || texts.length > TOKENIZE_MAX_TEXTS || !texts.every((t) => typeof t === "string"))
    throw invalidRequest(`'texts' must be 1 to ${TOKENIZE_MAX_TEXTS} strings.`, "texts");
  return { model, texts };
}

function readJson(req: http.IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        req.removeAllListeners("data");
        reject(new GatewayError(413, "invalid_request_error", `The request body exceeds ${MAX_BODY} bytes.`, { code: "request_too_large" }));
        return;
      }
      chunks.push(c);
    });
    req.on("end", () => {
      // The gateway's rule (empty, UTF-8, JSON, depth), so both answer a bad body alike.
      const decoded = decodeJsonBody(Buffer.concat(chunks, size));
      if (decoded.ok) resolve(decoded.value);
      else reject(decoded.errors[0] ?? invalidRequest("Invalid request body."));
    });
    req.on("error", reject);
  });
}

function firstError(errors: { param: string; message: string }[]): GatewayError {
  const e = errors[0] ?? { param: "", message: "Invalid request." };
  return invalidRequest(e.message, e.param || undefined, "invalid_request");
}

/** A model spec from the admin API body, validated field by field. */
function parseSpec(json: unknown): ModelSpec {
  if (!isObject(json)) throw invalidRequest("The body must be a JSON object.");
  const { id, engine, source } = json;
  if (typeof id !== "string" || id === "") throw invalidRequest("'id' is required.", "id");
  if (typeof engine !== "string" || !(ENGINES as readonly string[]).includes(engine))
    throw invalidRequest(`'engine' must be one of ${ENGINES.join(", ")}.`, "engine");
  if (typeof source !== "string" || source === "") throw invalidRequest("'source' is required (GGUF path or hf: URI, Ollama model name, ONNX file).", "source");
  const spec: ModelSpec = { id, engine: engine as EngineKind, source };
  for (const key of ["contextLength", "threads"] as const) {
    const v = json[key];
    if (v === undefined) continue;
    if (typeof v !== "number" || !Number.isInteger(v) || v < 1) throw invalidRequest(`'${key}' must be a positive integer.`, key);
    spec[key] = v;
  }
  for (const key of ["tokenizer", "host"] as const) {
    const v = json[key];
    if (v === undefined) continue;
    if (typeof v !== "string") throw invalidRequest(`'${key}' must be a string.`, key);
    spec[key] = v;
  }
  return spec;
}

export async function startEdgeAgent(options: EdgeAgentOptions, port: number, host = "0.0.0.0"): Promise<EdgeAgentServer> {
  const { registry, logger } = options;
  const metrics = new AgentMetrics();
  for (const info of registry.list()) metrics.loaded.set({ model: info.id, engine: info.engine }, 1);

  async function route(req: http.IncomingMessage, res: http.ServerResponse, signal: AbortSignal): Promise<ServedRequest> {
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    const method = req.method ?? "GET";
    if (method === "GET" && path === "/healthz") {
      sendJson(res, 200, { status: "ok" });
      return { endpoint: "healthz", model: "", status: 200 };
    }
    if (method === "GET" && path === "/readyz") {
      const ready = registry.size > 0;
      sendJson(res, ready ? 200 : 503, { status: ready ? "ready" : "no model loaded", models: registry.list().map((m) => m.id) });
      return { endpoint: "readyz", model: "", status: ready ? 200 : 503 };
    }
    if (method === "GET" && path === "/metrics") {
      const text = await metrics.registry.metrics();
      res.writeHead(200, { "content-type": metrics.registry.contentType });
      res.end(text);
      return { endpoint: "metrics", model: "", status: 200 };
    }
    if (method === "GET" && path === "/v1/models") {
      const data = registry
        .entries()
        .map((e) => ({ id: e.spec.id, object: "model", created: Math.floor(e.loadedAt.getTime() / 1000), owned_by: "gearbox-edge", gearbox: e.model.info() }));
      sendJson(res, 200, { object: "list", data });
      return { endpoint: "models", model: "", status: 200 };
    }
    if (path.startsWith("/admin/")) return admin(req, res, path, method);
    if (method === "POST" && path === "/v1/chat/completions") {
      const parsed = parseOpenAIChatRequest(await readJson(req));
      if (!parsed.ok) throw firstError(parsed.errors);
      const entry = registry.get(parsed.value.model);
      if (!entry.model.info().capabilities.chat)
        throw invalidRequest(`Model '${entry.spec.id}' does not chat (it is an embedding model).`, "model", "unsupported_model");
      const outcome = await handleChat(entry, parsed.value, res, signal, metrics, performance.now());
      return {
        endpoint: "chat",
        model: entry.spec.id,
        status: outcome.status,
        outputTokens: outcome.completionTokens,
        ...(outcome.promptTokens !== undefined && { inputTokens: outcome.promptTokens }),
        ...(outcome.confidence !== undefined && { confidence: outcome.confidence }),
        ...(outcome.finishReason !== undefined && { finishReason: outcome.finishReason }),
      };
    }
    if (method === "POST" && path === "/v1/embeddings") {
      const parsed = parseOpenAIEmbeddingsRequest(await readJson(req));
      if (!parsed.ok) throw firstError(parsed.errors);
      const request = parsed.value;
      const entry = registry.get(request.model);
      if (!entry.model.info().capabilities.embeddings) throw invalidRequest(`Model '${entry.spec.id}' does not embed.`, "model", "unsupported_model");
      if (!request.input.every((i): i is string => typeof i === "string"))
        throw invalidRequest("Edge embeddings take text input, not token arrays.", "input", "unsupported_parameter");
      const release = await entry.capacity.acquire(signal);
      let inputTokens: number;
      try {
        const { vectors, promptTokens } = await entry.model.embed(request.input, signal);
        inputTokens = promptTokens;
        const data = vectors.map((v, index) => ({ index, embedding: request.encodingFormat === "base64" ? float32Base64(v) : v }));
        sendJson(
          res,
          200,
          toOpenAIEmbeddingsResponse({ model: entry.spec.id, data, usage: { inputTokens: promptTokens, outputTokens: 0, totalTokens: promptTokens } }),
        );
      } finally {
        release();
      }
      return { endpoint: "embeddings", model: entry.spec.id, status: 200, inputTokens };
    }
    if (method === "POST" && path === "/v1/tokenize") {
      const { model, texts } = parseTokenize(await readJson(req));
      const entry = registry.get(model);
      if (!entry.model.countTexts) throw invalidRequest(`Model '${entry.spec.id}' has no tokenizer to count with.`, "model", "unsupported_model");
      sendJson(res, 200, { object: "tokenize", model: entry.spec.id, counts: await entry.model.countTexts(texts) });
      return { endpoint: "tokenize", model: entry.spec.id, status: 200 };
    }
    throw new GatewayError(404, "invalid_request_error", `Invalid URL (${method} ${path})`, { code: "unknown_url" });
  }

  async function admin(req: http.IncomingMessage, res: http.ServerResponse, path: string, method: string): Promise<ServedRequest> {
    if (options.adminToken !== undefined && req.headers.authorization !== `Bearer ${options.adminToken}`) {
      throw new GatewayError(401, "authentication_error", "The admin API needs the agent's admin token.", { code: "unauthorized" });
    }
    if (method === "POST" && path === "/admin/models") {
      const spec = parseSpec(await readJson(req));
      const entry = await registry.load(spec);
      metrics.loaded.set({ model: spec.id, engine: spec.engine }, 1);
      logger.info({ model: spec.id, engine: spec.engine, load_ms: Math.round(entry.loadMs) }, "model loaded");
      sendJson(res, 201, entry.model.info());
      return { endpoint: "admin", model: spec.id, status: 201 };
    }
    const match = /^\/admin\/models\/([^/]+)$/.exec(path);
    if (method === "DELETE" && match?.[1]) {
      const id = decodeURIComponent(match[1]);
      const engine = registry.entries().find((e) => e.spec.id === id)?.spec.engine;
      if (!(await registry.unload(id))) throw new GatewayError(404, "not_found_error", `The model '${id}' is not loaded.`, { code: "model_not_found" });
      if (engine) metrics.loaded.remove({ model: id, engine });
      logger.info({ model: id }, "model unloaded");
      sendJson(res, 200, { id, unloaded: true });
      return { endpoint: "admin", model: id, status: 200 };
    }
    throw new GatewayError(404, "invalid_request_error", `Invalid URL (${method} ${path})`, { code: "unknown_url" });
  }

  const server = http.createServer((req, res) => {
    const started = performance.now();
    const span = startAgentSpan(options.tracer, req);
    const abort = new AbortController();
    res.on("close", () => {
      if (!res.writableFinished) abort.abort();
    });
    route(req, res, abort.signal).then(
      (served) => {
        const { endpoint, model, status } = served;
        endAgentSpan(span, served);
        metrics.requests.inc({ endpoint, model, status: String(status) });
        metrics.duration.observe({ endpoint, model }, (performance.now() - started) / 1000);
      },
      (err: unknown) => {
        const error =
          err instanceof EngineError
            ? new GatewayError(err.code === "unavailable" ? 503 : 500, "server_error", err.message, { code: `engine_${err.code}`, cause: err })
            : err;
        if (error instanceof GatewayError && error.code === "edge_saturated") metrics.rejected.inc({ model: "", reason: "saturated" });
        if (!(error instanceof GatewayError)) logger.error({ err }, "edge agent request failed");
        const { status, headers, body } = toErrorResponse(error);
        endAgentSpan(span, undefined, {
          status,
          message: error instanceof Error ? error.message : String(error),
          ...(error instanceof GatewayError && { code: error.code }),
        });
        metrics.requests.inc({ endpoint: "error", model: "", status: String(status) });
        if (res.headersSent) {
          res.end();
          return;
        }
        res.writeHead(status, headers);
        res.end(body);
      },
    );
  });
  answerMalformedHttp(server);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    metrics,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}
