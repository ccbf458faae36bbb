/**
 * Errors Gearbox answers itself — a bad body, one over the size limit, a provider it cannot
 * reach — in the schema of the API the client called, through both transports: Anthropic's
 * `{"type":"error","error":{"type","message"}}` on `/v1/messages` (read by the real Anthropic
 * SDK), Google's `{"error":{"code","message","status"}}` on Gemini's paths, OpenAI's elsewhere.
 * Gearbox's own `code` and `param` ride along inside Anthropic's `error`, where OpenAI callers
 * read them too.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { startOpenAIUpstream, type OpenAIUpstream } from "../emulators/openai-upstream.ts";
import { entryTo, startTestGateway, testConfig, type TestGateway } from "../support/gateway.ts";
import { PROVIDER_KEY } from "./openai-conformance.ts";

/** A port nothing listens on (below the ephemeral range: no test's server takes it). */
const DEAD = "http://127.0.0.1:1";
const LIMIT = 64 * 1024;

const yaml = (upstream: string) => `
providers:
  - { name: openai, kind: openai, base_url: '${upstream}', api_key_env: TEST_PROVIDER_KEY, models: [gpt-4.1-nano] }
  - { name: dead, kind: openai, base_url: '${DEAD}/v1', api_key_env: TEST_PROVIDER_KEY, models: [dead-model] }
limits: { max_request_bytes: ${LIMIT} }
`;

interface AnthropicError {
  type: string;
  error: { type: string; message: string; code?: string; param?: string };
}

