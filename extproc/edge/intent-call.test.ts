/** The edge intent call: never throws, and carries the request's id and trace context to the agent (a local HTTP stand-in). */
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";
import { classifyOnEdge } from "./intent-call.ts";

test("classifyOnEdge never throws: an unreachable agent is a failure result", async () => {
  const result = await classifyOnEdge([{ role: "user", content: "hi there friend" }], { address: "127.0.0.1:1", model: "m", timeoutMs: 500 });
  assert.equal(result.kind, "failed");
});

test("the labelling call carries the request's id and trace context to the agent", async () => {
  const headers: http.IncomingHttpHeaders[] = [];
  const server = http.createServer((req, res) => {
    headers.push(req.headers);
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "application/json", "x-gearbox-confidence": "0.9" });
      res.end(
        JSON.stringify({
          id: "x",
          object: "chat.completion",
          created: 1,
          model: "m",
          choices: [{ index: 0, message: { role: "assistant", content: "math" }, finish_reason: "stop" }],
        }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  try {
    const traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    const result = await classifyOnEdge([{ role: "user", content: "2+2?" }], {
      address: `127.0.0.1:${(server.address() as AddressInfo).port}`,
      model: "m",
      timeoutMs: 2000,
      requestId: "req-1",
      headers: { traceparent },
    });
    assert.equal(result.kind, "label");
    assert.equal(headers[0]?.traceparent, traceparent);
    assert.equal(headers[0]?.["x-request-id"], "req-1");
  } finally {
    server.closeAllConnections();
    server.close();
  }
});
