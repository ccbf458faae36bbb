/**
 * Online calibration end to end: a gateway with the REAL edge agent on the generated tiny model,
 * a policy with `route.target_quality` and `calibration.online`, and a cloud that replays a
 * recorded OpenAI completion — held until the test lets it answer, or dropping the connection.
 * Kept edge answers are shadowed within the per-tenant budget; the client's answer is the edge's,
 * received while every shadow call is still held at the cloud (so the client never waited on
 * one); the judged samples move the threshold, and the move is audited (log line, metrics, the
 * next request's `x-gearbox-reason`, the request log's `calibration`). A shadow call that fails
 * is a dropped sample: no move, no cost. Through the front door and through Envoy + ext_proc.
 */
import assert from "node:assert/strict";
import type http from "node:http";
import { after, before, describe, test } from "node:test";
import OpenAI from "openai";
import { pino } from "pino";
import { parseConfigText, resolveConfig, type GatewayConfig } from "../../extproc/config/load.ts";
import { startExtProcServer } from "../../extproc/grpc/server.ts";
import { startFrontDoor } from "../../extproc/http/front-door.ts";
import { OnlineCalibration } from "../../extproc/routing/calibration/online/online.ts";
import { createRoutingState } from "../../extproc/runtime/routing-state.ts";
import { Runtime } from "../../extproc/runtime/runtime.ts";
import { GatewayMetrics } from "../../extproc/telemetry/metrics.ts";
import { readFixtureBytes } from "../emulators/fixtures.ts";
import { startEnvoy } from "../harness/envoy.ts";
import { startUpstream, type RecordedRequest, type TestUpstream } from "../harness/test-http.ts";
import { shippedEdgeRoute, shippedEnvoySettings } from "../support/envoy-settings.ts";
import { Samples } from "../support/prometheus.ts";
import { confidenceOn, startTinyEdgeAgent, type TinyEdgeAgent } from "../support/tiny-edge-agent.ts";

const KEY = "sk-cloud-key";
/** A recorded OpenAI chat completion: what the cloud answers every shadow call with. */
const RECORDED = readFixtureBytes("vercel-ai/openai/openai-text", "json");
const ASK = { model: "gpt-4.1-nano", messages: [{ role: "user" as const, content: "Classify: refund request" }], max_tokens: 8, temperature: 0 };
const BUDGET = 3;

let agent: TinyEdgeAgent;
let edgeConfidence: number;
/** The tiny model's own answer to ASK, asked of the agent directly. */
let edgeText: string;

/** The cloud: holds every call until `open()`, then replays the recording; `drop` closes each connection instead. */
interface HeldCloud {
  upstream: TestUpstream;
  open(): void;
  answered: number;
}

async function startHeldCloud(mode: "hold" | "drop"): Promise<HeldCloud> {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const cloud: HeldCloud = {
    upstream: await startUpstream("cloud", async (req: RecordedRequest, res: http.ServerResponse) => {
      if (mode === "drop") return void res.destroy();
      await gate;
      assert.equal(req.headers.authorization, `Bearer ${KEY}`);
      res.writeHead(200, { "content-type": "application/json", "content-length": String(RECORDED.length) });
      res.end(RECORDED);
      cloud.answered++;
    }),
    open,
    answered: 0,
  };
  return cloud;
}

function gatewayConfig(cloudUrl: string): GatewayConfig {
  const yaml =
    `providers:\n  - { name: openai, kind: openai, base_url: '${cloudUrl}/v1', api_key_env: K }\n` +
    `edge:\n  agents: [{ address: '127.0.0.1:${agent.port}', models: [tiny] }]\n  default_model: tiny\n` +
    `route:\n  fallback: { enable: true, confidence_threshold: ${Math.max(0.001, edgeConfidence - 0.05)} }\n` +
    `  heuristic: { complexity_threshold: 0.9 }\n  target_quality: 0.95\n` +
    `  calibration: { cloud_quality: 1, online: { enable: true, shadow_fraction: 1, max_per_minute: ${BUDGET}, judge: exact, min_samples: 2 } }\n`;
  const raw = parseConfigText(yaml, "test.yaml");
  if (!raw.ok) throw new Error(raw.errors.join("\n"));
  const resolved = resolveConfig(raw.value, { K: KEY }, "test.yaml");
  if (!resolved.ok) throw new Error(resolved.errors.join("\n"));
  return resolved.value;
}

