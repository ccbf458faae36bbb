/**
 * The edge agent's refusals of bad bodies follow the gateway's rule (`common/schemas/json-body.ts`):
 * the same bytes get the same status and error code from both, in the OpenAI shape, and are counted.
 * No model is needed: a body is refused before any model is looked up.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { ModelRegistry } from "./registry.ts";
import { startEdgeAgent, type EdgeAgentServer } from "./server.ts";
import { silentLogger } from "../common/telemetry/logger.ts";
import { openAIProviderYaml, startTestGateway, testConfig, type TestGateway } from "../test/support/gateway.ts";
import { MAX_JSON_DEPTH } from "../common/schemas/json-depth.ts";
import { rawExchange } from "../test/support/raw-http.ts";

const unused = () => {
  throw new Error("no engine in this test");
};
let registry: ModelRegistry;
let agent: EdgeAgentServer;
let gateway: TestGateway;
before(async () => {
  registry = new ModelRegistry({ llamacpp: unused, ollama: unused, onnx: unused }, { maxConcurrent: 1, maxQueue: 1, retryAfterSeconds: 1 });
  agent = await startEdgeAgent({ registry, logger: silentLogger() }, 0, "127.0.0.1");
  gateway = await startTestGateway(testConfig(openAIProviderYaml("http://127.0.0.1:9/v1")));
});
after(async () => {
  await agent.close();
  await registry.close();
  await gateway.close();
});

const bodies: [string, Buffer, string][] = [
  // "hé" with its second byte cut (0xC3 without a continuation byte), inside a JSON string.
  [
    "invalid UTF-8",
    Buffer.concat([Buffer.from('{"model":"tiny","messages":[{"role":"user","content":"h'), Buffer.from([0xc3]), Buffer.from('"}]}')]),
    "invalid_encoding",
  ],
  [
    "a lone continuation byte",
    Buffer.concat([Buffer.from('{"model":"tiny","messages":[{"role":"user","content":"'), Buffer.from([0x80, 0xff]), Buffer.from('"}]}')]),
    "invalid_encoding",
  ],
  ["not JSON", Buffer.from("{oops"), "invalid_json"],
  ["nested too deep", Buffer.from(`{"model":"tiny","messages":[],"x":${"[".repeat(MAX_JSON_DEPTH + 1)}${"]".repeat(MAX_JSON_DEPTH + 1)}}`), "json_too_deep"],
];

async function post(url: string, body: Buffer): Promise<{ status: number; code: string | undefined; type: string | undefined }> {
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body });
  const error = ((await res.json()) as { error?: { code?: string; type?: string } }).error;
  return { status: res.status, code: error?.code, type: error?.type };
}

for (const [name, body, code] of bodies) {
  test(`${name}: 400 ${code} from the edge agent, as from the gateway`, async () => {
    const fromAgent = await post(`http://127.0.0.1:${agent.port}/v1/chat/completions`, body);
    const fromGateway = await post(`${gateway.baseURL}/chat/completions`, body);
    assert.deepEqual(fromAgent, { status: 400, code, type: "invalid_request_error" });
    assert.deepEqual(fromGateway, fromAgent);
  });
}

test("the refusals are counted, and the agent keeps serving", async () => {
  const metrics = await (await fetch(`http://127.0.0.1:${agent.port}/metrics`)).text();
  assert.match(metrics, /gearbox_edge_requests_total\{endpoint="error",model="",status="400"\} [1-9]/);
  assert.equal((await fetch(`http://127.0.0.1:${agent.port}/healthz`)).status, 200);
});

/** The status and error code a server answers `bytes` with on a fresh connection. */
async function rawAnswer(port: number, bytes: string): Promise<[number, string | undefined]> {
  const [head = "", body = ""] = (await rawExchange(port, bytes)).split("\r\n\r\n");
  return [Number(head.split(" ")[1]), (JSON.parse(body) as { error?: { code?: string } }).error?.code];
}

test("a request Node's parser refuses: the same JSON error from the edge agent as from the gateway's front door", async () => {
  const gatewayPort = Number(new URL(gateway.baseURL).port);
  for (const [bytes, expected] of [
    ["GARBAGE\r\n\r\n", [400, "malformed_http"]],
    [`POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`, [431, "headers_too_large"]],
  ] as const) {
    const fromAgent = await rawAnswer(agent.port, bytes);
    assert.deepEqual(fromAgent, expected);
    assert.deepEqual(await rawAnswer(gatewayPort, bytes), fromAgent);
  }
});
