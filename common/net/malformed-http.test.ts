import assert from "node:assert/strict";
import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, test } from "node:test";
import { rawExchange } from "../../test/support/raw-http.ts";
import { answerMalformedHttp } from "./malformed-http.ts";

let server: http.Server;
let port: number;
before(async () => {
  server = http.createServer((_req, res) => res.end("ok"));
  answerMalformedHttp(server);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  port = (server.address() as AddressInfo).port;
});
after(() => server.close());

const raw = (bytes: string): Promise<string> => rawExchange(port, bytes);

function parsed(text: string): { status: number; headers: string; json: { error: { message: string; type: string; param: null; code: string } } } {
  const [head = "", body = ""] = text.split("\r\n\r\n");
  return { status: Number(head.split(" ")[1]), headers: head.toLowerCase(), json: JSON.parse(body) as never };
}

const cases: [string, string, number, string, RegExp][] = [
  ["a request line that is not HTTP", "GARBAGE\r\n\r\n", 400, "malformed_http", /^The request is not valid HTTP\/1\.1: .+\.$/],
  [
    "content-length beside transfer-encoding (request smuggling)",
    "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\nhello",
    400,
    "malformed_http",
    /(Transfer-Encoding|Content-Length) can't be present with (Content-Length|Transfer-Encoding)/,
  ],
  [
    "headers over Node's limit",
    `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(http.maxHeaderSize + 1)}\r\n\r\n`,
    431,
    "headers_too_large",
    new RegExp(`limit of ${http.maxHeaderSize} bytes`),
  ],
];

for (const [name, bytes, status, code, message] of cases) {
  test(`${name}: ${status} ${code} as a JSON body in OpenAI's schema, and the connection closed`, async () => {
    const answer = parsed(await raw(bytes));
    assert.equal(answer.status, status);
    assert.match(answer.headers, /content-type: application\/json/);
    assert.match(answer.headers, /connection: close/);
    assert.equal(answer.json.error.type, "invalid_request_error");
    assert.equal(answer.json.error.code, code);
    assert.equal(answer.json.error.param, null);
    assert.match(answer.json.error.message, message);
    assert.doesNotMatch(answer.json.error.message, /aaaa|hello/, "nothing of the request is quoted");
  });
}

test("after a served request on the same connection, the malformed one is still answered; the server keeps serving", async () => {
  const text = await raw("GET / HTTP/1.1\r\nHost: x\r\n\r\nGARBAGE\r\n\r\n");
  assert.match(text, /^HTTP\/1\.1 200 OK[\s\S]*\r\n\r\nok/);
  assert.match(text, /HTTP\/1\.1 400 Bad Request[\s\S]*"code":"malformed_http"/);
  const res = await fetch(`http://127.0.0.1:${port}/`);
  assert.equal(await res.text(), "ok");
});
