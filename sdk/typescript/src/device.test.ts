/**
 * The TypeScript device SDK end to end: the real `gearbox extproc` process, the SDK's client and
 * control channel, the tiny GGUF model loaded in this process by llama.cpp (node-llama-cpp) as
 * the device's model, and a cloud emulator. Checked on what the gateway records (request log,
 * admin device list) and what the app gets.
 */
import assert from "node:assert/strict";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { getLlama, LlamaLogLevel, type Llama } from "node-llama-cpp";
import { createLlamaCppEngine } from "../../../edge-agent/engines/llamacpp.ts";
import { writeTinyGguf } from "../../../edge-agent/model/tiny-gguf.ts";
import { loadJsonFixture } from "../../../test/emulators/fixtures.ts";
import { startDeviceStack, type DeviceStack } from "../../../test/support/device-stack.ts";
import { DeviceModels, Gearbox, GearboxError, createModelHandle, type ChatCompletion, type ModelHandle } from "./index.ts";

const CLOUD_TEXT = (loadJsonFixture("vercel-ai/openai/openai-text") as { choices: { message: { content: string } }[] }).choices[0]?.message.content;
const PROMPT = "Summarize this in one line: the cat sat on the mat all day.";
const SUMMARIZE = { model: "gpt-4.1-nano", messages: [{ role: "user" as const, content: PROMPT }], max_tokens: 6 };
const CODE = { model: "gpt-4.1-nano", messages: [{ role: "user" as const, content: "Write a Python function that sorts a list of numbers." }], max_tokens: 6 };

let stack: DeviceStack;
let llama: Llama;
let file: string;

async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await sleep(50);
  }
  assert.fail(`timed out waiting for ${what}`);
}

function handle(id = "tiny"): ModelHandle {
  return createModelHandle({ id, engine: "llama.cpp", source: file, threads: 1, contextLength: 256 }, createLlamaCppEngine({ llama }));
}

function device(id: string, key: string, h: ModelHandle = handle()): Gearbox {
  const models = new DeviceModels([h], (spec) => createModelHandle({ ...spec, threads: 1, contextLength: 256 }, createLlamaCppEngine({ llama })));
  return new Gearbox({ baseURL: `${stack.url}/v1`, apiKey: key, deviceId: id, models, backoff: { baseMs: 50, maxMs: 300 }, timeoutMs: 5_000 });
}

/** The request-log lines of device answers (their cascade names the device). */
const deviceRecords = (id: string) => stack.gateway.logs.filter((l) => (l.cascade as { edge_agent?: string } | undefined)?.edge_agent === `device:shop/${id}`);

before(async () => {
  file = path.join(await mkdtemp(path.join(tmpdir(), "sdk-ts-")), "tiny.gguf");
  await writeTinyGguf(file);
  llama = await getLlama({ gpu: false, build: "never", logLevel: LlamaLogLevel.error });
  // Threshold 0: every local answer is kept; the restart below raises it so the next is upgraded.
  stack = await startDeviceStack({ threshold: 0 });
});
after(async () => {
  await stack.close();
  await llama.dispose();
});

