/**
 * Runaway protection in the processor, phases driven as a transport would (memory stores, the
 * upstream's answer handed in): which answers are recorded for replay, and that a replay only
 * ever goes to the caller that got the answer, also when the count is by tenant.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { parseConfigText, resolveConfig, type GatewayConfig } from "../config/load.ts";
import { createAuthDeps } from "../governance/auth.ts";
import { Governor } from "../governance/governor.ts";
import { MemoryLimiter } from "../store/memory-limiter.ts";
import { MemoryTenantStore } from "../store/memory-tenant-store.ts";
import { silentLogger } from "../../common/telemetry/logger.ts";
import type { Outcome } from "./outcome.ts";
import { RequestProcessor, type ProcessorDeps } from "./processor.ts";
import { Runtime } from "../runtime/runtime.ts";

const COMPLETION = JSON.stringify({
  id: "chatcmpl-1",
  object: "chat.completion",
  created: 1,
  model: "gpt-4o",
  choices: [{ index: 0, message: { role: "assistant", content: "Welcome!" }, finish_reason: "stop" }],
});
const SSE =
  'data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}\n\ndata: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n';
const SSE_ERROR =
  'data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}\n\ndata: {"error":{"message":"overloaded","type":"server_error"}}\n\n';

function setup(runaway: string): { deps: ProcessorDeps; governor: Governor } {
  const raw = parseConfigText(
    `providers:\n  - { name: openai, kind: openai, base_url: 'https://api.openai.com/v1', api_key_env: K }\nrunaway: ${runaway}\n`,
    "t.yaml",
  );
  assert.ok(raw.ok, raw.ok ? "" : raw.errors.join());
  const resolved = resolveConfig(raw.value, { K: "sk" }, "t.yaml");
  assert.ok(resolved.ok);
  const config: GatewayConfig = resolved.value;
  const governor = new Governor({ store: new MemoryLimiter(), runaway: config.runaway, logger: silentLogger() });
  return {
    deps: { runtime: new Runtime(config), logger: silentLogger(), governance: { auth: createAuthDeps(config, new MemoryTenantStore(), {}), governor } },
    governor,
  };
}

interface Upstream {
  status: number;
  contentType: string;
  body: string;
}

/** One request from `address`; when it goes upstream, `upstream` answers. What the client got. */
async function call(
  deps: ProcessorDeps,
  address: string,
  upstream: Upstream,
  stream = false,
): Promise<{ status: number; route: string | undefined; reason: string | undefined; body: string; sent: boolean }> {
  const p = new RequestProcessor(deps, { transport: "front_door" });
  p.requestHeaders({ ":method": "POST", ":path": "/v1/chat/completions", "content-type": "application/json" }, false, { address });
  const decided: Outcome = await p.requestBody(
    Buffer.from(JSON.stringify({ model: "gpt-4o", messages: [{ role: "user", content: "Write a short welcome message." }], ...(stream && { stream: true }) })),
  );
  if (decided.kind === "respond") {
    const r = decided.response;
    return { status: r.status, route: r.headers["x-gearbox-route"], reason: r.headers["x-gearbox-reason"], body: r.body.toString(), sent: false };
  }
  const headers = { ":status": String(upstream.status), "content-type": upstream.contentType };
  const head = p.responseHeaders(headers, false);
  const set = head.kind === "continue" ? head.mutation?.setHeaders : undefined;
  const out = await p.responseBody(Buffer.from(upstream.body), true);
  const body = out.kind === "continue" ? (out.mutation?.body?.toString() ?? upstream.body) : out.response.body.toString();
  return { status: upstream.status, route: set?.["x-gearbox-route"], reason: set?.["x-gearbox-reason"], body, sent: true };
}

const OK: Upstream = { status: 200, contentType: "application/json", body: COMPLETION };

test("by caller: past max_identical, the caller gets its last answer; another caller is counted on its own", async () => {
  const { deps, governor } = setup("{ max_identical: 2 }");
  const first = [await call(deps, "10.0.0.1", OK), await call(deps, "10.0.0.1", OK), await call(deps, "10.0.0.1", OK)];
  assert.deepEqual(
    first.map((r) => r.sent),
    [true, true, false],
  );
  assert.deepEqual([first[2]?.status, first[2]?.route, first[2]?.reason, first[2]?.body], [200, "cache", "runaway_repeat", COMPLETION]);
  const other = [await call(deps, "10.0.0.2", OK), await call(deps, "10.0.0.2", OK)];
  assert.deepEqual(
    other.map((r) => r.sent),
    [true, true],
  );
  governor.close();
});

test("by tenant: the count is the tenant's, but a replay only ever goes to the caller that got the answer", async () => {
  const { deps, governor } = setup("{ max_identical: 2, key: tenant }");
  const a1 = await call(deps, "10.0.0.1", OK);
  const a2 = await call(deps, "10.0.0.1", OK);
  assert.ok(a1.sent && a2.sent);
  const b = await call(deps, "10.0.0.2", OK);
  assert.equal(b.sent, false);
  assert.equal(b.status, 429, "10.0.0.2 never got an answer: it is refused, not given 10.0.0.1's");
  const a3 = await call(deps, "10.0.0.1", OK);
  assert.deepEqual([a3.status, a3.reason, a3.body], [200, "runaway_repeat", COMPLETION]);
  governor.close();
});

test("only a clean 200 is replayed: an upstream error, or a stream carrying an error event, leaves the repeats refused", async () => {
  const { deps, governor } = setup("{ max_identical: 1 }");
  await call(deps, "10.0.0.1", { status: 500, contentType: "application/json", body: '{"error":{"message":"boom","type":"server_error"}}' });
  assert.equal((await call(deps, "10.0.0.1", OK)).status, 429);
  const streamed = await call(deps, "10.0.0.3", { status: 200, contentType: "text/event-stream", body: SSE_ERROR }, true);
  assert.ok(streamed.sent);
  assert.equal((await call(deps, "10.0.0.3", OK, true)).status, 429);
  const clean = await call(deps, "10.0.0.4", { status: 200, contentType: "text/event-stream", body: SSE }, true);
  const replay = await call(deps, "10.0.0.4", OK, true);
  assert.deepEqual([replay.status, replay.reason, replay.body], [200, "runaway_repeat", clean.body]);
  assert.equal((await call(deps, "10.0.0.4", OK)).sent, true, "the same prompt not streamed is another request");
  governor.close();
});

test("runaway.replay: false refuses as before", async () => {
  const { deps, governor } = setup("{ max_identical: 1, replay: false }");
  assert.ok((await call(deps, "10.0.0.1", OK)).sent);
  assert.equal((await call(deps, "10.0.0.1", OK)).status, 429);
  assert.equal(governor.replays, undefined);
  governor.close();
});
