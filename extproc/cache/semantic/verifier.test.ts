/**
 * Edge verification. The REAL edge agent on the generated tiny GGUF model takes the request
 * (greedy, one token, logprobs) and the verifier reads its answer as it reads any; the tiny
 * model's random weights never judge paraphrases, so yes / no / garbage / slow answers come from
 * a local stand-in that answers as the agent does.
 */
import { startTinyEdgeAgent, type TinyEdgeAgent } from "../../../test/support/tiny-edge-agent.ts";
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { testConfig } from "../../../test/support/gateway.ts";
import { EdgeAgents } from "../../edge/agents.ts";
import { EdgeVerifier, readVerdict, verificationRequest } from "./verifier.ts";

const agents = (address: string) => new EdgeAgents(testConfig(`edge:\n  agents: [{ address: '${address}', models: [tiny] }]\n`).edge);

describe("verification on the real edge agent", () => {
  let agent: TinyEdgeAgent;
  before(async () => {
    agent = await startTinyEdgeAgent({ contextLength: 1024 });
  });
  after(async () => {
    await agent.close();
  });

  test("the agent takes the request: one token with its top logprobs, read as the verifier reads it", async () => {
    const body = verificationRequest("How is the weather today?", "What is the weather today?", "tiny");
    const res = await fetch(`http://127.0.0.1:${agent.port}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    assert.equal(res.status, 200);
    const json = (await res.json()) as { choices: { logprobs: { content: { top_logprobs: unknown[] }[] } }[]; usage: { completion_tokens: number } };
    assert.equal(json.usage.completion_tokens, 1);
    assert.equal(json.choices[0]?.logprobs.content.length, 1);
    assert.equal(json.choices[0]?.logprobs.content[0]?.top_logprobs.length, 5);
    const expected = readVerdict(json, undefined);
    const verdict = await new EdgeVerifier({ address: agents(`127.0.0.1:${agent.port}`), model: "tiny", timeoutMs: 10_000, minConfidence: 0 }).verify(
      "How is the weather today?",
      "What is the weather today?",
    );
    assert.deepEqual(verdict, expected, "greedy: the same answer, the same verdict");
    // Random weights answer a byte, not a word: no verdict, so no reuse.
    assert.equal(verdict.kind, "failed");
    assert.match(verdict.kind === "failed" ? verdict.reason : "", /^no_verdict:/);
  });
});

/** A stand-in agent: answers `content` with a first-token logprob, or an error, or hangs. */
async function standIn(answer: { content?: string; logprob?: number; top?: [string, number][]; status?: number; hang?: boolean; confidence?: number }) {
  const seen: Record<string, unknown>[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      seen.push(JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>);
      if (answer.hang) return;
      const content = answer.content ?? "";
      const logprobs =
        answer.logprob === undefined
          ? null
          : {
              content: [
                {
                  token: content,
                  logprob: answer.logprob,
                  bytes: [],
                  top_logprobs: (answer.top ?? []).map(([token, logprob]) => ({ token, logprob, bytes: [] })),
                },
              ],
              refusal: null,
            };
      res.writeHead(answer.status ?? 200, {
        "content-type": "application/json",
        ...(answer.confidence !== undefined && { "x-gearbox-confidence": String(answer.confidence) }),
      });
      res.end(
        JSON.stringify({
          id: "x",
          object: "chat.completion",
          created: 1,
          model: "tiny",
          choices: [{ index: 0, message: { role: "assistant", content }, logprobs, finish_reason: "length" }],
        }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const address = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    address,
    seen,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

test("yes / no / garbage / low confidence / errors / timeout", async () => {
  const cases: [Parameters<typeof standIn>[0], string][] = [
    [{ content: "Yes", logprob: Math.log(0.9) }, "same@0.900"],
    [
      {
        content: "yes",
        logprob: Math.log(0.6),
        top: [
          ["yes", Math.log(0.6)],
          [" Yes", Math.log(0.3)],
          ["no", Math.log(0.1)],
        ],
      },
      "same@0.900",
    ],
    [{ content: "是", logprob: Math.log(0.95) }, "same@0.950"],
    [{ content: "Yes", logprob: Math.log(0.55) }, "different"],
    [{ content: "No", logprob: Math.log(0.8) }, "different"],
    [{ content: "不", logprob: Math.log(0.8) }, "different"],
    [{ content: "Yes", confidence: 0.91 }, "same@0.910"],
    [{ content: "Yes" }, "failed:unscored"],
    [{ content: "Maybe", logprob: -0.1 }, "failed:no_verdict"],
    [{ content: "", logprob: -0.1 }, "failed:no_verdict"],
    [{ status: 503 }, "failed:edge_status:503"],
    [{ hang: true }, "failed:timeout"],
  ];
  for (const [answer, expected] of cases) {
    const s = await standIn(answer);
    try {
      const verdict = await new EdgeVerifier({ address: agents(s.address), model: "tiny", timeoutMs: 150, minConfidence: 0.7 }).verify(
        "How is the weather today?",
        "What is the weather today?",
      );
      const got = verdict.kind === "same" ? `same@${verdict.confidence.toFixed(3)}` : verdict.kind === "failed" ? `failed:${verdict.reason}` : verdict.kind;
      assert.ok(got.startsWith(expected), `${JSON.stringify(answer)} → ${got}, expected ${expected}`);
      if (!answer.hang && answer.status === undefined) {
        const sent = s.seen[0];
        assert.deepEqual([sent?.model, sent?.max_tokens, sent?.temperature, sent?.logprobs], ["tiny", 1, 0, true]);
        assert.match(JSON.stringify(sent?.messages), /What is the weather today\?.*How is the weather today\?/);
      }
    } finally {
      await s.close();
    }
  }
});

test("no agent serves the model, or the agent is unreachable: not verified", async () => {
  assert.deepEqual(await new EdgeVerifier({ address: agents("127.0.0.1:1"), model: "other", timeoutMs: 100, minConfidence: 0.5 }).verify("a", "b"), {
    kind: "failed",
    reason: "no_agent",
  });
  const unreachable = await new EdgeVerifier({ address: agents("127.0.0.1:1"), model: "tiny", timeoutMs: 1000, minConfidence: 0.5 }).verify("a", "b");
  assert.equal(unreachable.kind, "failed");
  assert.match(unreachable.kind === "failed" ? unreachable.reason : "", /^error:/);
});

test("long questions are cut", () => {
  const body = verificationRequest("q".repeat(5000), "c".repeat(5000), "m");
  assert.ok(JSON.stringify(body).length < 2000);
});
