/**
 * The selection table: every client schema × every provider kind reaches the translator named
 * for the pair, seen from outside — the upstream path and body schema say which backend, the
 * shape of an error the backend sends says which client — and an unknown client schema or
 * provider kind throws instead of falling into another API's branch.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { GatewayError } from "../../common/errors.ts";
import { parseOpenAIChatRequest } from "../../common/schemas/openai-chat-request.ts";
import { parseOpenAIEmbeddingsRequest } from "../../common/schemas/openai-embeddings.ts";
import { PROVIDER_KINDS, type ProviderKind } from "../providers/catalog.ts";
import { plainProvider, type Provider } from "../providers/provider.ts";
import { backendProtocol, planChat, planEmbeddings, type ClientSchema } from "./select.ts";

const CTX = { upstreamModel: "up-m", forceStreamUsage: false };
const RAW = { model: "m", messages: [{ role: "user", content: "hi" }], max_tokens: 10 };

function provider(kind: ProviderKind): Provider {
  return plainProvider({
    name: `p-${kind}`,
    kind,
    baseUrl: new URL("http://127.0.0.1:1/v1"),
    timeoutMs: 1000,
    ...(kind === "azure-openai" && { apiVersion: "2024-10-21" }),
  });
}

function chatRequest() {
  const parsed = parseOpenAIChatRequest(RAW);
  assert.ok(parsed.ok);
  return parsed.value;
}

function embeddingsRequest() {
  const parsed = parseOpenAIEmbeddingsRequest({ model: "m", input: ["hi"] });
  assert.ok(parsed.ok);
  return parsed.value;
}

/** Upstream path per provider kind: the backend the table picked. */
const PATH: Record<ProviderKind, string> = {
  openai: "/chat/completions",
  "openai-compatible": "/chat/completions",
  "azure-openai": "/deployments/up-m/chat/completions?api-version=2024-10-21",
  anthropic: "/messages",
  gemini: "/models/up-m:generateContent",
  ollama: "/api/chat",
};

/** A plain-text upstream error as each client schema shapes it: the client the table picked. */
const ERROR_BODY: Record<ClientSchema, unknown> = {
  openai: { error: { message: "boom", type: "invalid_request_error", param: null, code: null } },
  anthropic: { type: "error", error: { type: "invalid_request_error", message: "boom" } },
  gemini: { error: { code: 400, message: "boom", status: "INVALID_ARGUMENT" } },
};

/** The pairs that forward the client's bytes (same schema both sides); Gemini → Gemini is rebuilt from canonical. */
const BYTE_PRESERVING = (client: ClientSchema, kind: ProviderKind): boolean => client !== "gemini" && client === backendProtocol(kind);

for (const client of ["openai", "anthropic", "gemini"] as const) {
  for (const kind of PROVIDER_KINDS) {
    void test(`chat: ${client} client × ${kind} provider`, () => {
      const plan = planChat(client, provider(kind), chatRequest(), { ...RAW }, CTX);
      assert.equal(plan.upstream.path, PATH[kind]);
      const body = JSON.parse(plan.upstream.body?.toString("utf8") ?? "null") as Record<string, unknown>;
      assert.equal("contents" in body, backendProtocol(kind) === "gemini", "Gemini's body has contents, the others messages");
      // A same-schema pair is byte-preserving: it leaves an error it did not shape to the processor,
      // which writes the client's shape; a translating pair shapes it as its client expects.
      const shown = plan.response(400, {}, Buffer.from("boom"));
      assert.equal(shown.error?.error.message, "boom");
      if (BYTE_PRESERVING(client, kind)) assert.equal(shown.body, undefined);
      else assert.deepEqual(JSON.parse(shown.body?.toString("utf8") ?? "null"), ERROR_BODY[client]);
    });
  }
}

void test("embeddings: each provider kind's embeddings path, and a 400 for Anthropic, which has none", () => {
  const req = embeddingsRequest();
  const paths = Object.fromEntries(PROVIDER_KINDS.filter((k) => k !== "anthropic").map((k) => [k, planEmbeddings(provider(k), req, CTX).upstream.path]));
  assert.deepEqual(paths, {
    openai: "/embeddings",
    "openai-compatible": "/embeddings",
    "azure-openai": "/deployments/up-m/embeddings?api-version=2024-10-21",
    gemini: "/models/up-m:embedContent",
    ollama: "/api/embed",
  });
  assert.throws(
    () => planEmbeddings(provider("anthropic"), req, CTX),
    (err: unknown) => err instanceof GatewayError && err.status === 400 && err.code === "embeddings_unsupported",
  );
});

void test("an unknown client schema or provider kind throws rather than taking another API's branch", () => {
  assert.throws(() => planChat("bedrock" as ClientSchema, provider("openai"), chatRequest(), { ...RAW }, CTX), /Unhandled client schema: "bedrock"/);
  assert.throws(() => planChat("openai", provider("bedrock" as ProviderKind), chatRequest(), { ...RAW }, CTX), /Unhandled provider kind: "bedrock"/);
  assert.throws(() => planEmbeddings(provider("bedrock" as ProviderKind), embeddingsRequest(), CTX), /Unhandled provider kind: "bedrock"/);
});

void test("OpenAI → OpenAI-compatible: the model renamed and the provider's rules applied in the client's own JSON, every other field kept", () => {
  const raw = {
    model: "m",
    messages: [
      { role: "user", content: "hi" },
      { role: "assistant", content: "Sure:", prefix: true },
    ],
    seed: 7,
    logit_bias: { "42": 1 },
    verbosity: "low",
  };
  const parsed = parseOpenAIChatRequest(raw);
  assert.ok(parsed.ok);
  const mistral = plainProvider({
    name: "mistral",
    kind: "openai-compatible",
    baseUrl: new URL("http://127.0.0.1:1/v1"),
    timeoutMs: 1000,
    params: { drop: ["logit_bias"], rename: { seed: "random_seed" } },
  });
  const plan = planChat("openai", mistral, parsed.value, raw, CTX);
  assert.deepEqual(JSON.parse(plan.upstream.body?.toString("utf8") ?? "null"), {
    model: "up-m",
    messages: raw.messages,
    verbosity: "low",
    random_seed: 7,
  });
  assert.equal(raw.model, "m", "the client's JSON itself is left as it was");
  assert.ok("logit_bias" in raw);
});
