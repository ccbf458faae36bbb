/**
 * Bad input through both transports (the front door, and Envoy — the harness with
 * `envoy/local-dev.yaml`'s ext_proc settings — in front of the ext_proc service): each gets a
 * clear error in the caller's schema with the right status, is logged and counted, and the
 * gateway keeps serving.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { startOpenAIUpstream, type OpenAIUpstream } from "../emulators/openai-upstream.ts";
import { pino } from "pino";
import type { EdgeDirectory } from "../../extproc/edge/agents.ts";
import { entryTo, openAIProviderYaml, startGatewayPair, startTestGateway, testConfig, type TestGateway } from "../support/gateway.ts";
import { PROVIDER_KEY } from "./openai-conformance.ts";
import { MAX_JSON_DEPTH } from "../../common/schemas/json-depth.ts";
import { Runtime } from "../../extproc/runtime/runtime.ts";

/** `{"p":{"p":…{}}}`, `levels` objects deep. */
const nested = (levels: number) => `${'{"p":'.repeat(levels - 1)}{}${"}".repeat(levels - 1)}`;

const DEEP = 100_000;
const cases = [
  {
    name: "chat tools[0].function.parameters",
    path: "/v1/chat/completions",
    body: `{"model":"gpt-4.1-nano","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f","parameters":${nested(DEEP)}}}]}`,
    param: "tools[0].function.parameters",
  },
  {
    name: "messages tools[0].input_schema",
    path: "/v1/messages",
    body: `{"model":"gpt-4.1-nano","max_tokens":5,"messages":[{"role":"user","content":"x"}],"tools":[{"name":"f","input_schema":${nested(DEEP)}}]}`,
    param: "tools[0].input_schema.p",
  },
  {
    name: "embeddings input",
    path: "/v1/embeddings",
    body: `{"model":"text-embedding-3-small","input":${"[".repeat(DEEP)}${"]".repeat(DEEP)}}`,
    param: "input[0][0][0]",
  },
];

for (const transport of ["front door", "Envoy + ext_proc"] as const) {
  describe(`bad input through the ${transport}`, () => {
    let upstream: OpenAIUpstream;
    let gateway: TestGateway;
    let closeEntry: () => Promise<void> = () => Promise.resolve();
    let base: string;
    before(async () => {
      upstream = await startOpenAIUpstream({ apiKey: PROVIDER_KEY });
      gateway = await startTestGateway(testConfig(openAIProviderYaml(upstream.baseURL), { TEST_PROVIDER_KEY: PROVIDER_KEY }));
      const entry = await entryTo(transport, gateway, upstream.baseURL, { bufferLimitBytes: 8 * 1024 * 1024 });
      base = entry.base;
      closeEntry = entry.close;
    });
    after(async () => {
      await closeEntry();
      await gateway.close();
      await upstream.close();
    });

    for (const c of cases) {
      test(`JSON nested ${DEEP} deep in ${c.name} → 400 naming the field, logged, nothing upstream`, async () => {
        const requestsBefore = gateway.logs.filter((l) => l.msg === "request").length;
        const res = await fetch(`${base}${c.path}`, { method: "POST", headers: { "content-type": "application/json" }, body: c.body });
        const error = ((await res.json()) as { error: { message: string; param: string; code: string } }).error;
        assert.equal(res.status, 400);
        assert.equal(error.code, "json_too_deep");
        assert.equal(error.param, c.param);
        assert.equal(error.message, `${c.param}: nested too deeply (max ${MAX_JSON_DEPTH} levels of objects and arrays).`);
        const records = gateway.logs.filter((l) => l.msg === "request").slice(requestsBefore);
        assert.equal(records.length, 1);
        assert.equal(records[0]?.status, 400);
        assert.equal(records[0]?.error_code, "json_too_deep");
        // Still serving.
        const fine = await fetch(`${base}/v1/chat/completions`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ model: "gpt-4.1-nano", messages: [{ role: "user", content: "x" }] }),
        });
        assert.equal(fine.status, 200);
      });
    }
  });
}

test("a fault inside a phase is a 500 internal_error through both transports, and still a request record", async () => {
  const upstream = await startOpenAIUpstream({ apiKey: PROVIDER_KEY });
  const logs: Record<string, unknown>[] = [];
  const logger = pino({ level: "info" }, { write: (line: string) => void logs.push(JSON.parse(line) as Record<string, unknown>) });
  // A bug stands in: the edge directory throws when routing asks it anything.
  const broken: EdgeDirectory = {
    serves: () => {
      throw new Error("bug in the edge directory");
    },
    pick: () => {
      throw new Error("bug in the edge directory");
    },
  };
  const config = testConfig(`${openAIProviderYaml(upstream.baseURL)}route:\n  rules:\n    - when: { estimated_complexity: low }\n      target: edge\n`, {
    TEST_PROVIDER_KEY: PROVIDER_KEY,
  });
  const pair = await startGatewayPair({ runtime: new Runtime(config, { edgeAgents: broken }), logger }, new URL(upstream.baseURL).origin);
  try {
    for (const base of [`http://127.0.0.1:${pair.frontDoor.port}`, pair.envoy.url]) {
      const before = logs.filter((l) => l.msg === "request").length;
      const res = await fetch(`${base}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "gpt-4.1-nano", messages: [{ role: "user", content: "hi" }] }),
      });
      assert.equal(res.status, 500, base);
      const error = ((await res.json()) as { error: { code: string; message: string } }).error;
      assert.equal(error.code, "internal_error");
      assert.doesNotMatch(error.message, /edge directory/, "the fault's own message stays in the log");
      const records = logs.filter((l) => l.msg === "request").slice(before);
      assert.equal(records.length, 1, base);
      assert.equal(records[0]?.status, 500);
      assert.equal(records[0]?.error_code, "internal_error");
    }
  } finally {
    await pair.close();
    await upstream.close();
  }
});
