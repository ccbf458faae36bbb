/**
 * Body handling of the Envoy stand-in: body modes, body mutations and content-length, mode
 * overrides, header mutations in body responses, buffer limits, CONTINUE_AND_REPLACE.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { ProcessingRequest__Output } from "../../proto/generated/envoy/service/ext_proc/v3/ProcessingRequest.ts";
import { harness, on } from "./fixture.ts";
import { headerValues, matchingResponse, setHeader } from "./messages.ts";
import { send, sleep, type UpstreamHandler } from "./test-http.ts";

/** An upstream that answers 200 chunked, writing `parts` with `gapMs` between them. */
function slowChunks(parts: string[], gapMs: number): UpstreamHandler {
  return async (_request, res) => {
    res.writeHead(200, { "content-type": "text/plain" });
    for (const [i, part] of parts.entries()) {
      if (i > 0) await sleep(gapMs);
      res.write(part);
    }
    res.end();
  };
}

function bodyOf(message: ProcessingRequest__Output): Buffer {
  return message.request_body?.body ?? message.response_body?.body ?? Buffer.alloc(0);
}

const upper = (m: ProcessingRequest__Output): Buffer => Buffer.from(bodyOf(m).toString().toUpperCase());

void test("a BUFFERED body mutation with a matching content-length replaces the body", async (t) => {
  const replacement = "a much longer replacement body";
  const f = await harness({
    extProc: { processingMode: { request_body_mode: "BUFFERED" } },
    script: on("request_body", (m) => [
      matchingResponse(m, {
        header_mutation: { set_headers: [setHeader("content-length", String(replacement.length))] },
        body_mutation: { body: Buffer.from(replacement) },
      }),
    ]),
  });
  t.after(() => f.close());
  const res = await send(f.envoy.url, { body: [Buffer.from("original")], headers: { "content-length": "8" } });
  assert.equal(res.status, 200);
  const seen = f.upstreams.main?.requests[0];
  assert.equal(seen?.body.toString(), replacement);
  assert.equal(seen.headers["content-length"], String(replacement.length));
  assert.equal(res.body.toString(), replacement);
  assert.deepEqual(f.envoy.stats.contentLengthMismatches, []);
});

void test("a BUFFERED body mutation that disagrees with content-length is rejected with 500", async (t) => {
  const f = await harness({
    extProc: { processingMode: { request_body_mode: "BUFFERED" } },
    script: on("request_body", (m) => [matchingResponse(m, { body_mutation: { body: Buffer.from("twelve bytes") } })]),
  });
  t.after(() => f.close());
  const res = await send(f.envoy.url, { body: [Buffer.from("original")], headers: { "content-length": "8" } });
  assert.equal(res.status, 500);
  assert.equal(f.upstreams.main?.requests.length, 0);
  assert.deepEqual(f.envoy.stats.contentLengthMismatches, [{ direction: "request", contentLength: 8, bodyLength: 12, rejected: true }]);
});

void test("a content-length set in a headers response is forwarded as is, and noted when wrong", async (t) => {
  const f = await harness({
    extProc: { processingMode: { request_body_mode: "BUFFERED" } },
    script: on("request_headers", (m) => [matchingResponse(m, { header_mutation: { set_headers: [setHeader("content-length", "3")] } })]),
  });
  t.after(() => f.close());
  await send(f.envoy.url, { body: [Buffer.from("original")], headers: { "content-length": "8" } });
  assert.equal(f.upstreams.main?.requests[0]?.body.toString(), "ori", "the upstream reads 3 bytes");
  assert.deepEqual(f.envoy.stats.contentLengthMismatches, [{ direction: "request", contentLength: 3, bodyLength: 8, rejected: false }]);
});

void test("a BUFFERED response body mutation reaches the client with its new content-length", async (t) => {
  const f = await harness({
    extProc: { processingMode: { response_body_mode: "BUFFERED" } },
    script: on("response_body", (m) => [
      matchingResponse(m, {
        header_mutation: { set_headers: [setHeader("content-length", "7")] },
        body_mutation: { body: Buffer.from("changed") },
      }),
    ]),
  });
  t.after(() => f.close());
  const res = await send(f.envoy.url, { body: [Buffer.from("abc")] });
  assert.equal(res.status, 200);
  assert.equal(res.body.toString(), "changed");
  assert.equal(res.headers["content-length"], "7");
});