describe("TypeScript device SDK", () => {
  let app: Gearbox;
  let tiny: ModelHandle;
  after(async () => app.close());

  test("a device registers, gets the policy, asks, answers on its model and reports: recorded as an edge answer", async () => {
    tiny = handle();
    app = device("dev-1", stack.callKey, tiny);
    await app.connect();
    assert.equal(app.policy?.confidence_threshold, 0);
    assert.equal(app.policy?.upgrade, true);
    const listed = await stack.devices();
    assert.deepEqual(
      listed.map((d) => [d.device_id, d.active]),
      [["dev-1", "tiny"]],
    );
    const seen = stack.cloud.requests.length;
    const out = await app.chat.completions.create(SUMMARIZE);
    assert.equal(out.gearbox?.route, "device");
    assert.match(out.gearbox?.reason ?? "", /^edge_confident:.*rule:1/);
    const direct = await tiny.chat([{ role: "user", content: PROMPT }], { maxTokens: 6 });
    assert.equal(out.choices[0]?.message.content, direct.text);
    assert.equal(stack.cloud.requests.length, seen, "nothing went to the cloud");
    await until(() => deviceRecords("dev-1").length === 1, "the request record");
    const record = deviceRecords("dev-1")[0] ?? {};
    assert.equal(record.route, "edge");
    assert.equal(record.tenant, "shop");
    const cascade = record.cascade as Record<string, unknown>;
    assert.equal(cascade.edge_model, "tiny");
    assert.equal(cascade.upgraded, false);
    assert.equal(cascade.edge_output_tokens, direct.usage.completion_tokens);
    assert.equal(typeof record.cloud_cost_avoided_usd, "number", "the cost avoided is counted");
    assert.equal(JSON.stringify(stack.gateway.logs).includes(stack.callKey), false, "the key is never logged");
    assert.equal(await stack.metric('gearbox_device_decisions_total{outcome="kept"}'), 1);
    assert.equal(await stack.metric("gearbox_device_decisions_pending"), 0);
  });

  test("a call the policy keeps in the cloud goes through the gateway's front door", async () => {
    const seen = stack.cloud.requests.length;
    const out = await app.chat.completions.create(CODE);
    assert.equal(out.gearbox?.route, "cloud");
    assert.equal(out.choices[0]?.message.content, CLOUD_TEXT);
    assert.equal(stack.cloud.requests.length, seen + 1);
  });

  test("streaming: the local answer arrives as chunks that add up to the whole answer", async () => {
    const whole = await app.chat.completions.create(SUMMARIZE);
    const chunks = [];
    for await (const c of await app.chat.completions.create({ ...SUMMARIZE, stream: true })) chunks.push(c);
    assert.equal(chunks.map((c) => c.choices[0]?.delta.content ?? "").join(""), whole.choices[0]?.message.content);
    assert.equal(chunks.at(-1)?.gearbox?.route, "device");
    assert.equal(chunks.at(-1)?.choices[0]?.finish_reason, whole.choices[0]?.finish_reason);
    const gen = await tiny.generate(PROMPT, { maxTokens: 6 });
    let streamed = "";
    for await (const c of tiny.generateStream(PROMPT, { maxTokens: 6 })) if (c.type === "text") streamed += c.text;
    assert.equal(streamed, gen.text);
    assert.ok(gen.confidence !== null && gen.confidence > 0 && gen.confidence <= 1);
  });

  test("gateway down: the last policy allows a local answer; back up after a restart, the device resumes without reloading and a weak answer is upgraded", async () => {
    const before = app.policy;
    const welcomes = app.channel.connections;
    await stack.gateway.stop();
    const offline = await app.chat.completions.create(SUMMARIZE);
    assert.equal(offline.gearbox?.route, "device");
    assert.equal(offline.gearbox?.reason, "gateway_unreachable");
    await stack.restart(0.999);
    await until(() => app.channel.connections > welcomes, "the reconnect");
    assert.equal(tiny.loads, 1, "the model was not reloaded");
    assert.ok((app.policy?.version ?? 0) > (before?.version ?? 0), "a new policy has a higher version");
    assert.equal(app.policy?.confidence_threshold, 0.999);
    const seen = stack.cloud.requests.length;
    const out: ChatCompletion = await app.chat.completions.create(SUMMARIZE);
    assert.equal(out.gearbox?.route, "cloud");
    assert.match(out.gearbox?.fallback ?? "", /^low_confidence:0\.\d+<0\.999$/);
    assert.equal(out.choices[0]?.message.content, CLOUD_TEXT);
    assert.equal(stack.cloud.requests.length, seen + 1);
    await until(() => deviceRecords("dev-1").some((r) => r.route === "cloud"), "the upgrade's record");
    const upgraded = deviceRecords("dev-1").find((r) => r.route === "cloud") ?? {};
    const cascade = upgraded.cascade as Record<string, unknown>;
    assert.equal(cascade.upgraded, true);
    // The new process counts from zero: one reconnect (the resume), one upgraded decision.
    assert.equal(await stack.metric('gearbox_device_connects_total{kind="reconnect"}'), 1);
    assert.equal(await stack.metric('gearbox_device_decisions_total{outcome="upgraded"}'), 1);
    assert.equal(cascade.cloud_status, 200);
  });

  test("a model-switch command is applied and acknowledged", async () => {
    const load = await stack.command("dev-1", { op: "load", model: "tiny-b", engine: "llama.cpp", source: file });
    assert.equal(load.status, 202);
    const sw = await stack.command("dev-1", { op: "switch", model: "tiny-b" });
    assert.equal(sw.status, 202);
    assert.ok(Number(sw.body.id) > Number(load.body.id));
    await until(async () => (await stack.devices()).some((d) => d.active === "tiny-b" && (d.pending_commands as unknown[]).length === 0), "the acks");
    assert.equal(app.models.activeModel, "tiny-b");
    const listed = (await stack.devices())[0] ?? {};
    assert.deepEqual((listed.models as { id: string }[]).map((m) => m.id).sort(), ["tiny", "tiny-b"]);
    assert.equal(listed.last_command, sw.body.id);
    const bad = await stack.command("dev-1", { op: "switch", model: "missing" });
    await until(async () => ((await stack.devices())[0]?.pending_commands as unknown[]).length === 0, "the refusal's ack");
    assert.equal(bad.status, 202);
    assert.equal(app.models.activeModel, "tiny-b", "a refused switch changes nothing");
    const unknown = await stack.command("nobody", { op: "switch", model: "tiny" });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error && (unknown.body.error as { code: string }).code, "device_not_connected");
  });
});

