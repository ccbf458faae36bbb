import assert from "node:assert/strict";
import { test } from "node:test";
import { AttemptLog, transitions } from "./attempt-log.ts";

test("the header lists each attempt with its cause, the one that answered last and bare", () => {
  const log = new AttemptLog();
  assert.equal(log.header(), undefined);
  log.answered("openai");
  assert.equal(log.header(), undefined, "nothing failed: no header");
  const failover = new AttemptLog();
  failover.failed("openai", "429");
  failover.failed("openai", "503");
  failover.failed("deepseek", "breaker_open");
  failover.answered("anthropic");
  assert.equal(failover.header(), "openai:429>openai:503>deepseek:breaker_open>anthropic");
  assert.equal(failover.calls(), 3, "the open breaker's provider was not called");
  assert.deepEqual(transitions(failover.attempts), {
    retries: [{ provider: "openai", cause: "429" }],
    fallbacks: [
      { from: "openai", to: "deepseek", cause: "503" },
      { from: "deepseek", to: "anthropic", cause: "breaker_open" },
    ],
  });
});