void test("STREAMED bodies lose content-length and each chunk is replaced in order", async (t) => {
  const f = await harness({
    extProc: { processingMode: { request_body_mode: "STREAMED" } },
    script: on("request_body", (m) => [matchingResponse(m, { body_mutation: { body: upper(m) } })]),
  });
  t.after(() => f.close());
  const res = await send(f.envoy.url, {
    body: [Buffer.from("hello "), Buffer.from("streamed "), Buffer.from("world")],
    gapMs: 30,
    headers: { "content-length": "20" },
  });
  assert.equal(res.status, 200);
  const seen = f.upstreams.main?.requests[0];
  assert.equal(seen?.body.toString(), "HELLO STREAMED WORLD");
  assert.equal(seen.headers["content-length"], undefined);
  assert.equal(seen.headers["transfer-encoding"], "chunked");
  assert.equal(headerValues(f.extProc.streams[0]?.[0] ?? {})["content-length"], "20", "the processor saw it");
  assert.ok(f.envoy.stats.extProcMessagesSentByKind.request_body >= 2);
  assert.ok(f.envoy.stats.contentLengthRemoved >= 1);
});

void test("mode_override to STREAMED for the response body is honoured only with allow_mode_override", async (t) => {
  const script = on("response_headers", (m) => [{ ...matchingResponse(m), mode_override: { response_body_mode: "STREAMED" } }]);
  const options = {
    script,
    upstreams: { main: slowChunks(["part1-", "part2"], 80) },
  };
  const allowed = await harness({ ...options, extProc: { allowModeOverride: true, processingMode: { response_body_mode: "BUFFERED" } } });
  const denied = await harness({ ...options, extProc: { processingMode: { response_body_mode: "BUFFERED" } } });
  t.after(async () => {
    await allowed.close();
    await denied.close();
  });

  assert.equal((await send(allowed.envoy.url, { method: "GET" })).body.toString(), "part1-part2");
  const streamed = allowed.extProc.messages().filter((m) => m.request === "response_body");
  assert.ok(streamed.length >= 2, `streamed in ${streamed.length} messages`);
  assert.notEqual(streamed[0]?.response_body?.end_of_stream, true, "the first chunk is not the end");
  assert.equal(allowed.envoy.stats.modeOverrides, 1);

  assert.equal((await send(denied.envoy.url, { method: "GET" })).body.toString(), "part1-part2");
  const buffered = denied.extProc.messages().filter((m) => m.request === "response_body");
  assert.equal(buffered.length, 1);
  assert.equal(bodyOf(buffered[0] ?? {}).toString(), "part1-part2");
  assert.equal(buffered[0]?.response_body?.end_of_stream, true);
  assert.equal(denied.envoy.stats.ignoredModeOverrides, 1);
});

void test("mode_override in a body response is ignored even when allowed", async (t) => {
  const f = await harness({
    extProc: { allowModeOverride: true, processingMode: { request_body_mode: "BUFFERED" } },
    script: on("request_body", (m) => [{ ...matchingResponse(m), mode_override: { response_body_mode: "BUFFERED" } }]),
  });
  t.after(() => f.close());
  assert.equal((await send(f.envoy.url, { body: [Buffer.from("x")] })).status, 200);
  assert.equal(f.envoy.stats.ignoredModeOverrides, 1);
  assert.equal(f.envoy.stats.extProcMessagesSentByKind.response_body, 0);
});

void test("a header mutation in a STREAMED body response is ignored, in a BUFFERED one applied", async (t) => {
  const script = on("response_body", (m) => [matchingResponse(m, { header_mutation: { set_headers: [setHeader("x-late", "1")] } })]);
  const upstreams = { main: slowChunks(["a", "b"], 80) };
  const streamed = await harness({ script, upstreams, extProc: { processingMode: { response_body_mode: "STREAMED" } } });
  const buffered = await harness({ script, upstreams, extProc: { processingMode: { response_body_mode: "BUFFERED" } } });
  t.after(async () => {
    await streamed.close();
    await buffered.close();
  });
  const s = await send(streamed.envoy.url, { method: "GET" });
  assert.equal(s.body.toString(), "ab");
  assert.equal(s.headers["x-late"], undefined);
  assert.ok(streamed.envoy.stats.ignoredMutations.some((i) => i.header === "x-late" && i.reason === "body-mode-not-buffered"));
  const b = await send(buffered.envoy.url, { method: "GET" });
  assert.equal(b.headers["x-late"], "1");
  assert.deepEqual(buffered.envoy.stats.ignoredMutations, []);
});

