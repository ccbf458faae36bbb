/**
 * The Python SDK tests' gateway side, driven over stdin/stdout (one JSON line each way): the real
 * `gearbox extproc` process, its Redis, the cloud emulator and the real edge agent on the tiny
 * model standing in for the device's llama.cpp server (`test/support/device-stack.ts`).
 *
 *   first line out: {url, admin_url, admin_key, call_key, call_key_id, agent_url, cloud_text}
 *   in: {"cmd":"restart","threshold":0.999} | {"cmd":"stop"} | {"cmd":"records","device":"d"} | {"cmd":"cloud_requests"} | {"cmd":"quit"}
 */
import { createInterface } from "node:readline";
import { loadJsonFixture } from "../../../test/emulators/fixtures.ts";
import { startDeviceStack } from "../../../test/support/device-stack.ts";

const stack = await startDeviceStack({ threshold: 0, withAgent: true });
const cloudText = (loadJsonFixture("vercel-ai/openai/openai-text") as { choices: { message: { content: string } }[] }).choices[0]?.message.content;
const out = (value: unknown) => process.stdout.write(`${JSON.stringify(value)}\n`);
out({
  url: stack.url,
  admin_url: stack.adminUrl,
  admin_key: stack.adminKey,
  call_key: stack.callKey,
  call_key_id: stack.callKeyId,
  agent_url: `http://${stack.agent?.address ?? ""}`,
  cloud_text: cloudText,
});

for await (const line of createInterface({ input: process.stdin })) {
  const msg = JSON.parse(line) as { cmd: string; threshold?: number; device?: string };
  try {
    if (msg.cmd === "restart") await stack.restart(msg.threshold);
    else if (msg.cmd === "stop") await stack.gateway.stop();
    else if (msg.cmd === "records")
      out(stack.gateway.logs.filter((l) => (l.cascade as { edge_agent?: string } | undefined)?.edge_agent === `device:shop/${msg.device ?? ""}`));
    else if (msg.cmd === "cloud_requests") out(stack.cloud.requests.length);
    else if (msg.cmd === "quit") break;
    if (msg.cmd === "restart" || msg.cmd === "stop") out({ ok: true });
  } catch (err) {
    out({ ok: false, error: String(err) });
  }
}
await stack.close();
process.exit(0);
