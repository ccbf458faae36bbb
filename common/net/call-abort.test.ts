import { test } from "node:test";
import assert from "node:assert/strict";
import { CallAbort } from "./call-abort.ts";

test("CallAbort: listeners run once, in order; a removed one does not; the first reason wins", () => {
  const abort = new CallAbort();
  const ran: string[] = [];
  const a = () => ran.push("a");
  const b = () => ran.push("b");
  const c = () => ran.push("c");
  abort.addEventListener("abort", a);
  abort.addEventListener("abort", b);
  abort.addEventListener("abort", c);
  abort.removeEventListener("abort", b);
  assert.equal(abort.aborted, false);
  const first = new Error("client disconnected");
  abort.abort(first);
  abort.abort(new Error("later"));
  assert.deepEqual(ran, ["a", "c"]);
  assert.equal(abort.aborted, true);
  assert.equal(abort.reason, first);
  abort.addEventListener("abort", a);
  abort.abort(new Error("again"));
  assert.deepEqual(ran, ["a", "c"], "as an AbortSignal: a listener added after the abort is not called");
});
