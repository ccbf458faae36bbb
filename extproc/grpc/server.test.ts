import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import * as grpc from "@grpc/grpc-js";
import { HealthClient } from "../../test/support/health-client.ts";
import type { ProcessingRequest } from "../../proto/generated/envoy/service/ext_proc/v3/ProcessingRequest.ts";
import type { ProcessingResponse__Output } from "../../proto/generated/envoy/service/ext_proc/v3/ProcessingResponse.ts";
import { extProcPackage } from "../../common/envoy/protos.ts";
import { GatewayMetrics } from "../telemetry/metrics.ts";
import { startTestGateway, testConfig, type TestGateway } from "../../test/support/gateway.ts";
import { SLOW_PHASE_NOTICE_MS, SLOW_PHASE_TIMEOUT_S } from "./server.ts";

let gateway: TestGateway;
before(async () => {
  gateway = await startTestGateway(testConfig("providers:\n  - { name: openai, kind: openai, base_url: 'https://api.openai.com/v1' }\n"));
});
after(async () => {
  await gateway.close();
});

const header = (key: string, value: string) => ({ key, raw_value: Buffer.from(value) });

/** Sends `messages` on one Process stream; resolves with every response once the server ends it. */
function converse(messages: ProcessingRequest[], address = gateway.extProcAddress): Promise<ProcessingResponse__Output[]> {
  const Client = extProcPackage().envoy.service.ext_proc.v3.ExternalProcessor;
  const client = new Client(address, grpc.credentials.createInsecure());
  return new Promise((resolve, reject) => {
    const responses: ProcessingResponse__Output[] = [];
    const call = client.Process();
    call.on("data", (r: ProcessingResponse__Output) => responses.push(r));
    call.on("error", reject);
    call.on("end", () => {
      client.close();
      resolve(responses);
    });
    for (const m of messages) call.write(m);
    call.end();
  });
}

const chatHeaders: ProcessingRequest = {
  request_headers: {
    headers: { headers: [header(":method", "POST"), header(":path", "/v1/chat/completions"), header("content-type", "application/json")] },
  },
};
const chatBody: ProcessingRequest = {
  request_body: { body: Buffer.from(JSON.stringify({ model: "gpt-4o", messages: [{ role: "user", content: "hi" }] })), end_of_stream: true },
};

test("one response per message, in order, each of the matching kind", async () => {
  const responses = await converse([chatHeaders, chatBody]);
  assert.deepEqual(
    responses.map((r) => r.response),
    ["request_headers", "request_body"],
  );
  const mutation = responses[1]?.request_body?.response?.header_mutation;
  const upstream = mutation?.set_headers?.find((h) => h.header?.key === "x-gearbox-upstream");
  assert.equal(upstream?.header?.raw_value?.toString(), "openai");
  assert.equal(responses[1]?.request_body?.response?.clear_route_cache, true);
});

test("bad body → immediate_response with an OpenAI-shaped 400", async () => {
  const responses = await converse([chatHeaders, { request_body: { body: Buffer.from("{"), end_of_stream: true } }]);
  const immediate = responses[1]?.immediate_response;
  assert.equal(immediate?.status?.code, "BadRequest");
  assert.equal((JSON.parse(immediate?.body?.toString() ?? "{}") as { error: { code: string } }).error.code, "invalid_json");
  const contentLength = immediate?.headers?.set_headers?.find((h) => h.header?.key === "content-length");
  assert.equal(contentLength?.header?.raw_value?.toString(), String(immediate?.body?.length));
});

test("observability mode: the server answers nothing (Envoy would ignore it)", async () => {
  const responses = await converse([
    { ...chatHeaders, observability_mode: true },
    { ...chatBody, observability_mode: true },
  ]);
  assert.deepEqual(responses, []);
});

test("an event-stream response gets mode_override STREAMED on the response-headers answer only", async () => {
  const responses = await converse([
    chatHeaders,
    chatBody,
    { response_headers: { headers: { headers: [header(":status", "200"), header("content-type", "text/event-stream")] } } },
  ]);
  assert.equal(responses[0]?.mode_override, undefined);
  assert.equal(responses[1]?.mode_override, undefined);
  assert.equal(responses[2]?.mode_override?.response_body_mode, "STREAMED");
  assert.equal(responses[2]?.mode_override?.request_body_mode, "BUFFERED");
});

test("grpc.health.v1 reports SERVING, then NOT_SERVING while draining", async () => {
  const health = new HealthClient(gateway.extProcAddress);
  try {
    assert.equal(await health.check("envoy.service.ext_proc.v3.ExternalProcessor"), "SERVING");
    assert.equal(await health.check(""), "SERVING");
  } finally {
    health.close();
  }
  const own = await startTestGateway(testConfig(""));
  const watcher = new HealthClient(own.extProcAddress);
  assert.equal(await watcher.check(""), "SERVING");
  const statuses = watcher.watch("");
  await new Promise((r) => setTimeout(r, 50));
  await own.close();
  watcher.close();
  assert.ok((await statuses).includes("NOT_SERVING"));
});

test("forged routing headers are removed in the request-headers answer, before the body is seen", async () => {
  // Envoy routes on the headers as they stand if the body answer never comes (failure_mode_allow
  // after a timeout or stream error): the caller's x-gearbox-upstream must be gone by then.
  const forged: ProcessingRequest = {
    request_headers: {
      headers: {
        headers: [
          header(":method", "POST"),
          header(":path", "/v1/chat/completions"),
          header("content-type", "application/json"),
          header("x-gearbox-upstream", "edge"),
          header("x-gearbox-edge-endpoint", "169.254.169.254:80"),
        ],
      },
    },
  };
  const responses = await converse([forged]);
  const answer = responses[0]?.request_headers?.response;
  assert.deepEqual([...(answer?.header_mutation?.remove_headers ?? [])].sort(), ["x-gearbox-edge-endpoint", "x-gearbox-upstream"]);
  assert.equal(answer?.clear_route_cache, true);
  const clean = await converse([chatHeaders]);
  assert.equal(clean[0]?.request_headers?.response?.header_mutation ?? undefined, undefined);
});