void test("a BUFFERED request body over the buffer limit gets 413; STREAMED passes", async (t) => {
  const big = Buffer.alloc(8192, 1);
  const parts = [big.subarray(0, 4096), big.subarray(4096)];
  const buffered = await harness({ bufferLimitBytes: 1024, extProc: { processingMode: { request_body_mode: "BUFFERED" } } });
  const streamed = await harness({ bufferLimitBytes: 1024, extProc: { processingMode: { request_body_mode: "STREAMED" } } });
  t.after(async () => {
    await buffered.close();
    await streamed.close();
  });
  const res = await send(buffered.envoy.url, { body: parts, gapMs: 20 });
  assert.equal(res.status, 413);
  assert.equal(res.body.toString(), "Payload Too Large");
  assert.equal(buffered.upstreams.main?.requests.length, 0);
  const ok = await send(streamed.envoy.url, { body: parts, gapMs: 20 });
  assert.equal(ok.status, 200);
  assert.ok(streamed.upstreams.main?.requests[0]?.body.equals(big));
});

void test("a BUFFERED response body over the buffer limit gets 500", async (t) => {
  const f = await harness({
    bufferLimitBytes: 1024,
    extProc: { processingMode: { response_body_mode: "BUFFERED" } },
    upstreams: { main: slowChunks(["x".repeat(800), "y".repeat(800)], 20) },
  });
  t.after(() => f.close());
  const res = await send(f.envoy.url, { method: "GET" });
  assert.equal(res.status, 500);
  assert.deepEqual(f.envoy.stats.localReplies, [{ status: 500, details: "response_payload_too_large" }]);
});

void test("BUFFERED_PARTIAL sends the body up to the limit once and streams the rest unprocessed", async (t) => {
  const f = await harness({
    bufferLimitBytes: 1024,
    extProc: { processingMode: { request_body_mode: "BUFFERED_PARTIAL" } },
    script: on("request_body", (m) => [matchingResponse(m, { body_mutation: { body: upper(m) } })]),
  });
  t.after(() => f.close());
  const parts = ["a", "b", "c", "d"].map((c) => Buffer.from(c.repeat(1024)));
  assert.equal((await send(f.envoy.url, { body: parts, gapMs: 30 })).status, 200);
  const sent = f.extProc.messages().filter((m) => m.request === "request_body");
  assert.equal(sent.length, 1);
  const partial = bodyOf(sent[0] ?? {});
  assert.ok(partial.length > 1024 && partial.length < 4096, `partial of ${partial.length} bytes`);
  assert.notEqual(sent[0]?.request_body?.end_of_stream, true);
  const whole = Buffer.concat(parts).toString();
  const expected = whole.slice(0, partial.length).toUpperCase() + whole.slice(partial.length);
  assert.equal(f.upstreams.main?.requests[0]?.body.toString(), expected);
});

void test("CONTINUE_AND_REPLACE turns a GET into a POST with a new body and stops body processing", async (t) => {
  const f = await harness({
    extProc: { processingMode: { request_body_mode: "BUFFERED" } },
    script: on("request_headers", (m) => [
      matchingResponse(m, {
        status: "CONTINUE_AND_REPLACE",
        header_mutation: { set_headers: [setHeader(":method", "POST")] },
        body_mutation: { body: Buffer.from("replaced") },
      }),
    ]),
  });
  t.after(() => f.close());
  assert.equal((await send(f.envoy.url, { method: "GET" })).status, 200);
  const seen = f.upstreams.main?.requests[0];
  assert.equal(seen?.method, "POST");
  assert.equal(seen.body.toString(), "replaced");
  assert.equal(f.envoy.stats.extProcMessagesSentByKind.request_body, 0);
});

void test("an immediate_response after the response started downstream resets the stream", async (t) => {
  const f = await harness({
    extProc: { processingMode: { response_body_mode: "STREAMED" } },
    upstreams: { main: slowChunks(["first", "second"], 80) },
    script: on("response_body", () => [{ immediate_response: { status: { code: 403 } } }]),
  });
  t.after(() => f.close());
  await assert.rejects(send(f.envoy.url, { method: "GET" }));
  assert.equal(f.envoy.stats.downstreamResets, 1);
});