describe("what a silent or bad device gets", () => {
  const post = (verb: string, body: string, key = stack.callKey, headers: Record<string, string> = {}) =>
    fetch(`${stack.url}/v1/device/${verb}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}`, ...headers },
      body,
    });
  const code = async (res: Response) => ((await res.json()) as { error: { code: string } }).error.code;

  test("heartbeats stop: the server reclaims the device and what it held within its timeout", async () => {
    const app = device("dev-silent", stack.callKey);
    await app.connect();
    const session = app.channel.session ?? "";
    const decided = (await (await post("decide", JSON.stringify(SUMMARIZE), stack.callKey, { "x-gearbox-device-id": "dev-silent" })).json()) as {
      decision_id: string;
    };
    assert.ok(decided.decision_id);
    const closed = new Promise<string>((resolve) => app.channel.once("closed", resolve));
    app.channel.pauseHeartbeats();
    assert.equal(await closed, "expired");
    const late = await post("heartbeat", JSON.stringify({ session }));
    assert.equal(late.status, 404);
    assert.equal(await code(late), "unknown_session");
    const outcome = await post("outcome", JSON.stringify({ decision_id: decided.decision_id, confidence: 0.9 }));
    assert.equal(outcome.status, 404);
    assert.equal(await code(outcome), "unknown_decision");
    await app.close();
  });

  test("a revoked key: refused at connect (401) and a connected device is dropped; garbage and an oversized hello get clear errors; the server stays up", async () => {
    const { key, id } = await stack.newKey();
    const app = device("dev-revoked", key);
    await app.connect();
    const failed = new Promise<unknown>((resolve) => app.channel.once("error", resolve));
    await stack.revoke(id);
    const err = await failed;
    assert.ok(err instanceof GearboxError);
    assert.equal(err.status, 401);
    assert.equal(
      (await stack.devices()).some((d) => d.device_id === "dev-revoked"),
      false,
    );
    const again = device("dev-revoked", key);
    await assert.rejects(again.connect(), (e: unknown) => e instanceof GearboxError && e.status === 401 && e.code === "invalid_api_key");
    await again.close();
    await app.close();

    const garbage = await post("connect", "\u0000garbage{");
    assert.equal(garbage.status, 400);
    assert.equal(await code(garbage), "invalid_json");
    const badHello = await post("connect", JSON.stringify({ device_id: "ok", models: [{ id: "x" }] }));
    assert.equal(badHello.status, 400);
    assert.match(((await badHello.json()) as { error: { message: string } }).error.message, /hello\.models\[0\]\.engine/);
    const big = await post("connect", JSON.stringify({ device_id: "big", sdk: "x".repeat(20_000) }));
    assert.equal(big.status, 413);
    assert.equal(await code(big), "request_too_large");
    const bogus = await post("heartbeat", JSON.stringify({ session: "nope", extra: 1 }));
    assert.equal(bogus.status, 400);
    const nokey = await fetch(`${stack.url}/v1/device/connect`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    assert.equal(nokey.status, 401);
    const noDevice = await post("decide", JSON.stringify(SUMMARIZE));
    assert.equal(noDevice.status, 400);
    assert.equal(await code(noDevice), "device_id_required");
    const notAllowed = await post("decide", JSON.stringify({ ...SUMMARIZE, model: "gpt-4o" }), stack.callKey, { "x-gearbox-device-id": "dev-1" });
    assert.equal(notAllowed.status, 403);
    assert.equal(await code(notAllowed), "model_not_allowed");
    assert.equal((await fetch(`${stack.url}/healthz`)).status, 200);
  });
});
