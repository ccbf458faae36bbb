import assert from "node:assert/strict";
import { test } from "node:test";
import { firstEventEnd } from "./stream-relay.ts";

test("firstEventEnd: just past the first event's blank line, LF or CRLF, when another event follows", () => {
  const two = Buffer.from('data: {"a":1}\n\ndata: {"b":2}\n\n');
  assert.equal(firstEventEnd(two), 'data: {"a":1}\n\n'.length);
  const crlf = Buffer.from('data: {"a":1}\r\n\r\ndata: {"b":2}\r\n\r\n');
  assert.equal(firstEventEnd(crlf), 'data: {"a":1}\r\n\r\n'.length);
  const named = Buffer.from("event: message_start\ndata: {}\n\nevent: ping\ndata: {}\n\n");
  assert.equal(firstEventEnd(named), "event: message_start\ndata: {}\n\n".length);
  // Whichever blank line comes first wins.
  assert.equal(firstEventEnd(Buffer.from("data: 1\r\n\r\ndata: 2\n\ndata: 3\n\n")), "data: 1\r\n\r\n".length);
  // Part of a second event after the first still splits: the decoder keeps the partial line.
  assert.equal(firstEventEnd(Buffer.from('data: 1\n\ndata: {"par')), "data: 1\n\n".length);
});

test("firstEventEnd: -1 when the chunk holds one event or less (nothing to send ahead)", () => {
  assert.equal(firstEventEnd(Buffer.from('data: {"a":1}\n\n')), -1);
  assert.equal(firstEventEnd(Buffer.from('data: {"a":1}\r\n\r\n')), -1);
  assert.equal(firstEventEnd(Buffer.from('data: {"par')), -1);
  assert.equal(firstEventEnd(Buffer.from('{"model":"m","response":"a"}\n{"model":"m","response":"b"}\n')), -1); // NDJSON: no blank lines
  assert.equal(firstEventEnd(Buffer.alloc(0)), -1);
});
