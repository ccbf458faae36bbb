import { test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import tls from "node:tls";
import { createCa, issueLeaf, type KeyPair } from "../../cli/ca/authority.ts";
import { CallAbort } from "../../common/net/call-abort.ts";
import { destination, readAll, sendUpstream, warmFirst } from "./upstream-client.ts";

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
  const seen: { url?: string; headers?: http.IncomingHttpHeaders; rawHeaders?: string[]; body?: string } = {};
  const server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on("data", (c: Buffer) => parts.push(c));
    req.on("end", () => {
      Object.assign(seen, { url: req.url, headers: req.headers, rawHeaders: req.rawHeaders, body: Buffer.concat(parts).toString() });
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
    assert.equal(seen.headers?.host, `127.0.0.1:${port}`, "Host as Node writes it: the port, not the scheme's default");
    assert.equal(seen.body, "hello");
    assert.deepEqual(headers, { "x-test": "1" });
    const viaUrl = await sendUpstream(new URL(`http://127.0.0.1:${port}/v1/d?e=f`), {}, Buffer.from("x"), new AbortController().signal);
    await readAll(viaUrl);
    assert.equal(seen.url, "/v1/d?e=f");
    // A stated length is the body's, whatever the map said; a given Host is kept.
    await readAll(
      await sendUpstream(
        { secure: false, hostname: "127.0.0.1", port, path: "/" },
        { "content-length": "99", host: "api.example.test" },
        Buffer.from("abc"),
        new AbortController().signal,
      ),
    );
    assert.equal(seen.headers?.["content-length"], "3");
    assert.equal(seen.headers?.host, "api.example.test");
    assert.equal(seen.body, "abc");
    // Names are case-insensitive, as `setHeader` has them: one header per name, the last value given.
    await readAll(
      await sendUpstream(
        { secure: false, hostname: "127.0.0.1", port, path: "/" },
        { "Content-Type": "text/plain", "content-type": "application/json", Host: "api.example.test", "Content-Length": "99" },
        Buffer.from("abcd"),
        new AbortController().signal,
      ),
    );
    const raw = seen.rawHeaders ?? [];
    const named = (name: string) => raw.filter((h, i) => i % 2 === 0 && h.toLowerCase() === name).length;
    assert.deepEqual([named("content-type"), named("host"), named("content-length")], [1, 1, 1], raw.join(" | "));
    assert.equal(seen.headers?.["content-type"], "application/json");
    assert.equal(seen.headers?.host, "api.example.test");
    assert.equal(seen.headers?.["content-length"], "4");
    // Header values are validated as before: a line break is refused, nothing is sent.
    await assert.rejects(
      sendUpstream(
        { secure: false, hostname: "127.0.0.1", port, path: "/" },
        { "x-bad": "a\r\nx-injected: 1" },
        Buffer.from("x"),
        new AbortController().signal,
      ),
      {
        code: "ERR_INVALID_CHAR",
      },
    );
    assert.equal(seen.headers?.["x-injected"], undefined);
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

/** A keep-alive server that answers "ok" and counts the connections it was given. */
async function countingServer(): Promise<{ port: number; connections: () => number; server: http.Server }> {
  let connections = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => res.end("ok"));
  });
  server.on("connection", () => connections++);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { port: (server.address() as AddressInfo).port, connections: () => connections, server };
}

test("sendUpstream: calls one after another take the idle connection; one the server closed while idle is not taken", async () => {
  const { port, connections, server } = await countingServer();
  const to = { secure: false, hostname: "127.0.0.1", port, path: "/" };
  try {
    for (let i = 0; i < 5; i++) assert.equal((await readAll(await sendUpstream(to, {}, Buffer.from("x"), new AbortController().signal))).toString(), "ok");
    assert.equal(connections(), 1);
    const closed = new Promise((resolve) => server.once("connection", resolve));
    server.closeIdleConnections();
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal((await readAll(await sendUpstream(to, {}, Buffer.from("x"), new AbortController().signal))).toString(), "ok");
    await closed;
    assert.equal(connections(), 2);
    // Calls in flight together each hold a connection, and give them back for the next ones.
    const together = () => Promise.all([1, 2, 3].map(() => sendUpstream(to, {}, Buffer.from("x"), new AbortController().signal).then(readAll)));
    await together();
    await together();
    assert.equal(connections(), 4);
  } finally {
    server.closeAllConnections();
    server.close();
  }
});

test("warmFirst: a warm TLS connection is taken only by calls for the same server name", { timeout: 20_000 }, async () => {
  const ca = createCa({ hosts: ["one.gearbox.test", "two.gearbox.test"], days: 1 });
  const contexts = new Map(["one", "two"].map((n) => [`${n}.gearbox.test`, tls.createSecureContext(leafOf(ca, `${n}.gearbox.test`))]));
  const names: string[] = [];
  const server = https.createServer({ ...leafOf(ca, "one.gearbox.test"), SNICallback: (name, cb) => cb(null, contexts.get(name)) }, (req, res) => {
    req.resume();
    req.on("end", () => res.end((req.socket as tls.TLSSocket).servername || "none"));
  });
  server.on("secureConnection", (socket: tls.TLSSocket) => names.push(String(socket.servername)));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const agent = warmFirst(new https.Agent({ keepAlive: true }));
  const call = (servername: string) =>
    new Promise<string>((resolve, reject) => {
      const req = https.request({ host: "127.0.0.1", port, method: "POST", agent, servername, ca: ca.certPem }, (res) => {
        readAll(res).then((b) => resolve(b.toString()), reject);
      });
      req.on("error", reject);
      req.end("x");
    });
  try {
    assert.deepEqual(
      [await call("one.gearbox.test"), await call("one.gearbox.test"), await call("two.gearbox.test"), await call("one.gearbox.test")],
      ["one.gearbox.test", "one.gearbox.test", "two.gearbox.test", "one.gearbox.test"],
    );
    assert.deepEqual(names, ["one.gearbox.test", "two.gearbox.test"], "one handshake per server name");
  } finally {
    agent.destroy();
    server.closeAllConnections();
    server.close();
  }
});

function leafOf(ca: KeyPair, host: string): { cert: string; key: string } {
  const leaf = issueLeaf(ca, { host, hours: 1 });
  return { cert: leaf.certPem, key: leaf.keyPem };
}