interface Gateway {
  client: OpenAI;
  calibration: OnlineCalibration;
  metrics: GatewayMetrics;
  logs: Record<string, unknown>[];
  close(): Promise<void>;
}

/** A gateway whose calibration clock stands still (the per-minute budget cannot roll over mid-test). */
async function startGateway(cloudUrl: string, transport: "front door" | "envoy + ext_proc"): Promise<Gateway> {
  const logs: Record<string, unknown>[] = [];
  const logger = pino({ level: "info" }, { write: (line: string) => void logs.push(JSON.parse(line) as Record<string, unknown>) });
  const calibration = new OnlineCalibration({ now: () => 0 });
  const runtime = new Runtime(gatewayConfig(cloudUrl), { logger, state: createRoutingState({ calibration }) });
  const deps = { runtime, logger };
  const extProc = await startExtProcServer(deps, 0, "127.0.0.1");
  const frontDoor = await startFrontDoor(deps, 0, "127.0.0.1");
  const closers: (() => Promise<void>)[] = [() => frontDoor.close(), () => extProc.drain(1000)];
  let base = `http://127.0.0.1:${frontDoor.port}`;
  if (transport === "envoy + ext_proc") {
    const shipped = shippedEnvoySettings();
    const envoy = await startEnvoy({
      extProc: { ...shipped.extProc, address: `127.0.0.1:${extProc.port}` },
      routes: [{ header: "x-gearbox-upstream", value: "openai", cluster: "openai" }, shippedEdgeRoute().route],
      clusters: { openai: { url: cloudUrl }, edge: shippedEdgeRoute().cluster },
    });
    closers.unshift(() => envoy.close());
    base = envoy.url;
  }
  return {
    client: new OpenAI({ baseURL: `${base}/v1`, apiKey: "client", maxRetries: 0 }),
    calibration,
    metrics: new GatewayMetrics({ calibration }, { defaultMetrics: false }),
    logs,
    close: async () => {
      for (const close of closers) await close();
    },
  };
}

