import assert from "node:assert/strict";
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, test } from "node:test";
import { GatewayError } from "../../common/errors.ts";
import { plainProvider, type Provider } from "../providers/provider.ts";
import { callProvider } from "./provider-call.ts";

/** What the test server does with the next request. */
let behave: (res: ServerResponse) => void = (res) => res.end("ok");
let server: Server;
let base: URL;
const open: ServerResponse[] = [];

before(async () => {
  server = createServer((req, res) => {
    open.push(res);
    req.resume();
    req.on("end", () => behave(res));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`);
});
after(async () => {
  for (const res of open) res.destroy();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function provider(timeouts: Partial<NonNullable<Provider["timeouts"]>>, url = base): Provider {
  const t = { connectMs: 1000, firstByteMs: 5000, idleMs: 5000, totalMs: 10_000, ...timeouts };
  return plainProvider({ name: "p", kind: "openai", baseUrl: url, timeoutMs: t.totalMs, timeouts: t });
}

async function timedOut(p: Provider): Promise<string> {
  try {
    await callProvider(p, new URL("/v1/chat/completions", p.baseUrl), {}, Buffer.from("{}"));
  } catch (err) {
    assert.ok(err instanceof GatewayError, String(err));
    assert.equal(err.code, "upstream_timeout");
    assert.equal(err.status, 504);
    return err.message;
  }
  throw new Error("the call did not fail");
}

test("a whole answer is read, status and headers included", async () => {
  behave = (res) => {
    res.writeHead(201, { "x-a": "1" });
    res.end("hello");
  };
  const answer = await callProvider(provider({}), new URL("/v1/x", base), {}, Buffer.alloc(0));
  assert.equal(answer.status, 201);
  assert.equal(answer.headers["x-a"], "1");
  assert.equal(answer.body.toString(), "hello");
});

test("no answer within first_byte_ms", async () => {
  behave = () => undefined;
  assert.match(await timedOut(provider({ firstByteMs: 100 })), /'p' sent no answer within 100 ms/);
});

test("headers, then silence past idle_ms (a provider that hangs after headers)", async () => {
  behave = (res) => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.write("data: {}\n\n");
  };
  assert.match(await timedOut(provider({ idleMs: 100 })), /'p' sent nothing more within 100 ms/);
});

test("bytes dripping under idle_ms but past total_ms", async () => {
  behave = (res) => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    const drip = setInterval(() => (res.destroyed ? clearInterval(drip) : res.write(": drip\n\n")), 20);
  };
  assert.match(await timedOut(provider({ idleMs: 1000, totalMs: 200, firstByteMs: 200 })), /'p' did not finish within 200 ms/);
});

test("a connection refused is the connection's error, not a timeout", async () => {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const port = (probe.address() as AddressInfo).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  await assert.rejects(
    callProvider(provider({}, new URL(`http://127.0.0.1:${port}/v1`)), new URL(`http://127.0.0.1:${port}/v1/x`), {}, Buffer.alloc(0)),
    (err: unknown) => !(err instanceof GatewayError) && /ECONNREFUSED/.test(String(err)),
  );
});
