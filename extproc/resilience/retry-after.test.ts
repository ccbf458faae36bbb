import assert from "node:assert/strict";
import { test } from "node:test";
import { retryAfterMs } from "./retry-after.ts";

test("retry-after in seconds, as an HTTP date, and OpenAI's retry-after-ms", () => {
  const now = Date.parse("Wed, 21 Oct 2015 07:28:00 GMT");
  assert.equal(retryAfterMs({ "retry-after": "7" }, now), 7000);
  assert.equal(retryAfterMs({ "retry-after": " 0 " }, now), 0);
  assert.equal(retryAfterMs({ "retry-after": "Wed, 21 Oct 2015 07:28:03 GMT" }, now), 3000);
  assert.equal(retryAfterMs({ "retry-after": "Wed, 21 Oct 2015 07:27:00 GMT" }, now), 0, "a date in the past: no wait");
  assert.equal(retryAfterMs({ "retry-after-ms": "250.5", "retry-after": "9" }, now), 251, "the precise header wins");
});

test("anything else says nothing", () => {
  for (const value of ["", "soon", "-3", "1.5", "2015-10-21T07:28:03Z"]) assert.equal(retryAfterMs({ "retry-after": value }), undefined, value);
  assert.equal(retryAfterMs({}), undefined);
});