async function until(what: string, ok: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !ok(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(ok(), what);
}

before(async () => {
  agent = await startTinyEdgeAgent();
  edgeConfidence = await confidenceOn(agent, { ...ASK, model: "tiny" });
  const direct = await fetch(`http://${agent.address}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ ...ASK, model: "tiny" }),
  });
  edgeText = ((await direct.json()) as { choices: { message: { content: string } }[] }).choices[0]?.message.content ?? "";
  assert.notEqual(edgeText, "");
});
after(async () => {
  await agent.close();
});

for (const transport of ["front door", "envoy + ext_proc"] as const) {
  describe(`online calibration via ${transport}`, () => {
    test("kept edge answers are shadowed within budget, the client gets the edge's answer without waiting, the judged samples move the threshold, audited", async () => {
      const cloud = await startHeldCloud("hold");
      const gw = await startGateway(cloud.upstream.url, transport);
      try {
        const reasons: string[] = [];
        for (let i = 0; i < BUDGET + 2; i++) {
          const { data, response } = await gw.client.chat.completions.create(ASK).withResponse();
          assert.equal(response.headers.get("x-gearbox-route"), "edge");
          assert.equal(data.choices[0]?.message.content, edgeText, "the client gets the edge's own answer");
          reasons.push(response.headers.get("x-gearbox-reason") ?? "");
        }
        // Every answer reached the client while the cloud had answered no shadow call.
        assert.equal(cloud.answered, 0);
        await until(`${BUDGET} shadow calls at the cloud`, () => cloud.upstream.requests.length === BUDGET);
        assert.match(reasons[0] ?? "", /^edge_confident:[\d.]+>=[\d.]+;heuristic:calibrated:initial=0\.9;complexity=[\d.]+<0\.9$/);
        const records = gw.logs.filter((l) => l.msg === "request");
        assert.deepEqual(
          records.map((r) => (r.calibration as { shadowed?: boolean } | undefined)?.shadowed),
          [true, true, true, false, false],
          "the first three within the budget of 3 a minute, then none",
        );
        assert.deepEqual(
          records.map((r) => r.cost_usd),
          records.map(() => 0),
          "a shadow call is not the client's cost",
        );
        const shadow = JSON.parse(cloud.upstream.requests[0]?.body.toString() ?? "{}") as { model: string; messages: { content: string }[] };
        assert.equal(shadow.model, "gpt-4.1-nano");
        assert.equal(shadow.messages[0]?.content, ASK.messages[0]?.content, "the shadow call asks the cloud the client's request");

        cloud.open();
        await gw.calibration.settled();
        assert.equal(cloud.upstream.requests.length, BUDGET, "no call beyond the budget");
        assert.equal(gw.calibration.stats.judged, BUDGET);
        // The tiny model's text is not the recorded answer: exact match grades every sample a loss → down.
        const moved = gw.logs.filter((l) => l.msg === "calibration threshold moved");
        assert.equal(moved.length, 1, "one move after min_samples (2) judged samples; the third is the next look's");
        const move = moved[0]?.calibration as { from: number; to: number; direction: string; reason: string; intent: string; tenant: string };
        assert.equal(move.from, 0.9);
        assert.ok(move.to < 0.9, `moved to ${move.to}`);
        assert.equal(move.direction, "down");
        assert.match(move.reason, /^calibrated:q=-?[\d.]+\[-?[\d.]+,-?[\d.]+\]<0\.95$/);
        assert.equal(move.tenant, "default");

        const samples = Samples.parse(await gw.metrics.registry.metrics());
        assert.equal(samples.get("gearbox_calibration_threshold_moves_total", { direction: "down" }), 1);
        assert.equal(samples.get("gearbox_calibration_shadow_calls_total", { outcome: "judged" }), BUDGET);
        assert.equal(samples.get("gearbox_calibration_shadow_calls_total", { outcome: "over_budget" }), 2);
        assert.equal(samples.get("gearbox_calibration_threshold", { tenant: "default", intent: move.intent }), move.to);

        // The next decision is taken at the moved threshold and says why.
        const { response } = await gw.client.chat.completions.create(ASK).withResponse();
        const reason = response.headers.get("x-gearbox-reason") ?? "";
        assert.ok(reason.includes(`heuristic:${move.reason};complexity=`), reason);
        assert.match(reason, new RegExp(`complexity=[\\d.]+(<|>=)${move.to}`));
      } finally {
        cloud.open();
        await gw.calibration.settled();
        await gw.close();
        await cloud.upstream.close();
      }
    });

    test("a shadow call that fails is a dropped sample: the client's answer unchanged, no move, no cost", async () => {
      const cloud = await startHeldCloud("drop");
      const gw = await startGateway(cloud.upstream.url, transport);
      try {
        for (let i = 0; i < 2; i++) {
          const { data, response } = await gw.client.chat.completions.create(ASK).withResponse();
          assert.equal(response.status, 200);
          assert.equal(response.headers.get("x-gearbox-route"), "edge");
          assert.equal(data.choices[0]?.message.content, edgeText);
        }
        await until("two shadow calls tried", () => cloud.upstream.requests.length === 2);
        await gw.calibration.settled();
        assert.equal(gw.calibration.stats.shadowFailed, 2);
        assert.equal(gw.calibration.stats.judged, 0);
        assert.equal(gw.logs.filter((l) => l.msg === "calibration threshold moved").length, 0);
        assert.equal(gw.logs.filter((l) => l.msg === "calibration shadow call failed; sample dropped").length, 2);
        const records = gw.logs.filter((l) => l.msg === "request");
        assert.deepEqual(
          records.map((r) => [r.status, r.route, r.cost_usd]),
          [
            [200, "edge", 0],
            [200, "edge", 0],
          ],
        );
        const samples = Samples.parse(await gw.metrics.registry.metrics());
        assert.equal(samples.get("gearbox_calibration_shadow_calls_total", { outcome: "failed" }), 2);
        assert.equal(samples.get("gearbox_calibration_threshold_moves_total", { direction: "down" }), 0);
        // Still the configured threshold: nothing was learned from failures.
        const { response } = await gw.client.chat.completions.create(ASK).withResponse();
        assert.match(response.headers.get("x-gearbox-reason") ?? "", /;heuristic:calibrated:initial=0\.9;complexity=[\d.]+<0\.9$/);
      } finally {
        await gw.close();
        await cloud.upstream.close();
      }
    });
  });
}