test("a stream nobody speaks on is released after extproc.stream_idle_ms, counted, and the request recorded as 504", async () => {
  const idle = await startTestGateway(
    testConfig("extproc:\n  stream_idle_ms: 150\nproviders:\n  - { name: openai, kind: openai, base_url: 'https://api.openai.com/v1' }\n"),
  );
  const Client = extProcPackage().envoy.service.ext_proc.v3.ExternalProcessor;
  const client = new Client(idle.extProcAddress, grpc.credentials.createInsecure());
  try {
    const call = client.Process();
    const answers: ProcessingResponse__Output[] = [];
    call.on("data", (r: ProcessingResponse__Output) => answers.push(r));
    const ended = new Promise<grpc.ServiceError>((resolve) => call.on("error", resolve));
    // Headers, then silence: no body, no half-close (a request Envoy forgot).
    call.write(chatHeaders);
    const err = await ended;
    assert.equal(err.code, grpc.status.DEADLINE_EXCEEDED);
    assert.deepEqual(
      answers.map((a) => a.response),
      ["request_headers"],
    );
    assert.equal(idle.extProc.stats.idleReleased, 1);
    const scraped = await new GatewayMetrics({ extProcStreams: idle.extProc.stats }, { defaultMetrics: false }).registry.metrics();
    assert.match(scraped, /^gearbox_extproc_streams_idle_released_total 1$/m);
    const records = idle.logs.filter((l) => l.msg === "request");
    assert.equal(records.length, 1);
    assert.equal(records[0]?.status, 504);
    assert.equal(records[0]?.error_code, "extproc_stream_idle");
    assert.ok(idle.logs.some((l) => l.msg === "ext_proc stream idle: released"));
  } finally {
    client.close();
    await idle.close();
  }
});

test("a stream that keeps talking is not released, however long it lives", async () => {
  const idle = await startTestGateway(
    testConfig("extproc:\n  stream_idle_ms: 400\nproviders:\n  - { name: openai, kind: openai, base_url: 'https://api.openai.com/v1' }\n"),
  );
  const Client = extProcPackage().envoy.service.ext_proc.v3.ExternalProcessor;
  const client = new Client(idle.extProcAddress, grpc.credentials.createInsecure());
  try {
    const call = client.Process();
    const answers: ProcessingResponse__Output[] = [];
    call.on("data", (r: ProcessingResponse__Output) => answers.push(r));
    const ended = new Promise<void>((resolve, reject) => {
      call.on("error", reject);
      call.on("end", resolve);
    });
    call.write(chatHeaders);
    call.write(chatBody);
    call.write({ response_headers: { headers: { headers: [header(":status", "200"), header("content-type", "text/event-stream")] } } });
    // Stream chunks 100 ms apart, 1 s in all: each one restarts the 400 ms idle timer.
    for (let i = 0; i < 10; i++) {
      await new Promise((r) => setTimeout(r, 100));
      call.write({
        response_body: {
          body: Buffer.from(
            'data: {"id":"c","object":"chat.completion.chunk","created":0,"model":"gpt-4o","choices":[{"index":0,"delta":{"content":"x"},"finish_reason":null}]}\n\n',
          ),
        },
      });
    }
    call.write({ response_body: { body: Buffer.from("data: [DONE]\n\n"), end_of_stream: true } });
    call.end();
    await ended;
    assert.equal(answers.length, 14);
    assert.equal(idle.extProc.stats.idleReleased, 0);
    assert.equal(idle.logs.filter((l) => l.msg === "request")[0]?.status, 200);
  } finally {
    client.close();
    await idle.close();
  }
});

test("a pending phase asks Envoy for more time only once it has taken SLOW_PHASE_NOTICE_MS, not on every request", async () => {
  const config = testConfig("providers:\n  - { name: openai, kind: openai, base_url: 'https://api.openai.com/v1' }\ncache:\n  exact: { enable: true }\n");
  let delayMs = 0;
  // A response cache whose lookup settles after `delayMs`: the request-body phase is pending either way.
  const cache = {
    get: () => new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), delayMs)),
    put: () => Promise.resolve(),
  };
  const slowGateway = await startTestGateway(config, { cache });
  try {
    // temperature 0: a cacheable request, so the phase waits on the cache lookup.
    const cacheable: ProcessingRequest = {
      request_body: {
        body: Buffer.from(JSON.stringify({ model: "gpt-4o", temperature: 0, messages: [{ role: "user", content: "hi" }] })),
        end_of_stream: true,
      },
    };
    const talk = () => converse([chatHeaders, cacheable], slowGateway.extProcAddress);
    const fast = await talk();
    assert.deepEqual(
      fast.map((r) => r.response ?? (r.override_message_timeout ? "override" : "?")),
      ["request_headers", "request_body"],
      "settled within the notice: no extra message",
    );
    delayMs = SLOW_PHASE_NOTICE_MS * 3;
    const slow = await talk();
    assert.deepEqual(
      slow.map((r) => r.response ?? (r.override_message_timeout ? "override" : "?")),
      ["request_headers", "override", "request_body"],
    );
    assert.equal(slow[1]?.override_message_timeout?.seconds, String(SLOW_PHASE_TIMEOUT_S));
  } finally {
    await slowGateway.close();
  }
});
