import { test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { CallAbort } from "../../common/net/call-abort.ts";
import { destination, readAll, sendUpstream } from "./upstream-client.ts";

test("destination: default ports by scheme, IPv6 brackets dropped, the path kept as given", () => {
  assert.deepEqual(destination(new URL("https://api.openai.com/v1"), "/v1/chat/completions?x=1"), {
    secure: true,
    hostname: "api.openai.com",
    port: 443,
    path: "/v1/chat/completions?x=1",
  });
  assert.deepEqual(destination(new URL("http://[::1]:8080"), "/v1/models"), { secure: false, hostname: "::1", port: 8080, path: "/v1/models" });
  assert.equal(destination(new URL("http://example.test"), "/").port, 80);
});

test("sendUpstream: the path, the headers with the body's length, and the body reach the server; the caller's map is not changed", async () => {
  const seen: { url?: string; headers?: http.IncomingHttpHeaders; body?: string } = {};
  const server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on("data", (c: Buffer) => parts.push(c));
    req.on("end", () => {
      Object.assign(seen, { url: req.url, headers: req.headers, body: Buffer.concat(parts).toString() });
      res.end("ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  try {
    const headers = { "x-test": "1" };
    const res = await sendUpstream(
      { secure: false, hostname: "127.0.0.1", port, path: "/v1/a?b=c" },
      headers,
      Buffer.from("hello"),
      new AbortController().signal,
    );
    assert.equal((await readAll(res)).toString(), "ok");
    assert.equal(seen.url, "/v1/a?b=c");
    assert.equal(seen.headers?.["x-test"], "1");
    assert.equal(seen.headers?.["content-length"], "5");
    assert.equal(seen.body, "hello");
    assert.deepEqual(headers, { "x-test": "1" });
    const viaUrl = await sendUpstream(new URL(`http://127.0.0.1:${port}/v1/d?e=f`), {}, Buffer.from("x"), new AbortController().signal);
    await readAll(viaUrl);
    assert.equal(seen.url, "/v1/d?e=f");
  } finally {
    server.close();
  }
});

test("sendUpstream: a CallAbort aborted while the server holds the answer destroys the call with its reason", async () => {
  let arrived!: () => void;
  const reached = new Promise<void>((resolve) => (arrived = resolve));
  const server = http.createServer(() => arrived());
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  try {
    const abort = new CallAbort();
    const call = sendUpstream({ secure: false, hostname: "127.0.0.1", port, path: "/" }, {}, Buffer.from("x"), abort);
    await reached;
    const reason = new Error("client disconnected");
    abort.abort(reason);
    await assert.rejects(call, (err) => err === reason);
    await assert.rejects(
      sendUpstream({ secure: false, hostname: "127.0.0.1", port, path: "/" }, {}, Buffer.from("x"), abort),
      (err) => err === reason,
      "already aborted: not sent",
    );
  } finally {
    server.closeAllConnections();
    server.close();
  }
});
