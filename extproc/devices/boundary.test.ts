/**
 * The device decision API under the tenant's data boundary, as the gateway's own path applies it:
 * a blocked category is the same 403 with the same code; an edge-only call is told "device" with
 * no upgrade (a call the rules send to the cloud too), or refused when the device cannot take it,
 * never "cloud"; a redacted call's cloud upgrade carries placeholders only, and the device gets
 * the upgrade's answer with the values back. Driven in-process: a `DeviceDecisions` over a real
 * runtime, a device session opened with a hello, and a cloud stand-in that quotes what it got.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { pino } from "pino";
import { testConfig } from "../../test/support/gateway.ts";
import { startEcho, type Echo } from "../../test/support/quoting-upstream.ts";
import { Runtime } from "../runtime/runtime.ts";
import { DeviceDecisions, type DeviceRequest, type Instruction } from "./decisions.ts";
import { DeviceRegistry } from "./registry.ts";
import { helloSchema } from "./wire.ts";

const EMAIL = "ann.lee@corp-mail.example.com";
const who: DeviceRequest = { headers: { "x-gearbox-device-id": "dev-1" }, address: "127.0.0.1" };
const ask = (content: string) => Buffer.from(JSON.stringify({ model: "gpt-4.1-nano", messages: [{ role: "user", content }], max_tokens: 16 }));

describe("device decisions under the data boundary", () => {
  let cloud: Echo;
  let decisions: DeviceDecisions;
  let registry: DeviceRegistry;
  before(async () => {
    cloud = await startEcho();
    const config = testConfig(
      `providers:\n  - { name: openai, kind: openai, base_url: '${cloud.url}/v1', api_key_env: K }\n` +
        `edge: { fallback_model: gpt-4.1-nano }\n` +
        `route:\n  rules:\n    - { when: { intent: [summarize] }, target: edge }\n    - { when: { intent: [code_gen] }, target: cloud }\n` +
        `  fallback: { enable: true, confidence_threshold: 0.5 }\n` +
        `data_boundary: { enable: true, pii: redact, secrets: block, confidential: edge_only, keywords: [Falcon] }\n`,
      { K: "sk-cloud" },
    );
    const runtime = new Runtime(config);
    const logger = pino({ level: "silent" });
    registry = new DeviceRegistry({ config: () => runtime.current().config, logger });
    decisions = new DeviceDecisions({ runtime, registry, logger });
  });
  after(async () => {
    decisions.close();
    registry.close();
    await cloud.close();
  });

  const connect = () => {
    const hello = helloSchema.parse({ device_id: "dev-1", engines: ["llama.cpp"], models: [{ id: "tiny", engine: "llama.cpp" }] });
    const opened = registry.open("default", hello, { send: () => undefined, end: () => undefined });
    assert.ok(opened.ok);
    return opened.value;
  };
  const decide = async (content: string): Promise<Instruction> => {
    const decided = await decisions.decide(who, ask(content));
    if (!decided.ok) assert.fail(`refused: ${decided.errors[0]?.message}`);
    return decided.value;
  };

  test("a blocked category is refused with the main path's status and code, the value never echoed", async () => {
    connect();
    const decided = await decisions.decide(who, ask("Summarize: the deploy key is sk-proj-Zx9yW8vU7tS6rQ5pO4nM3lK2jH1gF0eD"));
    assert.equal(decided.ok, false);
    if (decided.ok) return;
    assert.equal(decided.errors[0]?.status, 403);
    assert.equal(decided.errors[0]?.code, "data_boundary_secret");
    assert.doesNotMatch(decided.errors[0]?.message ?? "", /Zx9y/);
    assert.equal(cloud.bodies.length, 0);
  });

  test("an edge-only call goes to the device with no upgrade, even one the rules send to the cloud", async () => {
    connect();
    // code_gen → cloud by rule; the keyword makes it confidential.
    const code = await decide("Write a Python function for the Falcon launch that sorts a list of numbers.");
    assert.equal(code.target, "device", JSON.stringify(code));
    if (code.target !== "device") return;
    assert.equal(code.upgrade, false);
    assert.match(code.reason, /data_boundary:edge_only/);
    // A weak local answer is not upgraded either: the outcome keeps it, the cloud sees nothing.
    const verdict = await decisions.outcome(who, { decision_id: code.decision_id, confidence: 0.01, status: "ok" });
    assert.ok(verdict.ok);
    assert.equal(verdict.value.action, "keep");
    assert.equal(cloud.bodies.length, 0);
  });

  test("an edge-only call the device cannot take is refused (503 data_boundary_edge_only), never sent to the cloud", async () => {
    const session = connect();
    registry.remove(session, "test");
    const decided = await decisions.decide(who, ask("Summarize the Falcon launch plan in one line."));
    assert.equal(decided.ok, false);
    if (decided.ok) return;
    assert.equal(decided.errors[0]?.status, 503);
    assert.equal(decided.errors[0]?.code, "data_boundary_edge_only");
    assert.equal(cloud.bodies.length, 0);
  });

  test("a redacted call's cloud upgrade carries placeholders only; the device gets the answer with the value back", async () => {
    connect();
    const summary = await decide(`Summarize in one line: ${EMAIL} asked for the invoice to be resent.`);
    assert.equal(summary.target, "device", JSON.stringify(summary));
    if (summary.target !== "device") return;
    assert.equal(summary.upgrade, true);
    const verdict = await decisions.outcome(who, { decision_id: summary.decision_id, confidence: 0.1, status: "ok" });
    assert.ok(verdict.ok);
    assert.equal(verdict.value.action, "upgrade", JSON.stringify(verdict.value));
    assert.equal(cloud.bodies.length, 1);
    const sent = cloud.bodies[0]!;
    assert.ok(!sent.includes(EMAIL), `the cloud saw the value: ${sent}`);
    assert.match(sent, /<EMAIL_1_[0-9a-f]+>/);
    if (verdict.value.action !== "upgrade") return;
    const completion = verdict.value.completion as { choices: [{ message: { content: string } }] };
    assert.equal(completion.choices[0].message.content, `You said: Summarize in one line: ${EMAIL} asked for the invoice to be resent.`);
  });

  test("a redacted call the route sends to the cloud is a cloud instruction (the SDK's call is masked on the main path)", async () => {
    connect();
    const code = await decide(`Write a Python function that emails ${EMAIL} a report.`);
    assert.equal(code.target, "cloud", JSON.stringify(code));
  });
});