for (const transport of ["front door", "Envoy + ext_proc"] as const) {
  describe(`errors in the caller's schema through the ${transport}`, () => {
    let upstream: OpenAIUpstream;
    let gateway: TestGateway;
    let closeEntry: () => Promise<void> = () => Promise.resolve();
    let base: string;
    let anthropic: Anthropic;
    before(async () => {
      upstream = await startOpenAIUpstream({ apiKey: PROVIDER_KEY });
      gateway = await startTestGateway(testConfig(yaml(upstream.baseURL), { TEST_PROVIDER_KEY: PROVIDER_KEY }));
      const origin = new URL(upstream.baseURL).origin;
      const entry = await entryTo(transport, gateway, upstream.baseURL, {
        routes: [
          { header: "x-gearbox-upstream", value: "openai", cluster: "openai" },
          { header: "x-gearbox-upstream", value: "dead", cluster: "dead" },
        ],
        clusters: { openai: { url: origin }, dead: { url: DEAD } },
      });
      base = entry.base;
      closeEntry = entry.close;
      anthropic = new Anthropic({ baseURL: base, apiKey: "sk-ant-client", maxRetries: 0 });
    });
    after(async () => {
      await closeEntry();
      await gateway.close();
      await upstream.close();
    });

    const post = async (path: string, body: string) => {
      const res = await fetch(`${base}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body });
      return { status: res.status, json: (await res.json()) as Record<string, unknown> };
    };

    test("/v1/messages, a field of the wrong type: the Anthropic SDK's BadRequestError, Anthropic's body naming the field", async () => {
      const err = await anthropic.messages
        .create({ model: "gpt-4.1-nano", max_tokens: "many" as unknown as number, messages: [{ role: "user", content: "hi" }] })
        .then(
          () => assert.fail("answered"),
          (e: unknown) => e,
        );
      assert.ok(err instanceof Anthropic.BadRequestError, String(err));
      assert.equal(err.status, 400);
      assert.deepEqual(err.error, {
        type: "error",
        error: { type: "invalid_request_error", message: "'max_tokens' must be a number, got a string.", code: "invalid_request", param: "max_tokens" },
      });
      assert.equal(upstream.requests.length, 0, "nothing went upstream");
    });

    test("/v1/messages, a body that is not JSON or a required field missing: Anthropic's body", async () => {
      for (const [body, code] of [
        ["{not json", "invalid_json"],
        [JSON.stringify({ model: "gpt-4.1-nano", messages: [{ role: "user", content: "hi" }] }), "invalid_request"],
      ] as const) {
        const { status, json } = await post("/v1/messages", body);
        assert.equal(status, 400);
        const error = json as unknown as AnthropicError;
        assert.equal(error.type, "error");
        assert.equal(error.error.type, "invalid_request_error");
        assert.equal(error.error.code, code);
        assert.ok(error.error.message.length > 0);
        assert.equal("param" in json, false, "nothing of OpenAI's shape at the top");
      }
    });

    test("/v1/messages to a provider that cannot be reached: a 5xx in Anthropic's schema, the SDK's APIError", async () => {
      const err = await anthropic.messages.create({ model: "dead-model", max_tokens: 8, messages: [{ role: "user", content: "hi" }] }).then(
        () => assert.fail("answered"),
        (e: unknown) => e,
      );
      assert.ok(err instanceof Anthropic.APIError, String(err));
      assert.ok(err.status !== undefined && err.status >= 500, `status ${String(err.status)}`);
      const body = err.error as AnthropicError;
      assert.equal(body.type, "error");
      assert.match(body.error.type, /^(api_error|overloaded_error)$/);
    });

    test("Gemini's generateContent, a bad body and an unreachable provider: Google's error body", async () => {
      const bad = await post("/v1beta/models/gpt-4.1-nano:generateContent", JSON.stringify({ contents: "hi" }));
      assert.equal(bad.status, 400);
      assert.deepEqual(Object.keys(bad.json), ["error"]);
      const badError = bad.json.error as { code: number; status: string; message: string };
      assert.equal(badError.code, 400);
      assert.equal(badError.status, "INVALID_ARGUMENT");
      const dead = await post("/v1beta/models/dead-model:generateContent", JSON.stringify({ contents: [{ role: "user", parts: [{ text: "hi" }] }] }));
      assert.ok(dead.status >= 500, `status ${dead.status}`);
      const deadError = dead.json.error as { code: number; status: string; message: string };
      assert.equal(deadError.code, dead.status);
      assert.equal(typeof deadError.status, "string");
      assert.equal("type" in deadError, false, "not OpenAI's shape");
    });

    test("/v1/chat/completions keeps OpenAI's schema for the same failures", async () => {
      const { status, json } = await post("/v1/chat/completions", JSON.stringify({ model: "dead-model", messages: [{ role: "user", content: "hi" }] }));
      assert.ok(status >= 500);
      const error = json.error as { type: string; code: string | null; param: string | null };
      assert.equal(typeof error.type, "string");
      assert.ok("param" in error && "code" in error);
    });

    if (transport === "front door") {
      test("the OpenAI SDK's models.list and models.retrieve: the configured models; a model no provider lists is the default provider's, as a call for it is routed; no id is model_not_found", async () => {
        const openai = new OpenAI({ baseURL: `${base}/v1`, apiKey: "app", maxRetries: 0 });
        const ids: string[] = [];
        for await (const m of openai.models.list()) ids.push(m.id);
        assert.deepEqual(ids.sort(), ["dead-model", "gpt-4.1-nano"]);
        assert.deepEqual(await openai.models.retrieve("dead-model"), { id: "dead-model", object: "model", created: 0, owned_by: "dead" });
        assert.deepEqual(await openai.models.retrieve("gpt-5-mini"), { id: "gpt-5-mini", object: "model", created: 0, owned_by: "openai" });
        const none = await fetch(`${base}/v1/models/`);
        assert.equal(none.status, 404);
        assert.equal(((await none.json()) as { error: { code: string } }).error.code, "model_not_found");
      });

      test("a path of Anthropic's or Google's API Gearbox does not serve: 404 in that API's schema, as its SDK reads it", async () => {
        const err = await anthropic.messages.countTokens({ model: "gpt-4.1-nano", messages: [{ role: "user", content: "hi" }] }).then(
          () => assert.fail("answered"),
          (e: unknown) => e,
        );
        assert.ok(err instanceof Anthropic.NotFoundError, String(err));
        assert.deepEqual(err.error, {
          type: "error",
          error: { type: "not_found_error", message: "Invalid URL (POST /v1/messages/count_tokens)", code: "unknown_url" },
        });
        const google = await post("/v1beta/models/gpt-4.1-nano:countTokens", "{}");
        assert.equal(google.status, 404);
        assert.deepEqual([(google.json.error as { code: number }).code, (google.json.error as { status: string }).status], [404, "NOT_FOUND"]);
        const other = await post("/v2/unknown", "{}");
        assert.equal(other.status, 404);
        assert.equal((other.json.error as { code: string }).code, "unknown_url", "OpenAI's schema elsewhere");
      });

      test("a chunked body over the size limit: 413 to the client and in its request record (not 499)", async () => {
        const before = gateway.logs.filter((l) => l.msg === "request").length;
        const chunk = new TextEncoder().encode("x".repeat(16 * 1024));
        let sent = 0;
        const body = new ReadableStream<Uint8Array>({
          pull(controller) {
            if (sent++ < 8) controller.enqueue(chunk);
            else controller.close();
          },
        });
        const res = await fetch(`${base}/v1/messages`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body,
          duplex: "half",
        });
        assert.equal(res.status, 413);
        assert.equal(((await res.json()) as AnthropicError).error.type, "request_too_large");
        const records = gateway.logs.filter((l) => l.msg === "request").slice(before);
        assert.deepEqual(
          records.map((r) => [r.status, r.error_code]),
          [[413, "request_too_large"]],
        );
      });

      test("/v1/messages over the size limit: 413 request_too_large in Anthropic's schema", async () => {
        const { status, json } = await post(
          "/v1/messages",
          JSON.stringify({ model: "gpt-4.1-nano", max_tokens: 8, messages: [{ role: "user", content: "x".repeat(LIMIT) }] }),
        );
        assert.equal(status, 413);
        const error = json as unknown as AnthropicError;
        assert.deepEqual([error.type, error.error.type, error.error.code], ["error", "request_too_large", "request_too_large"]);
        assert.match(error.error.message, new RegExp(`the limit (of|is) ${LIMIT} bytes`));
      });
    }
  });
}
