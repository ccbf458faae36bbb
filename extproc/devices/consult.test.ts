/**
 * The device decision consults what the processor's decision consults (`request-phase.ts`
 * `consulted`): with a policy plugin configured, the real `gearbox extproc` process asks it for a
 * device's call too. The plugin (written here) sends summaries to the cloud; without it the
 * stack's rules send them to the device (`sdk/typescript/src/device.test.ts`).
 */
import assert from "node:assert/strict";
import { mkdtemp, writeFile } from "node:fs/promises";
import http from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { startDeviceStack, type DeviceStack } from "../../test/support/device-stack.ts";

let stack: DeviceStack;
let channel: http.ClientRequest | undefined;

const ask = (content: string) => JSON.stringify({ model: "gpt-4.1-nano", messages: [{ role: "user", content }], max_tokens: 6 });
const headers = () => ({ "content-type": "application/json", authorization: `Bearer ${stack.callKey}`, "x-gearbox-device-id": "dev-plugin" });

before(async () => {
  const dir = await mkdtemp(path.join(tmpdir(), "device-plugin-"));
  const plugin = path.join(dir, "plugin.mjs");
  await writeFile(
    plugin,
    `export function decide(ctx) {\n  return ctx.complexity.level === "low" && ctx.intent === "summarize" && ctx.tenant === "shop" ? { target: "cloud", reason: "summaries_in_cloud" } : undefined;\n}\n`,
  );
  stack = await startDeviceStack({ threshold: 0, heartbeatMs: 30_000, expiryMs: 120_000, plugin });
  // A connected device with the tiny model: without the plugin a summary is its to answer.
  await new Promise<void>((resolve, reject) => {
    channel = http.request(`${stack.url}/v1/device/connect`, { method: "POST", headers: headers() }, (res) => {
      res.setEncoding("utf8");
      res.on("data", (c: string) => c.includes("welcome") && resolve());
    });
    channel.on("error", reject);
    channel.end(JSON.stringify({ device_id: "dev-plugin", engines: ["llama.cpp"], models: [{ id: "tiny", engine: "llama.cpp" }] }));
  });
});
after(async () => {
  channel?.destroy();
  await stack.close();
});

async function decide(content: string): Promise<Record<string, unknown>> {
  const res = await fetch(`${stack.url}/v1/device/decide`, { method: "POST", headers: headers(), body: ask(content) });
  assert.equal(res.status, 200);
  return (await res.json()) as Record<string, unknown>;
}

test("a policy plugin's verdict decides a device's call as it decides a gateway call", async () => {
  const summary = await decide("Summarize this in one line: the cat sat on the mat all day.");
  assert.equal(summary.target, "cloud", JSON.stringify(summary));
  assert.match(String(summary.reason), /plugin:device-test:summaries_in_cloud/);
  // The plugin passes on other calls: the stack's rules decide (code goes to the cloud by rule, not by plugin).
  const code = await decide("Write a Python function that sorts a list of numbers.");
  assert.equal(code.target, "cloud");
  assert.doesNotMatch(String(code.reason), /plugin:/);
});

test("the device transport's metrics: connected devices, decisions by outcome, reconnects, ended sessions", async () => {
  const before = await stack.metric('gearbox_device_decisions_total{outcome="cloud"}');
  await decide("Summarize this in one line: a second call.");
  const bad = await fetch(`${stack.url}/v1/device/decide`, { method: "POST", headers: headers(), body: "{" });
  assert.equal(bad.status, 400);
  assert.equal(await stack.metric('gearbox_device_decisions_total{outcome="cloud"}'), before + 1);
  assert.equal(await stack.metric('gearbox_device_decisions_total{outcome="refused"}'), 1);
  assert.equal(await stack.metric('gearbox_devices_connected{tenant="shop"}'), 1);
  assert.equal(await stack.metric('gearbox_device_connects_total{kind="new"}'), 1);
  assert.equal(await stack.metric('gearbox_device_connects_total{kind="reconnect"}'), 0);
  // The same device again, resuming the policy it was given: a reconnect replacing its session.
  const welcome = await new Promise<string>((resolve, reject) => {
    const again = http.request(`${stack.url}/v1/device/connect`, { method: "POST", headers: headers() }, (res) => {
      res.setEncoding("utf8");
      res.on("data", (c: string) => c.includes("welcome") && resolve(c));
    });
    again.on("error", reject);
    after(() => again.destroy());
    const policy = { version: 1, hash: "" };
    again.end(JSON.stringify({ device_id: "dev-plugin", models: [{ id: "tiny", engine: "llama.cpp" }], policy }));
  });
  assert.match(welcome, /"session"/);
  assert.equal(await stack.metric('gearbox_device_connects_total{kind="reconnect"}'), 1);
  assert.equal(await stack.metric('gearbox_device_sessions_ended_total{reason="replaced"}'), 1);
  assert.equal(await stack.metric('gearbox_devices_connected{tenant="shop"}'), 1);
});
