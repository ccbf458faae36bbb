/**
 * What only Anthropic can serve: the request still parses (routing, governance and the cache need
 * it), the Anthropic-only fields are listed by path, and the strict form refuses the first one.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { parseAnthropicMessages, parseAnthropicMessagesRequest } from "./anthropic-messages-request.ts";

const base = { model: "claude-sonnet-4-5", max_tokens: 256 };

const CASES: { name: string; body: Record<string, unknown>; params: string[] }[] = [
  {
    name: "server tools beside a custom tool",
    body: {
      ...base,
      messages: [{ role: "user", content: "Search." }],
      tools: [
        { type: "web_search_20250305", name: "web_search", max_uses: 2 },
        { name: "weather", input_schema: { type: "object" } },
        { type: "code_execution_20250825", name: "code_execution" },
      ],
    },
    params: ["tools[0].type", "tools[2].type"],
  },
  {
    name: "server_tool_use and its result in the history",
    body: {
      ...base,
      messages: [
        { role: "user", content: "Run it." },
        {
          role: "assistant",
          content: [
            { type: "server_tool_use", id: "srvtoolu_1", name: "code_execution", input: { code: "1+1" } },
            { type: "code_execution_tool_result", tool_use_id: "srvtoolu_1", content: { type: "code_execution_result", stdout: "2" } },
            { type: "text", text: "2" },
          ],
        },
        { role: "user", content: "Thanks." },
      ],
    },
    params: ["messages[1].content[0].type", "messages[1].content[1].type"],
  },
  {
    name: "tool_reference inside a tool_result, compaction and mcp_tool_use blocks",
    body: {
      ...base,
      messages: [
        { role: "user", content: "Find a tool." },
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "search", input: {} }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: [{ type: "tool_reference", tool_name: "weather" }] }] },
        {
          role: "assistant",
          content: [
            { type: "compaction", content: "summary" },
            { type: "mcp_tool_use", id: "m1", name: "x", server_name: "s", input: {} },
          ],
        },
      ],
    },
    params: ["messages[2].content[0].content[0].type", "messages[3].content[0].type", "messages[3].content[1].type"],
  },
  {
    name: "a system-role turn with a non-text block, a PDF by URL, mcp_servers",
    body: {
      ...base,
      mcp_servers: [{ type: "url", url: "https://mcp.example", name: "ex" }],
      messages: [
        { role: "system", content: [{ type: "tool_addition", tools: [] }] },
        {
          role: "user",
          content: [
            { type: "document", source: { type: "url", url: "https://example.com/a.pdf" } },
            { type: "text", text: "Sum up." },
          ],
        },
      ],
    },
    params: ["messages[0].content[0].type", "messages[1].content[0].source.type", "mcp_servers"],
  },
];

for (const c of CASES) {
  test(`Anthropic-only: ${c.name}`, () => {
    const parsed = parseAnthropicMessages(c.body);
    assert.ok(parsed.ok, JSON.stringify(!parsed.ok && parsed.errors));
    assert.deepEqual(
      parsed.value.anthropicOnly.map((f) => f.param),
      c.params,
    );
    for (const f of parsed.value.anthropicOnly) assert.match(f.message, new RegExp(`^'${f.param.replace(/[[\].]/g, "\\$&")}' .*Anthropic`));
    const strict = parseAnthropicMessagesRequest(c.body);
    assert.ok(!strict.ok);
    assert.equal(strict.errors[0]?.param, c.params[0]);
  });
}

test("Anthropic-only parts are left out of the canonical request; the rest is kept", () => {
  const parsed = parseAnthropicMessages(CASES[0]?.body);
  assert.ok(parsed.ok);
  assert.deepEqual(
    parsed.value.request.tools?.map((t) => t.name),
    ["weather"],
  );
  const history = parseAnthropicMessages(CASES[1]?.body);
  assert.ok(history.ok);
  assert.deepEqual(history.value.request.messages[1], { role: "assistant", content: [{ type: "text", text: "2" }] });
});

test("a plain request has no Anthropic-only field", () => {
  const parsed = parseAnthropicMessages({ ...base, messages: [{ role: "user", content: "Hi" }] });
  assert.ok(parsed.ok);
  assert.deepEqual(parsed.value.anthropicOnly, []);
});
