/**
 * Tracing end to end: a request routed to the REAL edge agent (tiny model), judged weak,
 * upgraded to the cloud emulator and streamed to the client, with tracing on in the gateway and
 * in the agent and both exporting over OTLP gRPC to an in-process receiver. One trace holds the
 * gateway's phases, the edge call and the agent's span under it, and the upgrade; the upstream
 * got the trace in `traceparent`, the client got its id back. Through the front door and
 * through Envoy (harness) + ext_proc. Sampling 0 records nothing.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";
import OpenAI from "openai";
import { pino } from "pino";
import { startExtProcServer } from "../../extproc/grpc/server.ts";
import { startFrontDoor } from "../../extproc/http/front-door.ts";
import { createTracing, type Tracing } from "../../common/telemetry/tracing.ts";
import { loadJsonFixture } from "../emulators/fixtures.ts";
import { startOpenAIUpstream, type OpenAIUpstream } from "../emulators/openai-upstream.ts";
import { confidenceOn, startTinyEdgeAgent, type TinyEdgeAgent } from "../support/tiny-edge-agent.ts";
import { startEnvoy } from "../harness/envoy.ts";
import { shippedEdgeRoute, shippedEnvoySettings } from "../support/envoy-settings.ts";
import { testConfig } from "../support/gateway.ts";
import { SPAN_KIND, startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from "../support/otlp-receiver.ts";
import { Runtime } from "../../extproc/runtime/runtime.ts";

const KEY = "sk-cloud-key";
const CLOUD_TEXT = (loadJsonFixture("vercel-ai/openai/openai-text") as { choices: { message: { content: string } }[] }).choices[0]?.message.content;
const ASK = { model: "tiny", messages: [{ role: "user" as const, content: "Classify: refund request" }], max_tokens: 8, temperature: 0 };
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-(0[01])$/;

let agent: TinyEdgeAgent;
let agentTracing: Tracing;
let cloud: OpenAIUpstream;
let receiver: OtlpReceiver;
let edgeConfidence: number;

before(async () => {
  receiver = await startOtlpReceiver();
  // The agent's own tracing, as `gearbox edge-agent --otlp-endpoint` sets it up.
  agentTracing = createTracing({ enable: true, endpoint: receiver.endpoint, sample_ratio: 1 }, { defaultServiceName: "gearbox-edge-agent" });
  agent = await startTinyEdgeAgent(agentTracing.tracer ? { tracer: agentTracing.tracer } : {});
  cloud = await startOpenAIUpstream({ apiKey: KEY });
  edgeConfidence = await confidenceOn(agent, ASK);
});
after(async () => {
  await agent.close();
  await agentTracing.shutdown();
  await cloud.close();
  await receiver.close();
});

interface TracedGateway {
  client: OpenAI;
  tracing: Tracing;
  close(): Promise<void>;
}

/** Front door or Envoy harness + ext_proc over a gateway whose config turns tracing on at `ratio`. */
async function tracedGateway(transport: "front door" | "envoy + ext_proc", ratio: number): Promise<TracedGateway> {
  const config = testConfig(
    `providers:\n  - { name: openai, kind: openai, base_url: '${cloud.baseURL}', api_key_env: K }\n` +
      `edge:\n  agents: [{ address: '127.0.0.1:${agent.port}', models: [tiny] }]\n  fallback_model: gpt-4.1-nano\n` +
      // Above the tiny model's confidence: the edge answer is upgraded.
      `route:\n  fallback: { enable: true, confidence_threshold: ${Math.min(0.999, edgeConfidence + 0.05)} }\n` +
      `telemetry:\n  tracing: { enable: true, endpoint: '${receiver.endpoint}', sample_ratio: ${ratio}, service_name: gearbox-test }\n`,
    { K: KEY },
  );
  const tracing = createTracing(config.telemetry.tracing, { defaultServiceName: "gearbox" });
  assert.ok(tracing.tracer);
  const deps = { runtime: new Runtime(config), logger: pino({ level: "silent" }), tracer: tracing.tracer };
  const frontDoor = await startFrontDoor(deps, 0, "127.0.0.1");
  const extProc = await startExtProcServer(deps, 0, "127.0.0.1");
  let base = `http://127.0.0.1:${frontDoor.port}`;
  let closeEnvoy = (): Promise<void> => Promise.resolve();
  if (transport === "envoy + ext_proc") {
    const envoy = await startEnvoy({
      extProc: { ...shippedEnvoySettings().extProc, address: `127.0.0.1:${extProc.port}` },
      routes: [{ header: "x-gearbox-upstream", value: "openai", cluster: "openai" }, shippedEdgeRoute().route],
      clusters: { openai: { url: cloud.url }, edge: shippedEdgeRoute().cluster },
    });
    base = envoy.url;
    closeEnvoy = () => envoy.close();
  }
  return {
    client: new OpenAI({ baseURL: `${base}/v1`, apiKey: "client", maxRetries: 0 }),
    tracing,
    close: async () => {
      await closeEnvoy();
      await Promise.all([frontDoor.close(), extProc.drain(1000)]);
      await tracing.shutdown();
    },
  };
}

