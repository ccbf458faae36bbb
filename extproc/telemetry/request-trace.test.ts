import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { InMemorySpanExporter } from "@opentelemetry/sdk-trace";
import { startOtlpReceiver, SPAN_KIND, STATUS_CODE, type OtlpReceiver } from "../../test/support/otlp-receiver.ts";
import { extractParent } from "../../common/telemetry/trace-context.ts";
import { RequestTrace, TRACE_ID_HEADER } from "./request-trace.ts";
import { trace } from "@opentelemetry/api";
import { createTracing } from "../../common/telemetry/tracing.ts";

const PARENT_TRACE = "0af7651916cd43dd8448eb211c80319c";
const PARENT_SPAN = "b7ad6b7169203331";
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-(0[01])$/;

describe("propagation parsing", () => {
  test("a valid traceparent is continued; tracestate is kept", () => {
    const parent = trace.getSpanContext(extractParent({ traceparent: `00-${PARENT_TRACE}-${PARENT_SPAN}-01`, tracestate: "vendor=abc" }));
    assert.equal(parent?.traceId, PARENT_TRACE);
    assert.equal(parent?.spanId, PARENT_SPAN);
    assert.equal(parent?.traceState?.get("vendor"), "abc");
  });

  for (const bad of [
    "garbage",
    `00-${PARENT_TRACE}-${PARENT_SPAN}`,
    `00-${"0".repeat(32)}-${PARENT_SPAN}-01`,
    `00-${PARENT_TRACE}-${"0".repeat(16)}-01`,
    `ff-${PARENT_TRACE}-${PARENT_SPAN}-01`,
    `00-${PARENT_TRACE.toUpperCase()}-${PARENT_SPAN}-01`,
    "",
  ]) {
    test(`a bad traceparent (${JSON.stringify(bad)}) starts a new trace, without throwing`, () => {
      const tracing = createTracing({ enable: true, sample_ratio: 1 }, { defaultServiceName: "t", exporter: new InMemorySpanExporter() });
      const t = RequestTrace.start(tracing.tracer, { traceparent: bad }, "POST /v1/chat/completions");
      assert.ok(t);
      assert.match(t.traceId, /^[0-9a-f]{32}$/);
      assert.notEqual(t.traceId, PARENT_TRACE);
      assert.notEqual(t.traceId, "0".repeat(32));
      assert.match(t.propagation().traceparent ?? "", TRACEPARENT);
      t.end();
    });
  }

  test("a repeated header (Node's array form) uses its first value", () => {
    const parent = trace.getSpanContext(extractParent({ traceparent: [`00-${PARENT_TRACE}-${PARENT_SPAN}-01`, "junk"] }));
    assert.equal(parent?.traceId, PARENT_TRACE);
  });

  test("tracing off: no tracer, no request trace", () => {
    const tracing = createTracing({ enable: false, sample_ratio: 1 }, { defaultServiceName: "t" });
    assert.equal(tracing.tracer, undefined);
    assert.equal(RequestTrace.start(tracing.tracer, { traceparent: `00-${PARENT_TRACE}-${PARENT_SPAN}-01` }, "x"), undefined);
  });
});

describe("request trace over OTLP gRPC", () => {
  let receiver: OtlpReceiver;
  before(async () => {
    receiver = await startOtlpReceiver();
  });
  after(() => receiver.close());

  test("spans reach the receiver as a tree under the caller's trace, with attributes and error status", async () => {
    const tracing = createTracing({ enable: true, endpoint: receiver.endpoint, sample_ratio: 1, service_name: "unit" }, { defaultServiceName: "x" });
    const t = RequestTrace.start(tracing.tracer, { traceparent: `00-${PARENT_TRACE}-${PARENT_SPAN}-01` }, "POST /v1/chat/completions", {
      "gearbox.request_id": "r1",
    });
    assert.ok(t);
    const parse = t.phase("gearbox.parse");
    parse.end();
    const call = t.call("chat gpt-4.1-nano", { "gen_ai.request.model": "gpt-4.1-nano" });
    const headers = t.propagation(call);
    const [, traceId, spanId, flags] = TRACEPARENT.exec(headers.traceparent ?? "") ?? [];
    assert.equal(traceId, PARENT_TRACE);
    assert.equal(spanId, call.span.spanContext().spanId);
    assert.equal(flags, "01");
    assert.equal(t.responseHeaders()[TRACE_ID_HEADER], PARENT_TRACE);
    // Left open: the trace's end closes it, marked as cut short.
    t.end({ message: "boom", status: 502, code: "upstream_unreachable" }, { "gen_ai.usage.input_tokens": 3 });
    await tracing.shutdown();
    const spans = await receiver.waitFor((s) => s.filter((x) => x.traceId === PARENT_TRACE).length === 3);
    const mine = spans.filter((s) => s.traceId === PARENT_TRACE);
    const root = mine.find((s) => s.name === "POST /v1/chat/completions");
    assert.ok(root);
    assert.equal(root.parentSpanId, PARENT_SPAN);
    assert.equal(root.kind, SPAN_KIND.server);
    assert.equal(root.service, "unit");
    assert.equal(root.attributes["gearbox.request_id"], "r1");
    assert.equal(root.attributes["gen_ai.usage.input_tokens"], 3);
    assert.equal(root.attributes["error.type"], "upstream_unreachable");
    assert.deepEqual(root.status, { code: STATUS_CODE.error, message: "boom" });
    const child = mine.find((s) => s.name === "chat gpt-4.1-nano");
    assert.equal(child?.parentSpanId, root.spanId);
    assert.equal(child?.kind, SPAN_KIND.client);
    assert.equal(child?.status.code, STATUS_CODE.error);
    assert.equal(mine.find((s) => s.name === "gearbox.parse")?.status.code, STATUS_CODE.unset);
  });

  test("sample ratio 0: a new trace records nothing but still propagates (sampled flag off); a sampled parent is followed", async () => {
    const exporter = new InMemorySpanExporter();
    const tracing = createTracing({ enable: true, sample_ratio: 0 }, { defaultServiceName: "x", exporter });
    const unsampled = RequestTrace.start(tracing.tracer, {}, "root");
    assert.ok(unsampled);
    assert.equal(unsampled.sampled, false);
    assert.match(unsampled.propagation().traceparent ?? "", /-00$/);
    unsampled.phase("p").end();
    unsampled.end();
    const followed = RequestTrace.start(tracing.tracer, { traceparent: `00-${PARENT_TRACE}-${PARENT_SPAN}-01` }, "root");
    assert.equal(followed?.sampled, true);
    followed?.end();
    await tracing.forceFlush();
    assert.deepEqual(
      exporter.getFinishedSpans().map((s) => s.spanContext().traceId),
      [PARENT_TRACE],
    );
  });
});