function one(spans: readonly ReceivedSpan[], what: string, predicate: (s: ReceivedSpan) => boolean): ReceivedSpan {
  const found = spans.filter(predicate);
  assert.equal(found.length, 1, `exactly one ${what}; spans: ${spans.map((s) => `${s.service}/${s.name}`).join(", ")}`);
  return found[0] as ReceivedSpan;
}

for (const transport of ["front door", "envoy + ext_proc"] as const) {
  describe(`tracing via ${transport}`, () => {
    test("edge → weak → upgrade → stream: one trace across the gateway's phases, the agent's span and the upgrade; traceparent upstream and the trace id back", async () => {
      const gateway = await tracedGateway(transport, 1);
      try {
        const seen = cloud.requests.length;
        // The caller is traced already: Gearbox continues its trace.
        const callerTrace = randomBytes(16).toString("hex");
        const callerSpan = randomBytes(8).toString("hex");
        const { data: stream, response } = await gateway.client.chat.completions
          .create({ ...ASK, stream: true, stream_options: { include_usage: true } }, { headers: { traceparent: `00-${callerTrace}-${callerSpan}-01` } })
          .withResponse();
        let text = "";
        let usage: OpenAI.CompletionUsage | undefined;
        for await (const chunk of stream) {
          text += chunk.choices[0]?.delta.content ?? "";
          usage = chunk.usage ?? usage;
        }
        assert.equal(text, CLOUD_TEXT, "the client got the cloud's answer, streamed");
        assert.equal(response.headers.get("x-gearbox-route"), "cloud");
        assert.ok(usage, "the stream carries usage");

        // Back to the client: the trace id, and W3C traceresponse naming Gearbox's root span.
        assert.equal(response.headers.get("x-gearbox-trace-id"), callerTrace);
        const [, backTrace, rootSpanId, backFlags] = TRACEPARENT.exec(response.headers.get("traceresponse") ?? "") ?? [];
        assert.equal(backTrace, callerTrace);
        assert.equal(backFlags, "01");

        // Upstream: the cloud emulator got the trace, parented by the upgrade span.
        const upstreamHeader = cloud.requests[seen]?.headers.traceparent;
        const [, upTrace, upParent] = TRACEPARENT.exec(typeof upstreamHeader === "string" ? upstreamHeader : "") ?? [];
        assert.equal(upTrace, callerTrace, `the cloud got traceparent ${String(upstreamHeader)}`);

        await Promise.all([gateway.tracing.forceFlush(), agentTracing.forceFlush()]);
        const spans = (
          await receiver.waitFor(
            (all) =>
              all.some((s) => s.traceId === callerTrace && s.service === "gearbox-edge-agent") &&
              all.some((s) => s.traceId === callerTrace && s.parentSpanId === callerSpan),
          )
        ).filter((s) => s.traceId === callerTrace);

        const root = one(spans, "root", (s) => s.parentSpanId === callerSpan);
        assert.equal(root.spanId, rootSpanId);
        assert.equal(root.service, "gearbox-test");
        assert.equal(root.kind, SPAN_KIND.server);
        assert.equal(root.name, "POST /v1/chat/completions");
        assert.equal(root.attributes["gen_ai.operation.name"], "chat");
        assert.equal(root.attributes["gen_ai.request.model"], "tiny");
        assert.equal(root.attributes["gen_ai.request.max_tokens"], 8);
        assert.equal(root.attributes["gen_ai.request.stream"], true);
        assert.equal(root.attributes["gen_ai.response.model"], "gpt-4.1-nano");
        assert.equal(root.attributes["gen_ai.usage.input_tokens"], usage.prompt_tokens);
        assert.equal(root.attributes["gen_ai.usage.output_tokens"], usage.completion_tokens);
        assert.equal(root.attributes["gearbox.route"], "cloud");
        assert.equal(root.attributes["gearbox.upgraded"], true);
        assert.match(root.attributes["gearbox.upgrade.reason"] as string, /^low_confidence:/);
        assert.equal(root.attributes["http.response.status_code"], 200);

        for (const phase of ["gearbox.parse", "gearbox.decision", "gearbox.response"])
          assert.equal(one(spans, phase, (s) => s.name === phase).parentSpanId, root.spanId, `${phase} is a child of the root`);

        const edgeCall = one(spans, "edge call", (s) => s.attributes["gearbox.upstream"] === "edge");
        assert.equal(edgeCall.parentSpanId, root.spanId);
        assert.equal(edgeCall.kind, SPAN_KIND.client);
        assert.equal(edgeCall.name, "chat tiny");
        assert.equal(edgeCall.attributes["gearbox.edge.agent"], `127.0.0.1:${agent.port}`);
        assert.equal(Number(edgeCall.attributes["gearbox.edge.confidence"]).toFixed(4), edgeConfidence.toFixed(4));

        // The agent continued the edge call's traceparent.
        const served = one(spans, "agent span", (s) => s.service === "gearbox-edge-agent");
        assert.equal(served.parentSpanId, edgeCall.spanId);
        assert.equal(served.kind, SPAN_KIND.server);
        assert.equal(served.name, "chat tiny");
        assert.equal(served.attributes["gen_ai.request.model"], "tiny");
        assert.ok(Number(served.attributes["gen_ai.usage.input_tokens"]) > 0);
        assert.equal(served.attributes["gen_ai.usage.input_tokens"], edgeCall.attributes["gen_ai.usage.input_tokens"]);
        assert.equal(served.attributes["gen_ai.usage.output_tokens"], edgeCall.attributes["gen_ai.usage.output_tokens"]);
        assert.equal(Number(served.attributes["gearbox.edge.confidence"]).toFixed(4), edgeConfidence.toFixed(4));

        const upgrade = one(spans, "upgrade", (s) => s.attributes["gearbox.upstream"] === "cloud");
        assert.equal(upgrade.spanId, upParent, "the cloud's traceparent names the upgrade span");
        assert.equal(upgrade.kind, SPAN_KIND.client);
        assert.equal(upgrade.name, "chat gpt-4.1-nano");
        assert.equal(upgrade.parentSpanId, one(spans, "response", (s) => s.name === "gearbox.response").spanId);
        assert.equal(upgrade.attributes["gen_ai.provider.name"], "openai");
        assert.equal(upgrade.attributes["gen_ai.usage.input_tokens"], usage.prompt_tokens);
        assert.equal(upgrade.attributes["gen_ai.usage.output_tokens"], usage.completion_tokens);
        // OTel JS anchors each span's clock on Date.now() (ms) when the span starts: two spans'
        // timestamps can disagree by up to ~1 ms, so the order is checked with that slack.
        assert.ok(upgrade.startNs + 2_000_000n >= edgeCall.endNs, "the upgrade starts after the edge answered");
      } finally {
        await gateway.close();
      }
    });

    test("sample ratio 0: the trace id still travels (sampled flag off), no span is exported by the gateway or the agent", async () => {
      const gateway = await tracedGateway(transport, 0);
      try {
        const seen = cloud.requests.length;
        const { response } = await gateway.client.chat.completions.create(ASK).withResponse();
        const traceId = response.headers.get("x-gearbox-trace-id") ?? "";
        assert.match(traceId, /^[0-9a-f]{32}$/);
        const upstreamHeader = cloud.requests[seen]?.headers.traceparent;
        const [, upTrace, , flags] = TRACEPARENT.exec(typeof upstreamHeader === "string" ? upstreamHeader : "") ?? [];
        assert.equal(upTrace, traceId);
        assert.equal(flags, "00");
        // A marker trace, sampled, flushed after the request: once it arrives, anything of the request would have too.
        const marker = createTracing({ enable: true, endpoint: receiver.endpoint, sample_ratio: 1, service_name: "marker" }, { defaultServiceName: "marker" });
        marker.tracer?.startSpan("marker").end();
        await Promise.all([gateway.tracing.forceFlush(), agentTracing.forceFlush()]);
        await marker.shutdown();
        await receiver.waitFor((all) => all.some((s) => s.service === "marker"));
        assert.deepEqual(
          receiver.spans.filter((s) => s.traceId === traceId),
          [],
        );
      } finally {
        await gateway.close();
      }
    });
  });
}
